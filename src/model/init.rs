//! Seeded initial weights. candle's CPU backend cannot be seeded, so every
//! model's first weights are drawn here from a plies generator: the same
//! seed gives the same network on any device.
//!
//! Each model config lists how each of its tensors starts
//! ([`ModelConfig::init_plan`]); [`seeded_init`] walks that list in name
//! order and draws from one generator.

use super::ModelConfig;
use candle_core::{Device, Tensor};
use candle_nn::VarMap;
use rand::{Rng, RngExt};

/// How one tensor starts.
#[derive(Clone, Debug, PartialEq)]
pub enum Draw {
    /// Uniform in `[-a, a]`.
    Uniform(f32),
    /// Normal with mean 0 and this standard deviation.
    Normal(f32),
    /// Every value the same (batch-norm scales 1, shifts and running means 0).
    Const(f32),
    /// Exactly these values, row-major (e.g. material values).
    Values(Vec<f32>),
}

/// One entry of a model's initialisation plan.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorInit {
    pub name: String,
    pub shape: Vec<usize>,
    pub draw: Draw,
}

impl TensorInit {
    pub fn new(name: impl Into<String>, shape: Vec<usize>, draw: Draw) -> Self {
        TensorInit {
            name: name.into(),
            shape,
            draw,
        }
    }
}

/// Uniform bound `1/sqrt(fan_in)` (PyTorch's default for `nn.Linear` and `nn.Conv2d`).
pub fn fan_in_bound(fan_in: usize) -> f32 {
    1.0 / (fan_in.max(1) as f32).sqrt()
}

fn normal<R: Rng>(rng: &mut R) -> f32 {
    // Box-Muller; 1 - u keeps the logarithm finite.
    let u: f32 = 1.0 - rng.random::<f32>();
    let v: f32 = rng.random::<f32>();
    (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
}

/// The values of one plan entry.
pub fn draw_values<R: Rng>(t: &TensorInit, rng: &mut R) -> Vec<f32> {
    let n: usize = t.shape.iter().product();
    match &t.draw {
        Draw::Uniform(a) => {
            let a = *a;
            (0..n).map(|_| rng.random_range(-a..=a)).collect()
        }
        Draw::Normal(s) => (0..n).map(|_| s * normal(rng)).collect(),
        Draw::Const(c) => vec![*c; n],
        Draw::Values(v) => v.clone(),
    }
}

/// Overwrites every variable of `varmap` that `cfg` names with fresh draws.
pub fn seeded_init<R: Rng>(
    varmap: &VarMap,
    cfg: &ModelConfig,
    rng: &mut R,
    device: &Device,
) -> candle_core::Result<()> {
    let mut plan = cfg.init_plan();
    plan.sort_by(|a, b| a.name.cmp(&b.name));
    let data = varmap
        .data()
        .lock()
        .map_err(|_| candle_core::Error::Msg("variable map lock poisoned".into()))?;
    for t in &plan {
        let Some(var) = data.get(&t.name) else {
            return Err(candle_core::Error::Msg(format!(
                "no variable '{}' to initialise",
                t.name
            )));
        };
        let values = draw_values(t, rng);
        let v = Tensor::from_vec(values, t.shape.as_slice(), device)?.to_dtype(var.dtype())?;
        var.set(&v)?;
    }
    Ok(())
}

/// Fresh tensors for `cfg` from `rng`, without building the model.
pub fn seeded_tensors<R: Rng>(
    cfg: &ModelConfig,
    rng: &mut R,
    device: &Device,
) -> candle_core::Result<std::collections::HashMap<String, Tensor>> {
    let mut plan = cfg.init_plan();
    plan.sort_by(|a, b| a.name.cmp(&b.name));
    plan.iter()
        .map(|t| {
            let v = Tensor::from_vec(draw_values(t, rng), t.shape.as_slice(), device)?;
            Ok((t.name.clone(), v))
        })
        .collect()
}
