//! A one-hidden-layer MLP in plain Rust, for per-position online learning.
//!
//! TD(lambda) updates one position at a time; on a 9x80x1 network a candle
//! step costs far more in dispatch than in arithmetic, so the learner uses
//! this copy. Parameters live in one flat vector,
//! `[hidden.0.weight (H*I, row-major), hidden.0.bias (H), out.weight (H), out.bias (1)]`,
//! so eligibility traces and updates are single loops.

use super::{Activation, MlpConfig, ModelError, WeightInit};
use candle_core::{Device, Tensor};
use rand::{Rng, RngExt};
use std::collections::HashMap;

#[derive(Clone, Debug)]
pub struct NativeMlp {
    inputs: usize,
    hidden: usize,
    activation: Activation,
    params: Vec<f32>,
}

impl NativeMlp {
    /// Fresh weights drawn from `rng` as the config's init says.
    pub fn new<R: Rng>(cfg: &MlpConfig, rng: &mut R) -> Result<Self, ModelError> {
        let hidden = Self::check(cfg)?;
        let n = hidden * cfg.inputs + 2 * hidden + 1;
        let bound = |fan_in: usize| match cfg.init {
            WeightInit::Uniform { a } => a as f32,
            WeightInit::FanIn => 1.0 / (fan_in as f32).sqrt(),
        };
        let (a_in, a_out) = (bound(cfg.inputs), bound(hidden));
        let split = hidden * cfg.inputs + hidden;
        let params = (0..n)
            .map(|i| {
                let a = if i < split { a_in } else { a_out };
                rng.random_range(-a..=a)
            })
            .collect();
        Ok(NativeMlp {
            inputs: cfg.inputs,
            hidden,
            activation: cfg.activation,
            params,
        })
    }

    fn check(cfg: &MlpConfig) -> Result<usize, ModelError> {
        match cfg.hidden.as_slice() {
            [h] if *h > 0 && cfg.inputs > 0 => {
                cfg.sizes().check_weights()?;
                Ok(*h)
            }
            _ => Err(ModelError::Config(format!(
                "the plain-Rust MLP has exactly one hidden layer, got {:?}",
                cfg.hidden
            ))),
        }
    }

    pub fn config(&self) -> MlpConfig {
        MlpConfig {
            inputs: self.inputs,
            hidden: vec![self.hidden],
            activation: self.activation,
            init: WeightInit::FanIn,
        }
    }

    pub fn num_params(&self) -> usize {
        self.params.len()
    }

    pub fn params(&self) -> &[f32] {
        &self.params
    }

    pub fn params_mut(&mut self) -> &mut [f32] {
        &mut self.params
    }

    fn offsets(&self) -> (usize, usize, usize) {
        let w1 = self.hidden * self.inputs;
        (w1, w1 + self.hidden, w1 + 2 * self.hidden)
    }

    /// The value of one input vector.
    pub fn value(&self, x: &[f32]) -> f32 {
        let (b1, w2, b2) = self.offsets();
        let mut y = self.params[b2];
        for h in 0..self.hidden {
            let row = &self.params[h * self.inputs..(h + 1) * self.inputs];
            let z = self.params[b1 + h] + dot(row, x);
            y += self.params[w2 + h] * self.activation.apply(z);
        }
        y
    }

    /// The value and its gradient with respect to every parameter
    /// (written into `grad`, which must have `num_params()` entries).
    pub fn value_and_grad(&self, x: &[f32], grad: &mut [f32]) -> f32 {
        let (b1, w2, b2) = self.offsets();
        let mut y = self.params[b2];
        grad[b2] = 1.0;
        for h in 0..self.hidden {
            let row = &self.params[h * self.inputs..(h + 1) * self.inputs];
            let z = self.params[b1 + h] + dot(row, x);
            let a = self.activation.apply(z);
            let w = self.params[w2 + h];
            y += w * a;
            grad[w2 + h] = a;
            let dz = w * self.activation.derivative(z);
            grad[b1 + h] = dz;
            for (g, &xi) in grad[h * self.inputs..(h + 1) * self.inputs]
                .iter_mut()
                .zip(x)
            {
                *g = dz * xi;
            }
        }
        y
    }

    /// The weights as named tensors (the [`super::Mlp`] names and shapes).
    pub fn to_tensors(&self, device: &Device) -> candle_core::Result<HashMap<String, Tensor>> {
        let (b1, w2, b2) = self.offsets();
        let p = &self.params;
        let mut m = HashMap::new();
        m.insert(
            "hidden.0.weight".into(),
            Tensor::from_slice(&p[..b1], (self.hidden, self.inputs), device)?,
        );
        m.insert(
            "hidden.0.bias".into(),
            Tensor::from_slice(&p[b1..w2], self.hidden, device)?,
        );
        m.insert(
            "out.weight".into(),
            Tensor::from_slice(&p[w2..b2], (1, self.hidden), device)?,
        );
        m.insert("out.bias".into(), Tensor::from_slice(&p[b2..], 1, device)?);
        Ok(m)
    }

