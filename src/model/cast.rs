//! A model that computes in another float type (bf16 for mixed-precision
//! training) behind the f32 interface every caller uses: planes and
//! globals are cast on the way in, values and policy logits back to f32 on
//! the way out, so losses, metrics and gradients' consumers stay in f32.
//! The casts are graph ops: gradients flow back through them to the
//! inner model's variables in their own type.

use candle_core::{DType, Result};

use super::{Batch, ModelIo, ModelOutput, ValueNet};

/// `inner` (built over variables of type `dtype`) with f32 inputs and
/// outputs.
pub struct CastNet {
    inner: Box<dyn ValueNet>,
    dtype: DType,
}

impl CastNet {
    pub fn new(inner: Box<dyn ValueNet>, dtype: DType) -> CastNet {
        CastNet { inner, dtype }
    }

    /// The type the inner model computes in.
    pub fn dtype(&self) -> DType {
        self.dtype
    }
}

impl ValueNet for CastNet {
    fn io(&self) -> &ModelIo {
        self.inner.io()
    }

    fn forward_checked(&self, batch: Batch<'_>) -> Result<ModelOutput> {
        let planes = batch.planes.to_dtype(self.dtype)?;
        let globals = batch.globals.map(|g| g.to_dtype(self.dtype)).transpose()?;
        let out = self.inner.forward_checked(Batch {
            planes: &planes,
            globals: globals.as_ref(),
            train: batch.train,
        })?;
        Ok(ModelOutput {
            value: out.value.to_dtype(DType::F32)?,
            policy: out.policy.map(|p| p.to_dtype(DType::F32)).transpose()?,
        })
    }

    fn freeze(&self) -> Result<()> {
        self.inner.freeze()
    }

    fn has_policy(&self) -> bool {
        self.inner.has_policy()
    }
}
