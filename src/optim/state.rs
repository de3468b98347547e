//! Saving and restoring optimizer state, for resuming a run exactly.
//!
//! Each optimizer lists its state as named tensors (`"<var index>.<buffer>"`,
//! the var index being the var's position in the list the optimizer was
//! built from, and `"step"` for a step count), which a trainer can write
//! with `candle_core::safetensors::save` (dtypes kept, so a restored
//! optimizer continues bit for bit). Loading checks every name, shape and
//! dtype before anything changes.

use std::collections::{HashMap, HashSet};

use candle_core::{DType, Device, Result, Tensor, Var};

use super::OptimError;

/// An optimizer's state as named tensors (see the module docs).
pub type OptimizerState = Vec<(String, Tensor)>;

/// The name of buffer `buf` of var number `index`.
pub(crate) fn key(index: usize, buf: &str) -> String {
    format!("{index}.{buf}")
}

/// A step count as a one-element u32 pair tensor (exact for any count).
pub(crate) fn step_tensor(step: usize) -> Result<Tensor> {
    let s = step as u64;
    Tensor::new(&[(s >> 32) as u32, s as u32], &Device::Cpu)
}

fn err(name: &str, why: String) -> candle_core::Error {
    OptimError::State {
        name: name.to_string(),
        why,
    }
    .into()
}

/// Takes tensors out of a saved state by name, checking them against the
/// vars they belong to, and refuses leftovers at the end.
pub(crate) struct StateReader<'a> {
    state: &'a HashMap<String, Tensor>,
    used: HashSet<String>,
}

impl<'a> StateReader<'a> {
    pub(crate) fn new(state: &'a HashMap<String, Tensor>) -> Self {
        Self {
            state,
            used: HashSet::new(),
        }
    }

    /// Buffer `buf` of var `index`, shaped and typed like `var`, moved to
    /// its device; `None` when absent.
    pub(crate) fn optional(
        &mut self,
        index: usize,
        buf: &str,
        var: &Var,
    ) -> Result<Option<Tensor>> {
        let name = key(index, buf);
        let Some(t) = self.state.get(&name) else {
            return Ok(None);
        };
        if t.dims() != var.dims() {
            return Err(err(
                &name,
                format!("shape {:?}, expected {:?}", t.dims(), var.dims()),
            ));
        }
        if t.dtype() != var.dtype() {
            return Err(err(
                &name,
                format!("dtype {:?}, expected {:?}", t.dtype(), var.dtype()),
            ));
        }
        self.used.insert(name);
        Ok(Some(t.to_device(var.device())?))
    }

    /// Like [`StateReader::optional`], but a missing buffer is an error.
    pub(crate) fn required(&mut self, index: usize, buf: &str, var: &Var) -> Result<Tensor> {
        match self.optional(index, buf, var)? {
            Some(t) => Ok(t),
            None => Err(err(&key(index, buf), "missing".into())),
        }
    }

    /// The step count saved as `"step"`.
    pub(crate) fn step(&mut self) -> Result<usize> {
        let Some(t) = self.state.get("step") else {
            return Err(err("step", "missing".into()));
        };
        if t.dtype() != DType::U32 || t.dims() != [2] {
            return Err(err(
                "step",
                format!("{:?} {:?}, expected u32 [2]", t.dtype(), t.dims()),
            ));
        }
        let v = t.to_vec1::<u32>()?;
        self.used.insert("step".into());
        Ok((((v[0] as u64) << 32) | v[1] as u64) as usize)
    }

    /// Fails on a saved tensor nobody asked for (state of another
    /// optimizer, or of more vars).
    pub(crate) fn finish(self, optimizer: &str) -> Result<()> {
        let mut extra: Vec<&String> = self
            .state
            .keys()
            .filter(|k| !self.used.contains(*k))
            .collect();
        extra.sort();
        match extra.first() {
            None => Ok(()),
            Some(name) => Err(err(
                name,
                format!("not part of the state of this {optimizer} optimizer"),
            )),
        }
    }
}
