//! Moving a model's variables between the graph and plain tensors: the
//! snapshot that checkpoints and run states save, and its restoration.

use std::collections::HashMap;

use candle_core::{Device, Tensor};
use candle_nn::VarMap;

use super::FitError;

/// All variables (running statistics included), copied to the CPU.
pub(super) fn snapshot(varmap: &VarMap) -> Result<HashMap<String, Tensor>, FitError> {
    let data = match varmap.data().lock() {
        Ok(d) => d,
        Err(p) => p.into_inner(),
    };
    let mut out = HashMap::new();
    for (k, v) in data.iter() {
        out.insert(k.clone(), v.as_tensor().to_device(&Device::Cpu)?.copy()?);
    }
    Ok(out)
}

pub(super) fn restore(
    varmap: &VarMap,
    tensors: &HashMap<String, Tensor>,
    what: &str,
) -> Result<(), FitError> {
    let data = match varmap.data().lock() {
        Ok(d) => d,
        Err(p) => p.into_inner(),
    };
    for (k, v) in data.iter() {
        let t = tensors.get(k).ok_or_else(|| FitError::Invalid {
            field: "weights",
            why: format!("{what} lacks tensor `{k}`"),
        })?;
        if t.dims() != v.dims() {
            return Err(FitError::Invalid {
                field: "weights",
                why: format!(
                    "{what}: tensor `{k}` has shape {:?}, expected {:?}",
                    t.dims(),
                    v.dims()
                ),
            });
        }
        v.set(&t.to_device(v.device())?.to_dtype(v.dtype())?)?;
    }
    Ok(())
}
