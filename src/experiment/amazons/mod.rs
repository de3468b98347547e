//! Fugers (2017), section 5: can a quick learned evaluation stand in for
//! search in Amazons? A game database made by self-play between strong,
//! varied players; Elliott MLPs trained on it by TD(lambda) for each
//! encoding (the thesis' UNITS, MOBILITY, BITS, and its future-work
//! TERRITORY) and hidden size, the run with the lowest test error kept;
//! value networks fitted on it by regression (`amazons_value`, beyond the
//! thesis); their 0/1 error of the predicted winner beside
//! the hand evaluators' (figures 15-17); and the equity of every evaluator
//! with no lookahead, alpha-beta and MCTS against the good player
//! (Lieberum + alpha-beta) and the simple one (minimal distance, no
//! lookahead) (tables 4 and 5).
//!
//! Every stage resumes from what it wrote in `OUT`: the database by chunks
//! of games (`db/games/`, played with the settings `db/settings.json`
//! holds), each network run by its checkpoint (`nets/NAME/run-R/`), each
//! equity cell by its result file (`matches/`, kept while the players'
//! files and settings are the same). One process writes `OUT` at a time.
//!
//! | file | concept |
//! | --- | --- |
//! | `config.rs` | [`AmazonsExperimentConfig`]: the default and quick budgets, the check of the settings, the players and encoders they name |
//! | `error.rs` | [`AmazonsExperimentError`] |
//! | `fingerprint.rs` | the output folder claimed, and the database's settings stored in it and checked on every start |
//! | `thesis.rs` | the thesis' figures quoted beside ours ([`THESIS_ERRORS`], [`THESIS_VS_GOOD`], [`THESIS_VS_SIMPLE`]) and the columns [`SEARCHES`] |
//! | `database.rs` | the game database: self-play, adjudication, chunks ([`DbStats`]) |
//! | `dataset.rs` | the records as an encoded dataset, rebuilt when they change |
//! | `networks.rs` | the TD(lambda) grid: encoder x hidden size x run, the best run kept ([`NetResult`]) |
//! | `prediction_errors.rs` | every evaluator's 0/1 error on both splits ([`ErrorRow`]) |
//! | `equity.rs` | tables 4 and 5: the cells planned and played, or read back from [`crate::experiment::match_cache`] ([`EquityRow`], [`equity_interval`]) |
//! | `report.rs` | [`AmazonsExperimentReport`], its tables ([`error_table`], [`equity_table`]) and CSV/JSON files |
//! | `plots.rs` | figures 16 and 17 |
//! | `tests.rs` | tests of the settings, the grid, the thesis' figures and the database |
//! | `report_tests.rs` | tests of the equity cells, their keys, the tables, CSVs and plots |
//!
//! [`run`] goes through the stages in order: check the settings, claim the
//! output folder, make the database, encode it, train the networks (and the
//! value networks of `amazons_value`), measure the errors, play the
//! equities, write the report.

mod config;
mod database;
mod dataset;
mod equity;
mod error;
mod fingerprint;
mod networks;
mod plots;
mod prediction_errors;
mod report;
mod thesis;

pub use config::AmazonsExperimentConfig;
pub use database::DbStats;
pub use equity::{equity_interval, EquityRow};
pub use error::AmazonsExperimentError;
pub use networks::NetResult;
pub use prediction_errors::ErrorRow;
pub use report::{equity_table, error_table, AmazonsExperimentReport};
pub use thesis::{SEARCHES, THESIS_ERRORS, THESIS_NET_ERRORS, THESIS_VS_GOOD, THESIS_VS_SIMPLE};

use super::amazons_value::{fit_value_nets, VALUE_NET_ENCODER};
use crate::dataset::{Dataset, Split};
use config::check;
use database::make_database;
use dataset::build_database_dataset;
use equity::play_equities;
use error::{file_error, Result};
use fingerprint::claim_out;
use indicatif::ProgressBar;
use networks::train_networks;
use prediction_errors::measure_errors;
use report::{write_error_outputs, write_outputs};

/// Runs the experiment (resuming what `cfg.out` holds), writing tables,
/// CSV, JSON and plots there. `say` reports each stage. The folder is held
/// for the whole run: another process writing it is refused, as is a
/// database of other settings.
pub fn run(
    cfg: &AmazonsExperimentConfig,
    progress: &dyn Fn(u64, &str) -> ProgressBar,
    say: &dyn Fn(&str),
) -> Result<AmazonsExperimentReport> {
    check(cfg)?;
    let _run_dir = claim_out(cfg)?;
    let start = std::time::Instant::now();
    std::fs::create_dir_all(&cfg.out).map_err(|e| file_error(&cfg.out, e))?;
    let database = make_database(cfg, progress, say)?;
    let data_dir = build_database_dataset(cfg, "amazons-bits", "dataset", say)?;
    let ds = Dataset::open(&data_dir)?;
    let train_rows = ds.games(Some(Split::Train))?;
    let test_rows = ds.games(Some(Split::Test))?;
    let test_positions = ds.num_rows(Some(Split::Test));
    say(&format!(
        "database: {} games ({} finished, {} adjudicated, {} rejected); {} train games, {} test games ({} positions)",
        database.finished + database.adjudicated,
        database.finished,
        database.adjudicated,
        database.rejected,
        train_rows.len(),
        test_rows.len(),
        test_positions
    ));
    let nets = train_networks(cfg, &ds, progress, say)?;
    let value_nets = if cfg.value_nets.models.is_empty() {
        Vec::new()
    } else {
        let data = build_database_dataset(cfg, VALUE_NET_ENCODER, "dataset-territory", say)?;
        fit_value_nets(cfg, &data, progress, say)?
    };
    let errors = measure_errors(cfg, &ds, &nets, &value_nets, say)?;
    write_error_outputs(&cfg.out, &errors.rows, &errors.by_ply)?;
    let equities = play_equities(cfg, &nets, &value_nets, progress, say)?;
    let report = AmazonsExperimentReport {
        config: cfg.clone(),
        database,
        train_games: train_rows.len(),
        test_games: test_rows.len(),
        test_positions,
        nets: nets.iter().map(|n| n.result.clone()).collect(),
        value_nets: value_nets.iter().map(|v| v.name.clone()).collect(),
        errors: errors.rows,
        equities,
        seconds: start.elapsed().as_secs_f64(),
    };
    write_outputs(&report)?;
    Ok(report)
}

#[cfg(test)]
mod report_tests;
#[cfg(test)]
mod tests;
