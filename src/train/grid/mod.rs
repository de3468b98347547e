//! `plies grid`: a k-fold cross-validated grid search over dropout,
//! regulariser, learning rule and kernel shape (Zaffetti's figure 3), scored
//! and ranked as in his figure 4.
//!
//! Each configuration is trained `k` times: cross-validation fold `f` (the
//! dataset folds `d` with `d mod k == f`) of the train and valid splits is
//! held out for validation, the other folds are trained on; the test split
//! is never read. A configuration's score is the mean over its folds of the
//! held-out MSE, MAE, R^2 and accuracy ([`crate::eval::MetricsAcc`]), with
//! their standard deviations (n - 1). Rows are ranked by mean MSE.
//!
//! Layout of `OUT`:
//!
//! ```text
//! OUT/grid-args.json                     the arguments (a rerun must match)
//! OUT/runs/<config-id>/fold-<f>/         the training run (plies train's files)
//! OUT/runs/<config-id>/fold-<f>/result.json   its held-out metrics, written last
//! OUT/grid.csv, grid.md, grid.json       the ranked table
//! ```
//!
//! Resumable: a (configuration, fold) whose `result.json` exists is not
//! trained again; an interrupted run continues from its run state.
//!
//! | file | concept |
//! | --- | --- |
//! | `axes.rs` | [`GridAxes`], [`GridPoint`], [`Regularizer`], [`Rule`] and the paper's axes |
//! | `config.rs` | [`GridConfig`]: fingerprint, configurations, folds, each run's arguments |
//! | `run.rs` | [`run_grid`]: the runs, resumed, in parallel; [`RunResult`], [`GridReport`] |
//! | `ranking.rs` | [`GridRow`], [`rank`]: means and deviations over folds |
//! | `tables.rs` | [`table`], [`csv`], [`markdown`] |
//! | `error.rs` | [`GridError`] |

mod axes;
mod config;
mod error;
mod ranking;
mod run;
mod tables;
#[cfg(test)]
mod tests;

pub use axes::{
    GridAxes, GridPoint, Regularizer, Rule, PAPER_DROPOUT, PAPER_KERNEL, PAPER_OPTIMIZER,
    PAPER_REGULARIZER,
};
pub use config::GridConfig;
pub use error::GridError;
pub use ranking::{rank, GridRow};
pub use run::{run_grid, GridReport, RunResult, ARGS_FILE, RESULT_FILE};
pub use tables::{csv, markdown, table};
