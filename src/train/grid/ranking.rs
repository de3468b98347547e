//! Scoring and ranking: a configuration's mean and standard deviation of
//! each held-out metric over its folds, ranked by mean MSE.

use serde::{Deserialize, Serialize};

use super::{GridPoint, RunResult};

/// The score of one configuration: mean and std over folds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridRow {
    pub rank: usize,
    pub id: String,
    pub config: GridPoint,
    pub mse: f64,
    pub mse_std: f64,
    pub mae: f64,
    pub mae_std: f64,
    pub r2: Option<f64>,
    pub r2_std: Option<f64>,
    pub accuracy: Option<f64>,
    pub accuracy_std: Option<f64>,
    pub folds: usize,
    /// Held-out positions over all folds.
    pub positions: u64,
}

/// Mean and sample standard deviation.
fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n.max(1.0);
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

fn mean_std_opt(v: &[Option<f64>]) -> (Option<f64>, Option<f64>) {
    if v.iter().any(Option::is_none) || v.is_empty() {
        return (None, None);
    }
    let xs: Vec<f64> = v.iter().flatten().copied().collect();
    let (m, s) = mean_std(&xs);
    (Some(m), Some(s))
}

/// Ranks configurations by mean MSE over their folds.
pub fn rank(results: &[(GridPoint, Vec<RunResult>)]) -> Vec<GridRow> {
    let mut rows: Vec<GridRow> = results
        .iter()
        .map(|(p, runs)| {
            let (mse, mse_std) = mean_std(&runs.iter().map(|r| r.metrics.mse).collect::<Vec<_>>());
            let (mae, mae_std) = mean_std(&runs.iter().map(|r| r.metrics.mae).collect::<Vec<_>>());
            let (r2, r2_std) = mean_std_opt(&runs.iter().map(|r| r.metrics.r2).collect::<Vec<_>>());
            let (accuracy, accuracy_std) =
                mean_std_opt(&runs.iter().map(|r| r.metrics.accuracy).collect::<Vec<_>>());
            GridRow {
                rank: 0,
                id: p.id(),
                config: *p,
                mse,
                mse_std,
                mae,
                mae_std,
                r2,
                r2_std,
                accuracy,
                accuracy_std,
                folds: runs.len(),
                positions: runs.iter().map(|r| r.metrics.count).sum(),
            }
        })
        .collect();
    rows.sort_by(|a, b| a.mse.total_cmp(&b.mse).then_with(|| a.id.cmp(&b.id)));
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    rows
}
