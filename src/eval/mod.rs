//! Evaluation of value predictions on a dataset split: the figures of
//! Zaffetti's Arimaa study (accuracy, MSE) plus MAE and R^2, overall, by
//! plies to the end of the game (the "height plot") and by ply, for a
//! checkpoint's model ([`evaluate_checkpoint`]) or a material-only
//! baseline ([`material_rows`], [`evaluate_material`]).

mod checkpoint_eval;
mod error;
mod game_bootstrap;
mod hand_baseline;
mod material_baseline;
mod metrics;
pub mod move_prediction;
mod psq_tables;
mod report;

pub use checkpoint_eval::{
    check_compatible, evaluate_checkpoint, predict_checkpoint, predict_rows, to_label_scale,
    value_bridge, PredictedRow,
};
pub use error::EvalError;
pub use game_bootstrap::{paired_by_game, Difference, PairedByGame};
pub use hand_baseline::{baseline_metrics, baseline_names, rows_metrics};
pub use material_baseline::{
    evaluate_material, fit_k, material_prediction, material_rows, material_sign_prediction,
    MaterialRow, DEFAULT_K,
};
pub use metrics::{GroupedMetrics, Metrics, MetricsAcc, HEIGHT_BUCKET_PLIES};
pub use move_prediction::{predict_moves, MovePredictionInput, MovePredictionReport};
pub use psq_tables::{psq_tables, PsqTables};
pub use report::{EvalReport, EvaluatorResult, GroupRow, ZAFFETTI_ACCURACY, ZAFFETTI_MSE};
