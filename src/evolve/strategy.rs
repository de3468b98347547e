//! Evolution strategies over a flat vector of reals, maximising a fitness.
//!
//! Each strategy's whole state is this serde value: a run saves it after
//! every generation and a resumed run continues from it exactly (the
//! generation's random draws come from a generator seeded by the run's seed
//! and the generation number, not from a generator carried along).
//!
//! | kind | what |
//! | --- | --- |
//! | `one-plus-one` | (1+1)-ES: one child a generation; step size by the one-fifth success rule (Kern et al. 2004: `sigma *= exp((s - 1/5) / (4/5 d))`, `d = sqrt(n + 1)`) |
//! | `mu-lambda` | (mu, lambda)-ES with self-adaptive step sizes, one per coordinate (log-normal, `tau' = 1/sqrt(2n)`, `tau = 1/sqrt(2 sqrt n)`); children from parents in turn, the best `mu` children become the parents |
//! | `snes` | separable natural evolution strategies (Schaul et al. 2011): a mean and one step size per coordinate, moved by rank utilities |
//!
//! With a noisy fitness (games) the (1+1)-ES re-evaluates its parent every
//! generation, beside the child, so that one lucky evaluation does not keep
//! a parent for ever.

use crate::util::SeededRng;
use rand::RngExt;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The strategies by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StrategyKind {
    OnePlusOne,
    MuLambda,
    Snes,
}

impl StrategyKind {
    pub const NAMES: [&'static str; 3] = ["one-plus-one", "mu-lambda", "snes"];

    pub fn name(self) -> &'static str {
        match self {
            StrategyKind::OnePlusOne => "one-plus-one",
            StrategyKind::MuLambda => "mu-lambda",
            StrategyKind::Snes => "snes",
        }
    }
}

impl fmt::Display for StrategyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for StrategyKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "one-plus-one" | "1+1" => Ok(StrategyKind::OnePlusOne),
            "mu-lambda" => Ok(StrategyKind::MuLambda),
            "snes" => Ok(StrategyKind::Snes),
            other => Err(format!(
                "unknown strategy '{other}': expected {}",
                StrategyKind::NAMES.join(", ")
            )),
        }
    }
}

/// A point with its own step sizes (the (mu, lambda)-ES's individuals).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Individual {
    pub x: Vec<f64>,
    pub sigmas: Vec<f64>,
}

impl Individual {
    /// A child: step sizes mutated log-normally first (`tau' = 1/sqrt(2n)`
    /// for all, `tau = 1/sqrt(2 sqrt n)` each), then the point with them.
    pub fn mutate(&self, rng: &mut SeededRng) -> Individual {
        let n = self.x.len().max(1) as f64;
        let tau_global = 1.0 / (2.0 * n).sqrt();
        let tau_local = 1.0 / (2.0 * n.sqrt()).sqrt();
        let global = tau_global * normal(rng);
        let sigmas: Vec<f64> = self
            .sigmas
            .iter()
            .map(|s| s * (global + tau_local * normal(rng)).exp())
            .collect();
        let x = self
            .x
            .iter()
            .zip(&sigmas)
            .map(|(x, s)| x + s * normal(rng))
            .collect();
        Individual { x, sigmas }
    }
}

/// A strategy and its state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Strategy {
    OnePlusOne {
        parent: Vec<f64>,
        sigma: f64,
    },
    MuLambda {
        lambda: usize,
        parents: Vec<Individual>,
    },
    Snes {
        lambda: usize,
        mean: Vec<f64>,
        sigmas: Vec<f64>,
    },
}

/// Values a whole generation's points at once.
pub type BatchFitness<'a, E> = dyn FnMut(&[Vec<f64>]) -> Result<Vec<f64>, E> + 'a;

/// What one generation did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerationStats {
    /// The best fitness among the points evaluated.
    pub best: f64,
    /// The mean fitness of the points evaluated.
    pub mean: f64,
    /// The step size after the generation (the mean over coordinates
    /// where there is one per coordinate).
    pub step: f64,
    /// The point with the best fitness.
    pub best_x: Vec<f64>,
    /// Points evaluated.
    pub evaluations: usize,
}

