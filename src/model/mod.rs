//! Models: serde configs and the candle modules built from them.
//!
//! Every model maps encoded positions `[B, features]` to one value per
//! position `[B]`. [`NativeMlp`] is a plain-Rust copy of the one-hidden-layer
//! [`Mlp`] for per-position online learning (TD(lambda)), where candle's
//! per-operation overhead dominates a 9x80x1 network; the two share tensor
//! names and agree to float precision (tested).
//!
//! ```
//! use candle_core::{Device, Tensor, DType};
//! use candle_nn::{VarBuilder, VarMap};
//! use plies::model::{build, ModelConfig, MlpConfig, Activation, WeightInit};
//! let cfg = ModelConfig::Mlp(MlpConfig {
//!     inputs: 9, hidden: vec![40], activation: Activation::Elliott { beta: 5.0 },
//!     init: WeightInit::Uniform { a: 0.2 },
//! });
//! let vm = VarMap::new();
//! let net = build(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu)).unwrap();
//! let x = Tensor::zeros((4, 9), DType::F32, &Device::Cpu).unwrap();
//! assert_eq!(net.forward(&x).unwrap().dims(), &[4]);
//! ```

mod activation;
mod cnn3;
mod config;
mod error;
mod init;
pub mod kernels;
mod mlp;
mod native_mlp;

pub use activation::{elliott, Activation};
pub use cnn3::{Cnn3, Cnn3Config, Cnn3Output};
pub use config::{ModelConfig, WeightInit};
pub use error::ModelError;
pub use init::seeded_init;
pub use mlp::{Mlp, MlpConfig};
pub use native_mlp::NativeMlp;

use candle_core::Tensor;
use candle_nn::VarBuilder;

/// A value network: `[B, features]` -> `[B]`.
pub trait ValueNet: Send + Sync {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor>;
}

/// Builds the model a config describes, creating or reading its variables
/// through `vb`.
pub fn build(cfg: &ModelConfig, vb: VarBuilder) -> Result<Box<dyn ValueNet>, ModelError> {
    match cfg {
        ModelConfig::Mlp(c) => Ok(Box::new(Mlp::new(c, vb)?)),
    }
}
