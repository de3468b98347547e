//! plies' side of `plies bench device`: a network's forward pass (f32 and
//! bf16) and training step on the device, timed with the device
//! synchronised before every clock reading, and the bf16 outputs' distance
//! from f32's.

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor};
use candle_nn::{Optimizer, VarBuilder, VarMap};
use rand::RngExt;

use super::super::models::timed;
use super::super::{nesterov_sgd, Result};
use crate::infer::backend::{Backend, BackendChoice, Encoded};
use crate::infer::plan::Precision;
use crate::infer::weights_backend;
use crate::model::{build, seeded_init, trainable_vars, ModelConfig, ValueNet};
use crate::train::mixed_precision::{ComputeCopy, Tf32Products};
use crate::util::seeded_rng;

/// How often a plane point is set in the random inputs (about a board's
/// share of occupied points).
const DENSITY: f64 = 0.15;

/// Timing of every figure: rounds of at least `seconds` (and 3 calls); the
/// best round counts.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub seconds: f64,
    pub rounds: usize,
}

/// A network with seeded weights on the device, in evaluation mode, and
/// those weights on the CPU (for the checkpoint the PyTorch peer loads).
pub struct Built {
    pub weights: HashMap<String, Tensor>,
    pub net: Box<dyn ValueNet>,
}

/// `cfg` with the weights `seed` draws, on `device`. The network reads
/// plain tensors, not variables, as an evaluator serving a checkpoint
/// does: no pass keeps its intermediate results for a backward pass.
pub fn build_seeded(cfg: &ModelConfig, seed: u64, device: &Device) -> Result<Built> {
    let varmap = VarMap::new();
    build(
        cfg,
        VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu),
    )?;
    seeded_init(&varmap, cfg, &mut seeded_rng(seed, 0), &Device::Cpu)?;
    let weights: HashMap<String, Tensor> = {
        let data = varmap.data().lock().unwrap_or_else(|p| p.into_inner());
        data.iter()
            .map(|(name, var)| (name.clone(), var.as_tensor().detach()))
            .collect()
    };
    let net = with_weights(cfg, &weights, DType::F32, device)?;
    Ok(Built { weights, net })
}

/// The network with `weights` converted to `dtype` on `device`, frozen.
pub fn with_weights(
    cfg: &ModelConfig,
    weights: &HashMap<String, Tensor>,
    dtype: DType,
    device: &Device,
) -> Result<Box<dyn ValueNet>> {
    let mut on_device = HashMap::new();
    for (name, t) in weights {
        on_device.insert(name.clone(), t.to_dtype(dtype)?.to_device(device)?);
    }
    let net = build(cfg, VarBuilder::from_tensors(on_device, dtype, device))?;
    net.freeze()?;
    Ok(net)
}

/// `batch` random 0/1 input planes of `shape`, as `U8` on the CPU (the
/// file the PyTorch peer reads; [`on_device`] widens them).
pub fn planes(shape: [usize; 3], batch: usize, seed: u64) -> Result<Tensor> {
    let mut rng = seeded_rng(seed, 1);
    let n = batch * shape.iter().product::<usize>();
    let v: Vec<u8> = (0..n).map(|_| rng.random_bool(DENSITY) as u8).collect();
    Ok(Tensor::from_vec(
        v,
        (batch, shape[0], shape[1], shape[2]),
        &Device::Cpu,
    )?)
}

/// The first `rows` planes as `dtype` on `device` (widened to f32 on the
/// CPU: not every device casts `U8` to every float type).
pub fn on_device(planes: &Tensor, rows: usize, dtype: DType, device: &Device) -> Result<Tensor> {
    Ok(planes
        .narrow(0, 0, rows)?
        .to_dtype(DType::F32)?
        .to_device(device)?
        .to_dtype(dtype)?)
}

/// Positions/s of the forward pass of `x` (already on the device), each
/// call waiting for its result as a search does.
pub fn infer_rate(net: &dyn ValueNet, x: &Tensor, t: Timing) -> Result<f64> {
    let device = x.device().clone();
    let fwd = || -> Result<()> {
        drop(net.forward(x, None, false)?);
        device.synchronize()?;
        Ok(())
    };
    for _ in 0..3 {
        fwd()?;
    }
    Ok(timed(fwd, t.seconds, 3, t.rounds)? * x.dim(0)? as f64)
}

/// The native backend of `cfg` with `weights` (its inference plan on
/// cuDNN and cuBLAS) in `precision` on `device`, for planes of `shape`
/// without globals.
pub fn native_backend(
    cfg: &ModelConfig,
    weights: &HashMap<String, Tensor>,
    shape: [usize; 3],
    device: &Device,
    precision: Precision,
) -> Result<Box<dyn Backend>> {
    let globals = cfg.input().map_or(0, |i| i.globals);
    Ok(weights_backend(
        cfg,
        weights,
        (shape, globals),
        device,
        BackendChoice::Native,
        precision,
    )?)
}

