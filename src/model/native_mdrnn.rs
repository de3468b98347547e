//! The MDRNN ([`super::Mdrnn`]) in plain Rust, for playing and evolving.
//!
//! A policy move runs the network once on one board; candle's per-operation
//! dispatch (about 10 operations per anti-diagonal) costs far more than the
//! 140-weight arithmetic, and evolution plays hundreds of thousands of
//! moves. This copy computes the same per-point outputs point by point
//! (tested against the candle model) from one flat weight vector,
//! `[wi (k*C, row-major), wh (k*k, row-major), wb (k), wo (k)]`: the order
//! of [`super::MdrnnConfig::expected_tensors`].

use super::{MdrnnConfig, ModelError, OutputActivation};

#[derive(Clone, Debug, PartialEq)]
pub struct NativeMdrnn {
    planes: usize,
    hidden: usize,
    output: OutputActivation,
    weights: Vec<f32>,
}

impl NativeMdrnn {
    /// The network of `cfg` with `weights` in the flat order above.
    pub fn new(cfg: &MdrnnConfig, weights: Vec<f32>) -> Result<Self, ModelError> {
        cfg.validate()?;
        let expected = Self::weight_count(cfg);
        if weights.len() != expected {
            return Err(ModelError::Config(format!(
                "mdrnn with {} planes and hidden {} has {expected} weights, got {}",
                cfg.input.planes[0],
                cfg.hidden,
                weights.len()
            )));
        }
        Ok(NativeMdrnn {
            planes: cfg.input.planes[0],
            hidden: cfg.hidden,
            output: cfg.output,
            weights,
        })
    }

    /// `C*k + k^2 + 2k`.
    pub fn weight_count(cfg: &MdrnnConfig) -> usize {
        let (c, k) = (cfg.input.planes[0], cfg.hidden);
        c * k + k * k + 2 * k
    }

    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    pub fn output(&self) -> OutputActivation {
        self.output
    }

    fn parts(&self) -> (&[f32], &[f32], &[f32], &[f32]) {
        let (c, k) = (self.planes, self.hidden);
        let (wi, rest) = self.weights.split_at(c * k);
        let (wh, rest) = rest.split_at(k * k);
        let (wb, wo) = rest.split_at(k);
        (wi, wh, wb, wo)
    }

    /// Per-point outputs (row-major, `rows * columns`) of one board's
    /// planes `[C, rows, columns]` (row-major), into `out`. `scratch` keeps
    /// the hidden states between calls.
    pub fn point_outputs(
        &self,
        planes: &[f32],
        rows: usize,
        columns: usize,
        out: &mut Vec<f32>,
        scratch: &mut Vec<f32>,
    ) {
        let (c, k) = (self.planes, self.hidden);
        let points = rows * columns;
        debug_assert_eq!(planes.len(), c * points);
        let (wi, wh, wb, wo) = self.parts();
        out.clear();
        out.resize(points, 0.0);
        // The input projection of every point, shared by the 4 directions.
        scratch.clear();
        scratch.resize(points * k * 2, 0.0);
        let (proj, states) = scratch.split_at_mut(points * k);
        for p in 0..points {
            let pr = &mut proj[p * k..(p + 1) * k];
            for (a, v) in pr.iter_mut().enumerate() {
                let row = &wi[a * c..(a + 1) * c];
                *v = (0..c).map(|ch| row[ch] * planes[ch * points + p]).sum();
            }
        }
        let mut pred = vec![0f32; k];
        for (flip_r, flip_c) in [(false, false), (false, true), (true, false), (true, true)] {
            // Walk the board in the direction's own order: its (i, j) is
            // the board point (r, c) seen through the flips.
            let point = |i: usize, j: usize| {
                let r = if flip_r { rows - 1 - i } else { i };
                let col = if flip_c { columns - 1 - j } else { j };
                r * columns + col
            };
            for i in 0..rows {
                for j in 0..columns {
                    let here = point(i, j);
                    for (a, s) in pred.iter_mut().enumerate() {
                        let up = if i > 0 {
                            states[point(i - 1, j) * k + a]
                        } else {
                            wb[a]
                        };
                        let left = if j > 0 {
                            states[point(i, j - 1) * k + a]
                        } else {
                            wb[a]
                        };
                        *s = up + left;
                    }
                    let mut o = 0.0;
                    for a in 0..k {
                        let row = &wh[a * k..(a + 1) * k];
                        let rec: f32 = row.iter().zip(&pred).map(|(w, s)| w * s).sum();
                        let u = (proj[here * k + a] + rec).tanh();
                        states[here * k + a] = u;
                        o += wo[a] * u;
                    }
                    out[here] += o;
                }
            }
        }
    }

