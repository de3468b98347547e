//! The inference backend seam: encoded positions in, a network's raw
//! outputs out.
//!
//! Every evaluator of a network is a [`ModelEvaluator`](super::ModelEvaluator):
//! it encodes a batch once, hands it to a [`Backend`], and turns the raw
//! outputs into side-to-move values on `[-1, 1]`. A backend only runs the
//! network; which backend runs a given model is decided in one place,
//! [`weights_evaluator_on`](super::weights_evaluator_on).
//!
//! | file | backend |
//! | --- | --- |
//! | `candle.rs` | any [`ValueNet`](crate::model::ValueNet) on any candle device (the CPU's fused kernels included) |
//! | `native_mlp.rs` | the plain-Rust one-hidden-layer MLP (TD(lambda)'s networks) |
//! | `native_mdrnn.rs` | the plain-Rust MDRNN, values and per-point policies |
//! | `cuda_plan/` | an inference plan on CUDA: cuDNN, cuBLAS, one CUDA graph per bucket (`--features cuda`) |

mod candle;
#[cfg(feature = "cuda")]
mod cuda_plan;
mod encoded;
mod native_mdrnn;
mod native_mlp;

pub use self::candle::CandleBackend;
#[cfg(feature = "cuda")]
pub use cuda_plan::{cuda_plan_backend, CudaPlanOptions};
pub use encoded::Encoded;
pub use native_mdrnn::NativeMdrnnBackend;
pub use native_mlp::NativeMlpBackend;

use super::InferError;
use crate::model::OutputActivation;

/// A network's raw outputs for a batch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outputs {
    /// The value head's output per position, on the model's own scale
    /// ([`Backend::output`]) and in its encoder's perspective.
    pub values: Vec<f32>,
    /// Policy logits per position, when asked for and the model has a
    /// policy head.
    pub policy: Option<Vec<Vec<f32>>>,
}

/// Runs one network on encoded batches.
pub trait Backend: Send + Sync {
    /// The network's outputs for `batch`; `policy` asks for the policy
    /// head's logits too.
    fn run(&self, batch: &Encoded, policy: bool) -> Result<Outputs, InferError>;

    /// The value head's output activation (how its values map to `[-1, 1]`).
    fn output(&self) -> OutputActivation;

    /// Whether the network has a policy head.
    fn has_policy(&self) -> bool;

    /// Whether many positions in one call cost much less each than one at
    /// a time.
    fn prefers_batches(&self) -> bool {
        true
    }

    /// The backend's name for reports (`candle-cpu`, `native-mlp`, ...).
    fn name(&self) -> String;
}

/// Which implementation runs a network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendChoice {
    /// The fastest for the model and device: the plain-Rust MLP and MDRNN
    /// on the CPU where the model is one, else candle.
    #[default]
    Auto,
    /// candle's model on the device, whatever the model.
    Candle,
    /// The native device backend: the model's inference plan with cuDNN
    /// and cuBLAS on CUDA (builds with the `cuda` feature).
    Native,
    /// The CPU twin of a device plan ([`crate::infer::plan`]) in a
    /// precision: what a native GPU backend computes, computed slowly.
    PlanTwin(crate::infer::plan::Precision),
}
