//! `plies dataset build | verify | stats`: filters with exact counts,
//! labels and heights, folds, determinism across thread counts, bad records,
//! every encoder family, and crash safety (kill mid-write, corrupt shard).
//!
//! | module | subject |
//! | --- | --- |
//! | `records` | hand-made and random game records, written as JSONL |
//! | `report` | running `plies dataset build` and reading its report |
//! | `filters` | filters with exact counts, labels and heights, a byte-order mark |
//! | `output` | the same shards whatever the thread count; folds |
//! | `bad_records` | bad records and duplicate ids, named by file and line |
//! | `encoders` | every encoder family through the same command |
//! | `interrupted` | a killed build, a half-written dataset, a corrupt shard |
//! | `arimaa` | the Arimaa archive with the study's filters |

#[path = "../common/mod.rs"]
mod common;

mod arimaa;
mod bad_records;
mod encoders;
mod filters;
mod interrupted;
mod output;
mod records;
mod report;
