//! TD(lambda) with accumulating eligibility traces (Sutton 1988), one game
//! at a time, on the plain-Rust MLP.
//!
//! For positions `s_0 .. s_{T-1}` of a game with result `z` (for the first
//! player), with values `V` taken from the first player's point of view:
//! `e_t = lambda * e_{t-1} + grad V(s_t)`,
//! `delta_t = V(s_{t+1}) - V(s_t)` (with `V(s_T) = z`),
//! `w += lr * delta_t * e_t`, updating after every position.

use super::TdGame;
use crate::model::NativeMlp;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TdConfig {
    pub lambda: f32,
    pub lr: f32,
}

impl Default for TdConfig {
    /// The Tic-tac-toe study's values.
    fn default() -> Self {
        TdConfig {
            lambda: 0.8,
            lr: 0.00105,
        }
    }
}

/// Reusable buffers for TD(lambda) updates.
pub struct TdLearner {
    pub cfg: TdConfig,
    trace: Vec<f32>,
    grad: Vec<f32>,
}

impl TdLearner {
    pub fn new(cfg: TdConfig, net: &NativeMlp) -> Self {
        TdLearner {
            cfg,
            trace: vec![0.0; net.num_params()],
            grad: vec![0.0; net.num_params()],
        }
    }

    /// Learns from one game; returns the mean squared TD error seen.
    pub fn learn_game(&mut self, net: &mut NativeMlp, game: &TdGame) -> f32 {
        let n = game.inputs.len();
        if n == 0 {
            return 0.0;
        }
        self.trace.iter_mut().for_each(|e| *e = 0.0);
        let mut sq = 0.0;
        for t in 0..n {
            let sign = game.signs[t];
            let v = sign * net.value_and_grad(&game.inputs[t], &mut self.grad);
            let lambda = self.cfg.lambda;
            for (e, g) in self.trace.iter_mut().zip(&self.grad) {
                *e = lambda * *e + sign * g;
            }
            let target = if t + 1 < n {
                game.signs[t + 1] * net.value(&game.inputs[t + 1])
            } else {
                game.result
            };
            let delta = target - v;
            sq += delta * delta;
            let step = self.cfg.lr * delta;
            for (w, e) in net.params_mut().iter_mut().zip(&self.trace) {
                *w += step * e;
            }
        }
        sq / n as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Activation, MlpConfig, WeightInit};
    use crate::util::seeded_rng;

    fn net() -> NativeMlp {
        let cfg = MlpConfig {
            inputs: 3,
            hidden: vec![8],
            activation: Activation::Elliott { beta: 5.0 },
            init: WeightInit::Uniform { a: 0.2 },
        };
        NativeMlp::new(&cfg, &mut seeded_rng(1, 0)).unwrap()
    }

    #[test]
    fn values_move_toward_the_result() {
        let mut n = net();
        let game = TdGame {
            inputs: vec![
                vec![1.0, 0.0, 0.0],
                vec![1.0, -1.0, 0.0],
                vec![1.0, -1.0, 1.0],
            ],
            signs: vec![1.0; 3],
            result: 1.0,
        };
        let before = n.value(&game.inputs[2]);
        let mut td = TdLearner::new(
            TdConfig {
                lambda: 0.8,
                lr: 0.05,
            },
            &n,
        );
        for _ in 0..300 {
            td.learn_game(&mut n, &game);
        }
        let after: Vec<f32> = game.inputs.iter().map(|x| n.value(x)).collect();
        assert!(before < 0.9, "{before}");
        for v in after {
            assert!((v - 1.0).abs() < 0.1, "{v}");
        }
    }

    #[test]
    fn lambda_zero_only_updates_toward_the_next_state() {
        // With lambda = 0, a one-step game changes V(s0) by lr * (z - V) * grad.
        let mut n = net();
        let x = vec![0.5, -0.5, 1.0];
        let mut g = vec![0.0; n.num_params()];
        let v0 = n.value_and_grad(&x, &mut g);
        let lr = 0.01;
        let mut td = TdLearner::new(TdConfig { lambda: 0.0, lr }, &n);
        let before = n.params().to_vec();
        td.learn_game(
            &mut n,
            &TdGame {
                inputs: vec![x],
                signs: vec![1.0],
                result: -1.0,
            },
        );
        for ((b, a), gi) in before.iter().zip(n.params()).zip(&g) {
            assert!((a - (b + lr * (-1.0 - v0) * gi)).abs() < 1e-6);
        }
    }
}