/// A standard normal draw (Box-Muller; `1 - u` keeps the logarithm finite).
fn normal(rng: &mut SeededRng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>();
    let v: f64 = rng.random::<f64>();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The SNES population size for `n` dimensions: `4 + floor(3 ln n)`.
pub fn default_lambda(n: usize) -> usize {
    4 + (3.0 * (n.max(1) as f64).ln()).floor() as usize
}

impl Strategy {
    /// A fresh strategy of `kind` at `x0` with step size `sigma0`;
    /// `lambda` children a generation (`mu` parents for `mu-lambda`;
    /// ignored by `one-plus-one`).
    pub fn new(kind: StrategyKind, x0: Vec<f64>, sigma0: f64, mu: usize, lambda: usize) -> Self {
        let n = x0.len();
        match kind {
            StrategyKind::OnePlusOne => Strategy::OnePlusOne {
                parent: x0,
                sigma: sigma0,
            },
            StrategyKind::MuLambda => Strategy::MuLambda {
                lambda: lambda.max(mu.max(1)),
                parents: vec![
                    Individual {
                        x: x0,
                        sigmas: vec![sigma0; n],
                    };
                    mu.max(1)
                ],
            },
            StrategyKind::Snes => Strategy::Snes {
                lambda: lambda.max(2),
                mean: x0,
                sigmas: vec![sigma0; n],
            },
        }
    }

    pub fn kind(&self) -> StrategyKind {
        match self {
            Strategy::OnePlusOne { .. } => StrategyKind::OnePlusOne,
            Strategy::MuLambda { .. } => StrategyKind::MuLambda,
            Strategy::Snes { .. } => StrategyKind::Snes,
        }
    }

    /// The strategy's current answer: the (1+1) parent, the best
    /// (mu, lambda) parent, the SNES mean.
    pub fn center(&self) -> &[f64] {
        match self {
            Strategy::OnePlusOne { parent, .. } => parent,
            Strategy::MuLambda { parents, .. } => &parents[0].x,
            Strategy::Snes { mean, .. } => mean,
        }
    }

    /// One generation: draws the points from `rng`, has `fitness` value
    /// them all in one call (so that it can spread them over threads), and
    /// updates the state.
    pub fn generation<E>(
        &mut self,
        rng: &mut SeededRng,
        fitness: &mut BatchFitness<'_, E>,
    ) -> Result<GenerationStats, E> {
        match self {
            Strategy::OnePlusOne { parent, sigma } => {
                let n = parent.len();
                let child: Vec<f64> = parent.iter().map(|x| x + *sigma * normal(rng)).collect();
                let points = vec![parent.clone(), child];
                let f = fitness(&points)?;
                let success = f[1] >= f[0];
                let d = ((n + 1) as f64).sqrt();
                let s = if success { 1.0 } else { 0.0 };
                *sigma *= ((s - 0.2) / (0.8 * d)).exp();
                let best = if success { 1 } else { 0 };
                let [old, child] = <[Vec<f64>; 2]>::try_from(points).expect("two points");
                *parent = if success { child } else { old };
                Ok(GenerationStats {
                    best: f[best],
                    mean: mean(&f),
                    step: *sigma,
                    best_x: parent.clone(),
                    evaluations: 2,
                })
            }
            Strategy::MuLambda { lambda, parents } => {
                let children: Vec<Individual> = (0..*lambda)
                    .map(|k| parents[k % parents.len()].mutate(rng))
                    .collect();
                let points: Vec<Vec<f64>> = children.iter().map(|c| c.x.clone()).collect();
                let f = fitness(&points)?;
                let order = ranking(&f);
                let mu = parents.len();
                *parents = order[..mu].iter().map(|&i| children[i].clone()).collect();
                Ok(GenerationStats {
                    best: f[order[0]],
                    mean: mean(&f),
                    step: mean(&parents[0].sigmas),
                    best_x: parents[0].x.clone(),
                    evaluations: points.len(),
                })
            }
            Strategy::Snes {
                lambda,
                mean: centre,
                sigmas,
            } => {
                let n = centre.len().max(1) as f64;
                let zs: Vec<Vec<f64>> = (0..*lambda)
                    .map(|_| centre.iter().map(|_| normal(rng)).collect())
                    .collect();
                let points: Vec<Vec<f64>> = zs
                    .iter()
                    .map(|z| {
                        centre
                            .iter()
                            .zip(sigmas.iter())
                            .zip(z)
                            .map(|((m, s), z)| m + s * z)
                            .collect()
                    })
                    .collect();
                let f = fitness(&points)?;
                let order = ranking(&f);
                let utilities = utilities(*lambda);
                let eta_sigma = (3.0 + n.ln()) / (5.0 * n.sqrt());
                for j in 0..centre.len() {
                    let (mut grad_mu, mut grad_sigma) = (0.0, 0.0);
                    for (rank, &i) in order.iter().enumerate() {
                        let z = zs[i][j];
                        grad_mu += utilities[rank] * z;
                        grad_sigma += utilities[rank] * (z * z - 1.0);
                    }
                    centre[j] += sigmas[j] * grad_mu;
                    sigmas[j] *= (eta_sigma / 2.0 * grad_sigma).exp();
                }
                Ok(GenerationStats {
                    best: f[order[0]],
                    mean: mean(&f),
                    step: mean(sigmas),
                    best_x: points[order[0]].clone(),
                    evaluations: points.len(),
                })
            }
        }
    }
}

/// Indices of `f` from the best (highest) down; ties keep index order, and
/// NaN counts as the worst.
fn ranking(f: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..f.len()).collect();
    let key = |i: usize| {
        if f[i].is_nan() {
            f64::NEG_INFINITY
        } else {
            f[i]
        }
    };
    order.sort_by(|&a, &b| key(b).total_cmp(&key(a)).then(a.cmp(&b)));
    order
}

