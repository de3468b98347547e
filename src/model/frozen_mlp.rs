//! A [`NativeMlp`] with fixed weights, laid out for valuing positions
//! inside a search.
//!
//! Encoded boards are mostly zeros (empty squares, pieces absent), and a
//! search values one position at a time. Storing the first layer input by
//! input lets a position add only the weight rows of its non-zero inputs,
//! each a contiguous run of `hidden` floats that vectorises: on the
//! 609-input Amazons territory network about a third of the inputs are
//! non-zero, so a value reads a third of the weights. The learner keeps
//! the row-by-hidden-unit layout its gradients need; this copy is made
//! once, when an evaluator is built.

use super::{Activation, NativeMlp};

#[derive(Clone, Debug)]
pub struct FrozenMlp {
    inputs: usize,
    hidden: usize,
    activation: Activation,
    /// `hidden.0.weight` transposed: row `i` holds input `i`'s weight into
    /// every hidden unit.
    by_input: Vec<f32>,
    hidden_bias: Vec<f32>,
    out_weight: Vec<f32>,
    out_bias: f32,
}

impl From<&NativeMlp> for FrozenMlp {
    fn from(net: &NativeMlp) -> Self {
        let cfg = net.config();
        let (inputs, hidden) = (cfg.inputs, cfg.hidden[0]);
        let p = net.params();
        let w1 = inputs * hidden;
        let mut by_input = vec![0.0; w1];
        for h in 0..hidden {
            for i in 0..inputs {
                by_input[i * hidden + h] = p[h * inputs + i];
            }
        }
        FrozenMlp {
            inputs,
            hidden,
            activation: cfg.activation,
            by_input,
            hidden_bias: p[w1..w1 + hidden].to_vec(),
            out_weight: p[w1 + hidden..w1 + 2 * hidden].to_vec(),
            out_bias: p[w1 + 2 * hidden],
        }
    }
}

impl FrozenMlp {
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// The value of one input vector (`inputs()` long), as
    /// [`NativeMlp::value`] computes it up to float rounding.
    pub fn value(&self, x: &[f32]) -> f32 {
        debug_assert_eq!(x.len(), self.inputs);
        let mut z = self.hidden_bias.clone();
        for (row, &xi) in self.by_input.chunks_exact(self.hidden).zip(x) {
            if xi == 0.0 {
                continue;
            }
            for (zh, &w) in z.iter_mut().zip(row) {
                *zh += xi * w;
            }
        }
        z.iter()
            .zip(&self.out_weight)
            .fold(self.out_bias, |y, (&zh, &w)| {
                y + w * self.activation.apply(zh)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MlpConfig, WeightInit};
    use crate::util::seeded_rng;
    use rand::RngExt;

    #[test]
    fn values_what_the_learner_values_on_sparse_and_dense_inputs() {
        for (inputs, hidden, activation) in [
            (9, 80, Activation::Elliott { beta: 3.0 }),
            (609, 80, Activation::Elliott { beta: 3.0 }),
            (37, 5, Activation::Tanh),
        ] {
            let cfg = MlpConfig {
                inputs,
                hidden: vec![hidden],
                activation,
                init: WeightInit::Uniform { a: 0.2 },
            };
            let net = NativeMlp::new(&cfg, &mut seeded_rng(5, inputs as u64)).unwrap();
            let frozen = FrozenMlp::from(&net);
            assert_eq!(frozen.inputs(), inputs);
            let mut rng = seeded_rng(6, 0);
            for density in [0.0, 0.3, 1.0] {
                let x: Vec<f32> = (0..inputs)
                    .map(|_| {
                        if rng.random_bool(density) {
                            rng.random_range(-2.0..2.0)
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let (a, b) = (net.value(&x), frozen.value(&x));
                assert!(
                    (a - b).abs() < 1e-4 * (1.0 + a.abs()),
                    "{inputs} inputs, density {density}: learner {a} vs frozen {b}"
                );
            }
        }
    }
}
