//! The output folder, claimed for the whole run, and the settings stored
//! in it on the first start ([`claim_out`]).
//!
//! Only the database's settings are fingerprinted (`OUT/db/settings.json`):
//! a chunk file says which games it holds but not how they were played, so
//! a rerun with another seed, board, players, opening, ply limit or chunk
//! size would mix games of two settings without noticing. The good and
//! simple players are among them because they adjudicate cut games. Every
//! later stage keys its own files (the dataset by the records' bytes, each
//! network run by its settings and data, each value network by the
//! trainer's arguments, each equity cell by what it plays), so a rerun with
//! other networks or more equity games is left to redo what changed. The
//! number of games is not fingerprinted either: a chunk whose stats count
//! other games than its range is played again, so the database may grow.

use super::config::AmazonsExperimentConfig;
use super::error::Result;
use crate::util::run_dir::{check_fingerprint, Depth, JsonLayout, RunDir};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What the database's games depend on, as stored in the folder.
#[derive(Serialize)]
pub(super) struct DatabaseSettings<'a> {
    pub(super) seed: u64,
    pub(super) size: usize,
    pub(super) db_players: &'a [String],
    pub(super) db_random_opening: usize,
    pub(super) db_max_plies: usize,
    pub(super) db_chunk: usize,
    pub(super) good: &'a str,
    pub(super) simple: &'a str,
}

impl<'a> DatabaseSettings<'a> {
    pub(super) fn of(cfg: &'a AmazonsExperimentConfig) -> Self {
        DatabaseSettings {
            seed: cfg.seed,
            size: cfg.size,
            db_players: &cfg.db_players,
            db_random_opening: cfg.db_random_opening,
            db_max_plies: cfg.db_max_plies,
            db_chunk: cfg.db_chunk,
            good: &cfg.good,
            simple: &cfg.simple,
        }
    }
}

/// `OUT/db/settings.json`.
pub(super) fn settings_path(out: &Path) -> PathBuf {
    out.join("db").join("settings.json")
}

/// Locks `cfg.out` for this process (held while the returned [`RunDir`]
/// is) and checks the database's settings against those stored there,
/// storing them on the first start; other settings are refused, naming
/// the first that differs.
pub(super) fn claim_out(cfg: &AmazonsExperimentConfig) -> Result<RunDir> {
    let run_dir = RunDir::claim(&cfg.out)?;
    check_fingerprint(
        &settings_path(&cfg.out),
        &DatabaseSettings::of(cfg),
        Depth::Nested,
        JsonLayout::PrettyLine,
    )?;
    Ok(run_dir)
}
