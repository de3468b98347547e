//! A model's weights behind an encoder, as the fastest evaluator for them:
//! the plain-Rust MDRNN or one-hidden-layer MLP on the CPU, else the
//! candle model. Checkpoints and
//! evolved weight vectors both come through here.

use super::{CandleEvaluator, Evaluator, InferError, NativeEvaluator, NativeMdrnnEvaluator};
use crate::encode::Encoder;
use crate::game::Game;
use crate::model::{build, ModelConfig, ModelError, NativeMdrnn, NativeMlp, OutputActivation};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use std::collections::HashMap;
use std::sync::Arc;

/// The evaluator of `model` with `tensors` (named as the model's
/// `expected_tensors`) reading `encoder`'s planes on `device`.
pub fn weights_evaluator<G: Game>(
    encoder: Box<dyn Encoder<G>>,
    model: &ModelConfig,
    tensors: &HashMap<String, Tensor>,
    device: &Device,
    label: impl Into<String>,
) -> Result<Arc<dyn Evaluator<G>>, InferError> {
    if let (ModelConfig::Mdrnn(cfg), Device::Cpu) = (model, device) {
        let mut flat = Vec::new();
        for (name, _) in cfg.expected_tensors() {
            let t = tensors.get(&name).ok_or_else(|| {
                ModelError::Config(format!("mdrnn: no tensor '{name}' among the weights"))
            })?;
            flat.extend(t.flatten_all()?.to_dtype(DType::F32)?.to_vec1::<f32>()?);
        }
        let net = NativeMdrnn::new(cfg, flat)?;
        return Ok(Arc::new(NativeMdrnnEvaluator::new(encoder, net, label)));
    }
    // A one-hidden-layer MLP with a linear output (TD(lambda)'s networks):
    // the plain-Rust copy, far cheaper per position than a candle call
    // inside a search.
    if let (ModelConfig::Mlp(cfg), Device::Cpu) = (model, device) {
        if cfg.hidden.len() == 1 && cfg.output == OutputActivation::Identity && cfg.dropout == 0.0 {
            let net = NativeMlp::from_tensors(&cfg.shape(), tensors)?;
            return Ok(Arc::new(NativeEvaluator::labelled(
                Arc::from(encoder),
                net,
                label,
            )));
        }
    }
    let on_device = tensors
        .iter()
        .map(|(k, t)| Ok((k.clone(), t.to_device(device)?)))
        .collect::<Result<HashMap<_, _>, candle_core::Error>>()?;
    let vb = VarBuilder::from_tensors(on_device, DType::F32, device);
    let net = build(model, vb)?;
    // The weights are fixed from here on.
    net.freeze()?;
    Ok(Arc::new(CandleEvaluator::new(
        encoder,
        net,
        device.clone(),
        label,
    )))
}

/// `flat` split into the tensors `model` expects, in
/// [`ModelConfig::expected_tensors`] order (the layout evolution uses).
pub fn tensors_from_flat(
    model: &ModelConfig,
    flat: &[f32],
) -> Result<HashMap<String, Tensor>, InferError> {
    let expected = model.expected_tensors();
    let total: usize = expected
        .iter()
        .map(|(_, s)| s.iter().product::<usize>())
        .sum();
    if total != flat.len() {
        return Err(ModelError::Config(format!(
            "{} has {total} weights, got {}",
            model.kind(),
            flat.len()
        ))
        .into());
    }
    let mut at = 0;
    let mut out = HashMap::new();
    for (name, shape) in expected {
        let n: usize = shape.iter().product();
        let t = Tensor::from_vec(flat[at..at + n].to_vec(), shape, &Device::Cpu)?;
        out.insert(name, t);
        at += n;
    }
    Ok(out)
}

/// The weights of `tensors` as one flat vector, in
/// [`ModelConfig::expected_tensors`] order.
pub fn flat_from_tensors(
    model: &ModelConfig,
    tensors: &HashMap<String, Tensor>,
) -> Result<Vec<f32>, InferError> {
    let mut flat = Vec::new();
    for (name, _) in model.expected_tensors() {
        let t = tensors
            .get(&name)
            .ok_or_else(|| ModelError::Config(format!("{}: no tensor '{name}'", model.kind())))?;
        flat.extend(t.flatten_all()?.to_dtype(DType::F32)?.to_vec1::<f32>()?);
    }
    Ok(flat)
}
