//! Trainers: TD(lambda) with eligibility traces (on-line or over the games
//! of a dataset) and supervised regression on dataset labels.

pub mod comparison;
mod error;
mod game_inputs;
pub mod grid;
pub mod loss;
pub mod mdp;
pub mod metrics;
pub mod mixed_precision;
pub mod policy_loss;
pub mod regularize;
pub mod run_state;
mod supervised;
mod td_candle;
pub mod td_dataset;
mod td_job;
mod td_lambda;
mod trainer;

pub use comparison::{ComparisonConfig, ComparisonLoss, Reduce};
pub use error::TrainError;
pub use game_inputs::{rows_to_td_game, TdGame};
pub use supervised::{train_supervised, SupervisedConfig, SupervisedReport};
pub use td_candle::CandleTdLearner;
pub use td_dataset::{td_games, train_td_runs, TdNetConfig, TdRunResult, TD_PRESETS};
pub use td_job::{run_td_job, Equity, EquityPoint, EquityProbe, TdJob, TdJobReport};
pub use td_lambda::{TdConfig, TdLearner};
pub use trainer::{
    encoder_spec, fit, fit_cv, preset, resolve_model, CvFolds, FitConfig, FitError, FitReport,
    ScheduleSpec, PRESETS,
};