/// The first `rows` of `planes` (0/1 `U8`) as the int8 batch a backend
/// reads, with `globals` zero globals a row.
pub fn encoded(planes: &Tensor, rows: usize, globals: usize) -> Result<Encoded> {
    let (_, c, h, w) = planes.dims4()?;
    let bytes: Vec<u8> = planes.narrow(0, 0, rows)?.flatten_all()?.to_vec1()?;
    Ok(Encoded {
        rows,
        shape: [c, h, w],
        globals_len: globals,
        planes: bytes.into_iter().map(|b| b as i8).collect(),
        globals: vec![0.0; rows * globals],
    })
}

/// Positions/s of `backend` on `batch`: the planes copied to the device
/// and the values back in every call, as a search's evaluator pays them.
pub fn backend_rate(backend: &dyn Backend, batch: &Encoded, t: Timing) -> Result<f64> {
    let run = || -> Result<()> {
        drop(backend.run(batch, false)?);
        Ok(())
    };
    for _ in 0..3 {
        run()?;
    }
    Ok(timed(run, t.seconds, 3, t.rounds)? * batch.rows as f64)
}

/// The values `[B]` as f32 on the CPU.
pub fn values(net: &dyn ValueNet, x: &Tensor) -> Result<Vec<f32>> {
    Ok(net
        .value(x, None)?
        .to_dtype(DType::F32)?
        .to_device(&Device::Cpu)?
        .to_vec1()?)
}

/// Max and mean |a - b|.
pub fn abs_diff(a: &[f32], b: &[f32]) -> (f64, f64) {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| (x - y).abs() as f64).collect();
    let max = d.iter().copied().fold(0.0, f64::max);
    (max, d.iter().sum::<f64>() / d.len().max(1) as f64)
}

/// Positions/s of training steps (forward in training mode + MSE + backward
/// and SGD with Nesterov momentum) on `planes`, against seeded targets.
/// In bf16 the steps run as `plies train --precision bf16` runs them: on
/// bf16 copies of the f32 weights, refreshed before each step, their
/// gradients widened to f32 for the optimizer ([`ComputeCopy`]).
pub fn train_rate(
    cfg: &ModelConfig,
    seed: u64,
    x: &Tensor,
    t: Timing,
    precision: Precision,
) -> Result<f64> {
    let device = x.device().clone();
    let varmap = VarMap::new();
    let net = build(cfg, VarBuilder::from_varmap(&varmap, DType::F32, &device))?;
    seeded_init(&varmap, cfg, &mut seeded_rng(seed, 0), &device)?;
    let masters = trainable_vars(&varmap);
    let copy = match precision {
        Precision::Bf16 => Some(ComputeCopy::new(
            cfg,
            &varmap,
            &masters,
            DType::BF16,
            &device,
        )?),
        Precision::F32 | Precision::Tf32 => None,
    };
    let _products = Tf32Products::set(precision);
    let mut opt = nesterov_sgd(masters)?;
    let batch = x.dim(0)?;
    let mut rng = seeded_rng(seed, 2);
    let targets: Vec<f32> = (0..batch).map(|_| rng.random::<f32>()).collect();
    let targets = Tensor::from_vec(targets, batch, &device)?;
    let mut step = || -> Result<()> {
        let y = match &copy {
            Some(c) => {
                c.refresh()?;
                c.net.forward(x, None, true)?.value
            }
            None => net.forward(x, None, true)?.value,
        };
        let mut grads = (y - &targets)?.sqr()?.mean_all()?.backward()?;
        if let Some(c) = &copy {
            c.to_masters(&mut grads)?;
        }
        opt.step(&grads)?;
        device.synchronize()?;
        Ok(())
    };
    for _ in 0..3 {
        step()?;
    }
    Ok(timed(step, t.seconds, 3, t.rounds)? * batch as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_are_seeded_zeros_and_ones() {
        let a = planes([2, 3, 3], 4, 5).unwrap();
        let b = planes([2, 3, 3], 4, 5).unwrap();
        let c = planes([2, 3, 3], 4, 6).unwrap();
        let (a, b, c): (Vec<u8>, Vec<u8>, Vec<u8>) = (
            a.flatten_all().unwrap().to_vec1().unwrap(),
            b.flatten_all().unwrap().to_vec1().unwrap(),
            c.flatten_all().unwrap().to_vec1().unwrap(),
        );
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().all(|&v| v <= 1));
    }

    #[test]
    fn abs_diff_is_max_and_mean() {
        assert_eq!(abs_diff(&[1.0, 2.0], &[1.5, 1.0]), (1.0, 0.75));
    }
}
