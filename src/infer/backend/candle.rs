//! A candle model on a device: one forward pass per batch.

use super::{Backend, Encoded, Outputs};
use crate::infer::InferError;
use crate::model::{OutputActivation, ValueNet};
use candle_core::{DType, Device, Tensor};

pub struct CandleBackend {
    model: Box<dyn ValueNet>,
    device: Device,
    /// The dtype of the model's weights, and so of its inputs.
    dtype: DType,
}

impl CandleBackend {
    /// `model` with fixed weights of `dtype` on `device` (frozen here:
    /// folded batch norms and kernel layouts are prepared once).
    pub fn new(model: Box<dyn ValueNet>, device: Device, dtype: DType) -> Result<Self, InferError> {
        model.freeze()?;
        Ok(CandleBackend {
            model,
            device,
            dtype,
        })
    }
}

impl Backend for CandleBackend {
    fn run(&self, batch: &Encoded, policy: bool) -> Result<Outputs, InferError> {
        if batch.rows == 0 {
            return Ok(Outputs::default());
        }
        let [c, h, w] = batch.shape;
        let x = Tensor::from_vec(batch.planes_f32(), (batch.rows, c, h, w), &self.device)?
            .to_dtype(self.dtype)?;
        let g = (batch.globals_len > 0)
            .then(|| {
                Tensor::from_slice(
                    &batch.globals,
                    (batch.rows, batch.globals_len),
                    &self.device,
                )?
                .to_dtype(self.dtype)
            })
            .transpose()?;
        let out = self.model.forward(&x, g.as_ref(), false)?;
        let policy = match (policy, out.policy) {
            (true, Some(p)) => Some(p.to_dtype(DType::F32)?.to_vec2::<f32>()?),
            _ => None,
        };
        Ok(Outputs {
            values: out.value.to_dtype(DType::F32)?.to_vec1::<f32>()?,
            policy,
        })
    }

    fn output(&self) -> OutputActivation {
        self.model.output()
    }

    fn has_policy(&self) -> bool {
        self.model.has_policy()
    }

    fn name(&self) -> String {
        let device = match &self.device {
            Device::Cpu => "cpu".to_string(),
            Device::Cuda(_) => "cuda".to_string(),
            Device::Metal(_) => "metal".to_string(),
        };
        match self.dtype {
            DType::F32 => format!("candle-{device}"),
            other => format!("candle-{device}-{}", other.as_str()),
        }
    }
}
