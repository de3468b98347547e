//! The paper's tuner (Heon & Oetting 2012): the current weights play a
//! randomly perturbed copy; the winner's weights become current.

use crate::util::SeededRng;
use rand::RngExt;

/// A copy of `weights` with each weight moved by up to `sigma` times its
/// scale, uniformly at random.
pub fn perturbed(weights: &[f32], scales: &[f32], sigma: f64, rng: &mut SeededRng) -> Vec<f32> {
    weights
        .iter()
        .zip(scales)
        .map(|(&w, &s)| w + (sigma * rng.random_range(-1.0..=1.0f64)) as f32 * s)
        .collect()
}

/// Whether the challenger takes over: it must score more than the current
/// weights over the iteration's games (a tie keeps the current ones).
pub fn challenger_wins(challenger_points: f64, games: u64) -> bool {
    challenger_points > games as f64 - challenger_points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::seeded_rng;

    #[test]
    fn perturbations_stay_within_sigma_scales_and_follow_the_seed() {
        let w = [1.0f32, -2.0, 0.0];
        let s = [1.0f32, 2.0, 0.1];
        let p = perturbed(&w, &s, 0.25, &mut seeded_rng(1, 4));
        for i in 0..3 {
            assert!((p[i] - w[i]).abs() <= 0.25 * s[i] + 1e-6, "{p:?}");
        }
        assert_ne!(p, w.to_vec());
        assert_eq!(p, perturbed(&w, &s, 0.25, &mut seeded_rng(1, 4)));
        assert!(challenger_wins(1.5, 2) && !challenger_wins(1.0, 2));
    }
}