/// NES rank utilities for `lambda` points, best first, summing to 0.
fn utilities(lambda: usize) -> Vec<f64> {
    let raw: Vec<f64> = (1..=lambda)
        .map(|k| ((lambda as f64 / 2.0 + 1.0).ln() - (k as f64).ln()).max(0.0))
        .collect();
    let total: f64 = raw.iter().sum();
    raw.iter()
        .map(|u| u / total - 1.0 / lambda as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::seeded_rng;
    use std::convert::Infallible;

    fn sphere(x: &[f64]) -> f64 {
        -x.iter().map(|v| v * v).sum::<f64>()
    }

    fn rosenbrock(x: &[f64]) -> f64 {
        -x.windows(2)
            .map(|w| 100.0 * (w[1] - w[0] * w[0]).powi(2) + (1.0 - w[0]).powi(2))
            .sum::<f64>()
    }

    /// Runs `generations` of `s` on `f`; returns the fitness of the centre.
    fn optimise(s: &mut Strategy, f: fn(&[f64]) -> f64, generations: u64, seed: u64) -> f64 {
        for g in 0..generations {
            let mut rng = seeded_rng(seed, g);
            s.generation::<Infallible>(&mut rng, &mut |pts| Ok(pts.iter().map(|p| f(p)).collect()))
                .unwrap();
        }
        f(s.center())
    }

    #[test]
    fn every_strategy_minimises_the_sphere() {
        let x0 = vec![3.0, -2.0, 1.5, 4.0, -1.0];
        for (kind, generations) in [
            (StrategyKind::OnePlusOne, 1500),
            (StrategyKind::MuLambda, 400),
            (StrategyKind::Snes, 400),
        ] {
            let lambda = if kind == StrategyKind::MuLambda {
                20
            } else {
                8
            };
            let mut s = Strategy::new(kind, x0.clone(), 1.0, 4, lambda);
            let f = optimise(&mut s, sphere, generations, 1);
            // |x|^2 from 31.25 to below 1e-8.
            assert!(f > -1e-8, "{kind}: |x|^2 = {}", -f);
        }
    }

    #[test]
    fn every_strategy_minimises_rosenbrock_in_two_dimensions() {
        for (kind, generations) in [
            (StrategyKind::Snes, 8000),
            (StrategyKind::MuLambda, 5000),
            (StrategyKind::OnePlusOne, 20000),
        ] {
            let mut s = Strategy::new(kind, vec![-1.0, 2.0], 0.5, 5, 30);
            let f = optimise(&mut s, rosenbrock, generations, 2);
            // From 104 to within 1e-5 of the minimum at (1, 1), down the
            // curved valley.
            assert!(f > -1e-5, "{kind}: rosenbrock {}", -f);
            for v in s.center() {
                assert!((v - 1.0).abs() < 0.01, "{kind}: {:?}", s.center());
            }
        }
    }

    #[test]
    fn same_seed_same_run_and_a_resumed_state_continues_exactly() {
        for kind in [
            StrategyKind::OnePlusOne,
            StrategyKind::MuLambda,
            StrategyKind::Snes,
        ] {
            let mut a = Strategy::new(kind, vec![1.0; 4], 0.3, 3, 9);
            let mut b = a.clone();
            optimise(&mut a, sphere, 30, 7);
            optimise(&mut b, sphere, 15, 7);
            // Through JSON, as a run saves it, then the remaining generations.
            let mut b: Strategy =
                serde_json::from_str(&serde_json::to_string(&b).unwrap()).unwrap();
            for g in 15..30 {
                let mut rng = seeded_rng(7, g);
                b.generation::<Infallible>(&mut rng, &mut |pts| {
                    Ok(pts.iter().map(|p| sphere(p)).collect())
                })
                .unwrap();
            }
            assert_eq!(a, b, "{kind}");
            let mut c = Strategy::new(kind, vec![1.0; 4], 0.3, 3, 9);
            optimise(&mut c, sphere, 30, 8);
            assert_ne!(a, c, "{kind}: another seed, another run");
        }
    }

    #[test]
    fn utilities_sum_to_zero_and_rank_the_best_first() {
        let u = utilities(10);
        assert!(u.iter().sum::<f64>().abs() < 1e-12);
        assert!(u.windows(2).all(|w| w[0] >= w[1]));
        assert_eq!(ranking(&[0.5, f64::NAN, 2.0, 0.5]), vec![2, 0, 3, 1]);
        assert_eq!(default_lambda(140), 4 + 14);
    }
}
