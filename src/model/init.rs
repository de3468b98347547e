//! Seeded initial weights. candle's CPU backend cannot be seeded, so every
//! model's first weights are drawn here from a plies generator: the same
//! seed gives the same network on any device.

use super::{ModelConfig, WeightInit};
use candle_core::{Device, Tensor};
use candle_nn::VarMap;
use rand::{Rng, RngExt};

/// Overwrites every variable of `varmap` that `cfg` names with fresh draws.
pub fn seeded_init<R: Rng>(
    varmap: &VarMap,
    cfg: &ModelConfig,
    rng: &mut R,
    device: &Device,
) -> candle_core::Result<()> {
    let ModelConfig::Mlp(mlp) = cfg;
    let expected = cfg.expected_tensors();
    let fan_in = |name: &str| -> usize {
        let layer = name.rsplit_once('.').map(|(l, _)| l).unwrap_or(name);
        expected
            .iter()
            .find(|(n, _)| n == &format!("{layer}.weight"))
            .and_then(|(_, s)| s.get(1).copied())
            .unwrap_or(1)
    };
    let data = varmap
        .data()
        .lock()
        .map_err(|_| candle_core::Error::Msg("variable map lock poisoned".into()))?;
    for (name, shape) in &expected {
        let Some(var) = data.get(name) else {
            return Err(candle_core::Error::Msg(format!(
                "no variable '{name}' to initialise"
            )));
        };
        let a = match mlp.init {
            WeightInit::Uniform { a } => a as f32,
            WeightInit::FanIn => 1.0 / (fan_in(name) as f32).sqrt(),
        };
        let n: usize = shape.iter().product();
        let values: Vec<f32> = (0..n).map(|_| rng.random_range(-a..=a)).collect();
        let t = Tensor::from_vec(values, shape.as_slice(), device)?.to_dtype(var.dtype())?;
        var.set(&t)?;
    }
    Ok(())
}
