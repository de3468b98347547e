//! SPSA (Spall 1998) on the match score: each iteration plays `w + c_k Δ`
//! against `w - c_k Δ` (Δ random signs, in units of each weight's scale)
//! and moves `w` along Δ by how much the `+` side won, with Spall's gain
//! sequences `a_k = a / (k + 1 + A)^0.602`, `c_k = c / (k + 1)^0.101`.

use crate::util::SeededRng;
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// SPSA's gains.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpsaGains {
    /// The step size `a`.
    pub a: f64,
    /// The perturbation size `c` (in weight scales).
    pub c: f64,
    /// The stability constant `A`.
    pub stability: f64,
}

impl SpsaGains {
    /// Gains whose first step, when one side wins every game, moves each
    /// weight by `c / 2` scales.
    pub fn for_perturbation(c: f64) -> Self {
        let stability = 10.0f64;
        SpsaGains {
            a: c * c * (1.0 + stability).powf(0.602),
            c,
            stability,
        }
    }

    /// `(a_k, c_k)` at iteration `k` (from 0).
    pub fn at(&self, k: usize) -> (f64, f64) {
        let k = k as f64;
        (
            self.a / (k + 1.0 + self.stability).powf(0.602),
            self.c / (k + 1.0).powf(0.101),
        )
    }
}

/// Random signs, one per weight.
pub fn signs(n: usize, rng: &mut SeededRng) -> Vec<f32> {
    (0..n)
        .map(|_| if rng.random_bool(0.5) { 1.0 } else { -1.0 })
        .collect()
}

/// `w ± c_k Δ s`: the two sides of an iteration.
pub fn sides(weights: &[f32], scales: &[f32], delta: &[f32], ck: f64) -> [Vec<f32>; 2] {
    let shift = |sign: f32| -> Vec<f32> {
        weights
            .iter()
            .zip(scales)
            .zip(delta)
            .map(|((&w, &s), &d)| w + sign * (ck as f32) * d * s)
            .collect()
    };
    [shift(1.0), shift(-1.0)]
}

/// The updated weights after the `+` side scored `plus_score` (0..1) over
/// the iteration's games: `w += a_k (2 score - 1) / (2 c_k) Δ s`.
pub fn step(
    weights: &[f32],
    scales: &[f32],
    delta: &[f32],
    plus_score: f64,
    ak: f64,
    ck: f64,
) -> Vec<f32> {
    let g = (ak * (2.0 * plus_score - 1.0) / (2.0 * ck)) as f32;
    weights
        .iter()
        .zip(scales)
        .zip(delta)
        .map(|((&w, &s), &d)| w + g * d * s)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::seeded_rng;

    #[test]
    fn gains_decay_and_a_full_win_moves_half_a_perturbation() {
        let g = SpsaGains::for_perturbation(0.2);
        let (a0, c0) = g.at(0);
        assert!((c0 - 0.2).abs() < 1e-12);
        let (a9, c9) = g.at(9);
        assert!(a9 < a0 && c9 < c0);
        let w = [1.0f32, 0.0];
        let s = [2.0f32, 0.5];
        let d = [1.0f32, -1.0];
        let [plus, minus] = sides(&w, &s, &d, c0);
        assert_eq!(plus, vec![1.4, -0.1]);
        assert_eq!(minus, vec![0.6, 0.1]);
        // A full win for `+`: a_0 / (2 c_0) = c_0 / 2 scales towards it.
        let next = step(&w, &s, &d, 1.0, a0, c0);
        assert!(
            (next[0] - 1.2).abs() < 1e-6 && (next[1] + 0.05).abs() < 1e-6,
            "{next:?}"
        );
        assert_eq!(step(&w, &s, &d, 0.5, a0, c0), w.to_vec());
        let x = signs(35, &mut seeded_rng(1, 1));
        assert!(x.iter().all(|v| v.abs() == 1.0) && x.contains(&1.0) && x.contains(&-1.0));
    }
}
