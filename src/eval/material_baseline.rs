//! Material-only baselines for Arimaa, read from each row's position text.
//!
//! - `material`: P(win) = sigmoid(k * b), `b` the material balance for the
//!   side to move in rabbits ([`material_balance`] / 1000: Bonanza piece
//!   values, rabbits dearer as fewer remain, a small bonus for advanced
//!   rabbits). `k` is fitted by one-dimensional logistic regression (no
//!   intercept: a level position is an even game) on a train split, or is
//!   [`DEFAULT_K`] when there is none.
//! - `material-sign`: 1 ahead, 0 behind, 0.5 level: the accuracy of "the
//!   side ahead in material wins".

use super::{EvalError, GroupedMetrics};
use crate::dataset::schema::Columns;
use crate::dataset::{Dataset, Split};
use crate::game::arimaa::notation::parse_position_line;
use crate::game::{Arimaa, Game};
use crate::infer::hand::arimaa_material::material_balance;

/// The `k` used when no train split is at hand: fitted (0.2158) on the
/// train split of the archive games shipped for training,
/// `data/arimaa/allgames2002.txt` and `data/arimaa/fake_archive.txt`
/// (every termination, 2482 positions), rounded.
pub const DEFAULT_K: f64 = 0.22;

/// One row as the material baselines see it.
#[derive(Clone, Debug, PartialEq)]
pub struct MaterialRow {
    /// Material balance for the side to move, in millirabbits.
    pub balance: i32,
    pub label: f32,
    pub ply: u32,
    pub plies_to_end: u32,
    pub game_id: String,
}

/// The material balance of every row of `split` (every row for `None`) of
/// an Arimaa dataset, in stored order.
pub fn material_rows(
    dataset: &Dataset,
    split: Option<Split>,
) -> Result<Vec<MaterialRow>, EvalError> {
    let game = dataset.spec().game;
    if game != Arimaa::NAME {
        return Err(EvalError::GameMismatch {
            what: "the material baseline".into(),
            expected: Arimaa::NAME.into(),
            dataset: dataset.dir().to_path_buf(),
            found: game,
        });
    }
    let dir = dataset.dir().to_path_buf();
    let parts = dataset.map_shards(split, |cols: &Columns<'_>| {
        let mut out = Vec::with_capacity(cols.len());
        for i in 0..cols.len() {
            if split.is_some() && Some(cols.split(i)?) != split {
                continue;
            }
            let ply = cols.ply.value(i);
            let balance = match parse_position_line(cols.position.value(i)) {
                Ok((pos, _)) => material_balance(&pos, pos.side_to_move()),
                Err(e) => {
                    return Ok(Err(EvalError::BadPosition {
                        dataset: dir.clone(),
                        game_id: cols.game_id.value(i).to_string(),
                        ply,
                        why: e.to_string(),
                    }))
                }
            };
            out.push(MaterialRow {
                balance,
                label: cols.label.value(i),
                ply,
                plies_to_end: cols.plies_to_end.value(i),
                game_id: cols.game_id.value(i).to_string(),
            });
        }
        Ok(Ok(out))
    })?;
    let mut rows = Vec::new();
    for part in parts.into_iter().flatten() {
        rows.extend(part?);
    }
    Ok(rows)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The `k` minimising the mean cross-entropy of sigmoid(k * x) against the
/// labels (soft labels: a draw is 0.5), `x` the balance in rabbits, by
/// Newton's method from 0. `None` without rows or when every balance is 0.
pub fn fit_k(rows: &[MaterialRow]) -> Option<f64> {
    let xs: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r.balance as f64 / 1000.0, r.label as f64))
        .collect();
    if xs.iter().all(|&(x, _)| x == 0.0) {
        return None;
    }
    let mut k = 0.0f64;
    for _ in 0..100 {
        let (mut g, mut h) = (0.0, 0.0);
        for &(x, y) in &xs {
            let p = sigmoid(k * x);
            g += (p - y) * x;
            h += p * (1.0 - p) * x * x;
        }
        if h <= 1e-12 {
            break;
        }
        // Damped: a separable set would push k without bound.
        let step = (g / h).clamp(-1.0, 1.0);
        k -= step;
        if step.abs() < 1e-10 {
            break;
        }
    }
    k.is_finite().then_some(k)
}

/// `material` with slope `k` (per rabbit): P(win) for a balance in millirabbits.
pub fn material_prediction(k: f64, balance: i32) -> f32 {
    sigmoid(k * balance as f64 / 1000.0) as f32
}

/// `material-sign`: 1 ahead, 0 behind, 0.5 level.
pub fn material_sign_prediction(balance: i32) -> f32 {
    match balance.signum() {
        1 => 1.0,
        -1 => 0.0,
        _ => 0.5,
    }
}

/// Metrics of `material` (slope `k`) and `material-sign` over `rows`.
pub fn evaluate_material(rows: &[MaterialRow], k: f64) -> (GroupedMetrics, GroupedMetrics) {
    let (mut m, mut s) = (GroupedMetrics::default(), GroupedMetrics::default());
    for r in rows {
        m.push_in_game(
            &r.game_id,
            material_prediction(k, r.balance),
            r.label,
            r.ply,
            r.plies_to_end,
        );
        s.push_in_game(
            &r.game_id,
            material_sign_prediction(r.balance),
            r.label,
            r.ply,
            r.plies_to_end,
        );
    }
    (m, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(balance: i32, label: f32) -> MaterialRow {
        MaterialRow {
            balance,
            label,
            ply: 0,
            plies_to_end: 0,
            game_id: "g".into(),
        }
    }

    #[test]
    fn fit_recovers_the_slope_of_soft_labels() {
        // Labels equal to sigmoid(0.8 x) are the exact optimum.
        let rows: Vec<_> = (-5..=5)
            .map(|b| row(b * 1000, sigmoid(0.8 * b as f64) as f32))
            .collect();
        let k = fit_k(&rows).unwrap();
        assert!((k - 0.8).abs() < 1e-4, "{k}");
    }

    #[test]
    fn fit_edge_cases() {
        assert_eq!(fit_k(&[]), None);
        assert_eq!(fit_k(&[row(0, 1.0), row(0, 0.0)]), None);
        // Separable: the damped steps keep k finite and positive.
        let k = fit_k(&[row(1000, 1.0), row(-1000, 0.0)]).unwrap();
        assert!(k.is_finite() && k > 5.0, "{k}");
    }

    #[test]
    fn predictions() {
        assert_eq!(material_prediction(0.5, 0), 0.5);
        assert!((material_prediction(1.0, 1000) - 0.7310586).abs() < 1e-6);
        assert_eq!(material_sign_prediction(30), 1.0);
        assert_eq!(material_sign_prediction(-1), 0.0);
        assert_eq!(material_sign_prediction(0), 0.5);
    }
}