    /// Reads weights written by [`Self::to_tensors`] or a candle [`super::Mlp`].
    pub fn from_tensors(
        cfg: &MlpConfig,
        tensors: &HashMap<String, Tensor>,
    ) -> Result<Self, ModelError> {
        let hidden = Self::check(cfg)?;
        let mut params = Vec::with_capacity(hidden * cfg.inputs + 2 * hidden + 1);
        for (name, shape) in cfg.expected_tensors() {
            let t = tensors
                .get(&name)
                .ok_or_else(|| ModelError::Config(format!("missing tensor '{name}'")))?;
            if t.dims() != shape.as_slice() {
                return Err(ModelError::Config(format!(
                    "tensor '{name}' has shape {:?}, expected {shape:?}",
                    t.dims()
                )));
            }
            params.extend(
                t.to_dtype(candle_core::DType::F32)?
                    .flatten_all()?
                    .to_vec1::<f32>()?,
            );
        }
        Ok(NativeMlp {
            inputs: cfg.inputs,
            hidden,
            activation: cfg.activation,
            params,
        })
    }
}

/// `a . b`. A single running f32 sum is one long dependency chain the
/// compiler may not reorder; long vectors (the 609-input Amazons network)
/// are summed in eight independent lanes, which vectorise. Short ones (the
/// 9 inputs of Tic-tac-toe) keep the plain sum, cheaper at that length and
/// bit for bit what earlier versions computed. The order is fixed either
/// way, so results stay reproducible.
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    if a.len() < 4 * LANES {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    } else {
        lane_dot(a, b)
    }
}

const LANES: usize = 8;

fn lane_dot(a: &[f32], b: &[f32]) -> f32 {
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    let mut acc = [0f32; LANES];
    for (x, y) in ca.zip(cb) {
        for k in 0..LANES {
            acc[k] += x[k] * y[k];
        }
    }
    let halves = [
        acc[0] + acc[4],
        acc[1] + acc[5],
        acc[2] + acc[6],
        acc[3] + acc[7],
    ];
    (halves[0] + halves[2]) + (halves[1] + halves[3]) + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Mlp, ValueNet};
    use candle_core::{DType, Var};
    use candle_nn::VarBuilder;
    use rand::SeedableRng;

    fn cfg() -> MlpConfig {
        MlpConfig {
            inputs: 9,
            hidden: vec![7],
            activation: Activation::Elliott { beta: 5.0 },
            init: WeightInit::Uniform { a: 0.2 },
        }
    }

    #[test]
    fn agrees_with_the_candle_mlp_and_its_autograd() {
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(3);
        let net = NativeMlp::new(&cfg(), &mut rng).unwrap();
        let tensors = net.to_tensors(&Device::Cpu).unwrap();
        let vars: HashMap<String, Var> = tensors
            .iter()
            .map(|(k, t)| (k.clone(), Var::from_tensor(t).unwrap()))
            .collect();
        let vt: HashMap<String, Tensor> = vars
            .iter()
            .map(|(k, v)| (k.clone(), v.as_tensor().clone()))
            .collect();
        let vb = VarBuilder::from_tensors(vt, DType::F32, &Device::Cpu);
        let mlp = Mlp::new(&cfg().into(), vb).unwrap();
        let x: Vec<f32> = (0..9).map(|i| [1.0, -1.0, 0.0][i % 3]).collect();
        let xt = Tensor::from_slice(&x, (1, 9), &Device::Cpu).unwrap();
        let y = mlp.forward(&xt, None, false).unwrap().value;
        let grads = y.sum_all().unwrap().backward().unwrap();
        let mut g = vec![0f32; net.num_params()];
        let v = net.value_and_grad(&x, &mut g);
        assert!((v - y.to_vec1::<f32>().unwrap()[0]).abs() < 1e-5);
        assert!((v - net.value(&x)).abs() < 1e-6);
        let mut flat = Vec::new();
        for (name, _) in cfg().expected_tensors() {
            let gt = grads.get(vars[&name].as_tensor()).unwrap();
            flat.extend(gt.flatten_all().unwrap().to_vec1::<f32>().unwrap());
        }
        assert_eq!(flat.len(), g.len());
        for (a, b) in flat.iter().zip(&g) {
            assert!((a - b).abs() < 1e-5, "candle {a} vs native {b}");
        }
        let back = NativeMlp::from_tensors(&cfg(), &tensors).unwrap();
        assert_eq!(back.params(), net.params());
    }

    #[test]
    fn lane_dot_matches_a_double_precision_sum_at_every_length() {
        let mut rng = crate::util::seeded_rng(3, 0);
        for len in 0..80 {
            let a: Vec<f32> = (0..len).map(|_| rng.random_range(-1.0..1.0)).collect();
            let b: Vec<f32> = (0..len).map(|_| rng.random_range(-1.0..1.0)).collect();
            let exact: f64 = a
                .iter()
                .zip(&b)
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum();
            let got = dot(&a, &b);
            assert!(
                (f64::from(got) - exact).abs() < 1e-5,
                "length {len}: {got} vs {exact}"
            );
        }
    }

    #[test]
    fn refuses_two_hidden_layers() {
        let mut c = cfg();
        c.hidden = vec![4, 4];
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(0);
        assert!(NativeMlp::new(&c, &mut rng).is_err());
    }

    #[test]
    fn init_respects_the_uniform_bound() {
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(1);
        let net = NativeMlp::new(&cfg(), &mut rng).unwrap();
        assert!(net.params().iter().all(|p| p.abs() <= 0.2));
        assert!(net.params().iter().any(|p| p.abs() > 0.15));
    }
}
