//! Figures 15-17's measurements: every evaluator (the hand ones, the TD
//! networks, the value networks) scored by the 0/1 error of the winner it
//! predicts, on every position of the test and the train split, overall
//! and by ply.

use super::config::AmazonsExperimentConfig;
use super::error::Result;
use super::networks::TrainedNet;
use super::thesis::THESIS_ERRORS;
use crate::dataset::{Dataset, PositionRow, Split};
use crate::eval::{rows_metrics, GroupedMetrics};
use crate::experiment::amazons_value::ValueNet;
use crate::game::Amazons;
use crate::infer::{mlp_evaluator, Evaluator};
use crate::search::evaluators::{evaluator_by_name, EvalContext};
use serde::Serialize;
use std::sync::Arc;

/// One evaluator's 0/1 error on one split.
#[derive(Clone, Debug, Serialize)]
pub struct ErrorRow {
    pub evaluator: String,
    pub split: String,
    pub positions: u64,
    pub error: f64,
    pub thesis: Option<f64>,
}

/// An evaluator, its name and the thesis' test error for it.
type NamedEvaluator = (String, Arc<dyn Evaluator<Amazons>>, Option<f64>);

/// Every evaluator's errors on both splits.
pub(super) struct Errors {
    pub(super) rows: Vec<ErrorRow>,
    /// `(evaluator, split, metrics)`.
    pub(super) by_ply: Vec<(String, String, GroupedMetrics)>,
}

/// Figures 15-17: every evaluator's 0/1 error on every position of the
/// test and the train split.
pub(super) fn measure_errors(
    cfg: &AmazonsExperimentConfig,
    ds: &Dataset,
    nets: &[TrainedNet],
    value_nets: &[ValueNet],
    say: &dyn Fn(&str),
) -> Result<Errors> {
    say("errors: every evaluator on every test and train position");
    let mut evaluators: Vec<NamedEvaluator> = Vec::new();
    for (name, thesis) in THESIS_ERRORS {
        evaluators.push((
            name.to_string(),
            evaluator_by_name::<Amazons>(name, cfg.size, &EvalContext::default())?,
            Some(thesis),
        ));
    }
    for n in nets {
        evaluators.push((
            n.result.name.clone(),
            Arc::new(mlp_evaluator(n.encoder.clone(), &n.net)),
            None,
        ));
    }
    for v in value_nets {
        let spec = format!("ckpt:{}", v.dir.display());
        evaluators.push((
            v.name.clone(),
            evaluator_by_name::<Amazons>(&spec, cfg.size, &EvalContext::default())?,
            None,
        ));
    }
    let mut rows = Vec::new();
    let mut by_ply = Vec::new();
    for split in [Split::Test, Split::Train] {
        let positions: Vec<PositionRow> = ds.rows(Some(split))?;
        for (name, eval, thesis) in &evaluators {
            let m = rows_metrics::<Amazons>(ds.dir(), eval.as_ref(), &positions, name)?;
            let s = m.overall.summary();
            rows.push(ErrorRow {
                evaluator: name.clone(),
                split: split.to_string(),
                positions: s.count,
                error: s.error01.unwrap_or(f64::NAN),
                thesis: if split == Split::Test { *thesis } else { None },
            });
            by_ply.push((name.clone(), split.to_string(), m));
        }
    }
    Ok(Errors { rows, by_ply })
}