    /// The value on the config's output scale: the output activation of the
    /// mean per-point output.
    pub fn value_of(&self, outputs: &[f32]) -> f32 {
        let mean = outputs.iter().sum::<f32>() / outputs.len().max(1) as f32;
        match self.output {
            OutputActivation::Sigmoid => 1.0 / (1.0 + (-mean).exp()),
            OutputActivation::Tanh => mean.tanh(),
            OutputActivation::Identity => mean,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{build, seeded_init, ModelConfig};
    use candle_core::{DType, Device, Tensor};
    use candle_nn::{VarBuilder, VarMap};
    use rand::{RngExt, SeedableRng};

    /// The flat weights of a candle model's variables, in the native order.
    fn flat(vm: &VarMap, cfg: &MdrnnConfig) -> Vec<f32> {
        let data = vm.data().lock().unwrap();
        cfg.expected_tensors()
            .iter()
            .flat_map(|(name, _)| {
                data[name]
                    .as_tensor()
                    .flatten_all()
                    .unwrap()
                    .to_vec1::<f32>()
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn agrees_with_the_candle_model_on_several_boards() {
        let dev = Device::Cpu;
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for (k, rows, columns) in [(10, 5, 5), (3, 7, 4), (4, 1, 6), (10, 9, 9)] {
            let cfg = MdrnnConfig::stones(5, k);
            let model_cfg = ModelConfig::Mdrnn(cfg.clone());
            let vm = VarMap::new();
            let net = build(&model_cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
            seeded_init(&vm, &model_cfg, &mut rng, &dev).unwrap();
            let native = NativeMdrnn::new(&cfg, flat(&vm, &cfg)).unwrap();
            let points = rows * columns;
            let planes: Vec<f32> = (0..2 * points)
                .map(|_| if rng.random_bool(0.3) { 1.0 } else { 0.0 })
                .collect();
            let x = Tensor::from_vec(planes.clone(), (1, 2, rows, columns), &dev).unwrap();
            let out = net.forward(&x, None, false).unwrap();
            let expected = out.policy.unwrap().flatten_all().unwrap();
            let expected = expected.to_vec1::<f32>().unwrap();
            let (mut got, mut scratch) = (Vec::new(), Vec::new());
            native.point_outputs(&planes, rows, columns, &mut got, &mut scratch);
            for (p, (a, b)) in got.iter().zip(&expected).enumerate() {
                // f32 sums in another order: relative agreement.
                let tolerance = 1e-4 * b.abs().max(1.0);
                assert!(
                    (a - b).abs() < tolerance,
                    "{rows}x{columns} point {p}: {a} vs {b}"
                );
            }
            let value = out.value.to_vec1::<f32>().unwrap()[0];
            assert!((native.value_of(&got) - value).abs() < 1e-5);
        }
    }

    #[test]
    fn refuses_a_weight_vector_of_the_wrong_length() {
        let cfg = MdrnnConfig::stones(5, 10);
        assert_eq!(NativeMdrnn::weight_count(&cfg), 140);
        let e = NativeMdrnn::new(&cfg, vec![0.0; 139]).unwrap_err();
        assert!(e.to_string().contains("140 weights, got 139"), "{e}");
    }
}
