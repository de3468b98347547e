//! Dirichlet noise on the root's priors (AlphaZero's exploration in
//! self-play): `P(s, a) = (1 - fraction) p_a + fraction eta_a`, `eta ~
//! Dir(alpha)`, drawn from the searching thread's seeded stream, so a
//! one-thread search stays a function of its seed.

use crate::util::SeededRng;
use rand::RngExt;

/// The noise mixed into the root's priors.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RootNoise {
    /// The Dirichlet concentration (AlphaZero: 0.3 chess, 0.03 Go; about
    /// 10 / typical number of moves).
    pub alpha: f64,
    /// The share of the noise in the mixed priors (AlphaZero: 0.25).
    pub fraction: f64,
}

impl RootNoise {
    /// Mixes a Dirichlet draw into `priors` (which sum to 1, and still do).
    pub fn apply(&self, priors: &mut [f32], rng: &mut SeededRng) {
        let eta = dirichlet(self.alpha, priors.len(), rng);
        let f = self.fraction as f32;
        for (p, e) in priors.iter_mut().zip(eta) {
            *p = (1.0 - f) * *p + f * e as f32;
        }
    }
}

/// `n` draws of a symmetric Dirichlet(`alpha`): normalised gamma draws.
fn dirichlet(alpha: f64, n: usize, rng: &mut SeededRng) -> Vec<f64> {
    let mut g: Vec<f64> = (0..n).map(|_| gamma(alpha, rng)).collect();
    let sum: f64 = g.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        g.iter_mut().for_each(|x| *x /= sum);
    } else {
        g.iter_mut().for_each(|x| *x = 1.0 / n as f64);
    }
    g
}

/// A Gamma(`alpha`, 1) draw: Marsaglia and Tsang's method, with
/// `Gamma(a) = Gamma(a + 1) U^(1/a)` below 1.
fn gamma(alpha: f64, rng: &mut SeededRng) -> f64 {
    if alpha < 1.0 {
        let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
        return gamma(alpha + 1.0, rng) * u.powf(1.0 / alpha);
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u: f64 = rng.random::<f64>();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut SeededRng) -> f64 {
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::seeded_rng;

    #[test]
    fn gamma_draws_have_the_right_mean_and_variance() {
        for alpha in [0.3, 1.0, 2.5] {
            let mut rng = seeded_rng(7, 0);
            let n = 20_000;
            let xs: Vec<f64> = (0..n).map(|_| gamma(alpha, &mut rng)).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
            // Mean and variance of Gamma(alpha, 1) are both alpha.
            assert!(
                (mean - alpha).abs() < 0.05 * alpha.max(1.0),
                "{alpha}: mean {mean}"
            );
            assert!(
                (var - alpha).abs() < 0.1 * alpha.max(1.0),
                "{alpha}: var {var}"
            );
        }
    }

    #[test]
    fn noise_keeps_a_distribution_and_follows_the_seed() {
        let noise = RootNoise {
            alpha: 0.3,
            fraction: 0.25,
        };
        let mixed = |seed| {
            let mut p = vec![0.5f32, 0.25, 0.25, 0.0];
            noise.apply(&mut p, &mut seeded_rng(seed, 0));
            p
        };
        let (a, b, c) = (mixed(1), mixed(1), mixed(2));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!((a.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(a.iter().all(|&p| p >= 0.0));
        // At most the noise's share moves away from the priors.
        assert!(a[0] >= 0.5 * 0.75 - 1e-6 && a[3] <= 0.25 + 1e-6);
    }
}
