//! Models: serde configs and the candle modules built from them.
//!
//! Every model reads a batch of encoded positions, planes `[B, C, H, W]`
//! (f32) plus optional global features `[B, G]`, and returns a
//! [`ModelOutput`]: one value per position `[B]` and, for models with a
//! policy head (resnet with `policy: true`, mdrnn), move preferences per
//! board point `[B, H*W]`. `train` switches dropout and batch norm to their
//! training behaviour.
//!
//! | kind | config | module | policy |
//! | --- | --- | --- | --- |
//! | `linear` | [`LinearConfig`] | [`Linear`]: piece-square weights | no |
//! | `mlp` | [`MlpNetConfig`] | [`Mlp`]: flattened planes ++ globals | no |
//! | `cnn3` | [`Cnn3NetConfig`] | [`Cnn3Net`] over [`Cnn3`] | no |
//! | `resnet` | [`ResNetConfig`] | [`ResNet`]: residual tower | optional |
//! | `mdrnn` | [`MdrnnConfig`] | [`Mdrnn`]: four diagonal swiping units | yes |
//!
//! The input geometry is part of the config ([`ModelConfig::check_input`]
//! compares it with an encoder); the output activation (sigmoid, tanh,
//! identity) too. Each module's docs list the tensor names a checkpoint's
//! `model.safetensors` uses (PyTorch's layouts).
//!
//! [`NativeMlp`] is a plain-Rust copy of the one-hidden-layer [`Mlp`] for
//! per-position online learning (TD(lambda)), where candle's per-operation
//! overhead dominates a 9x80x1 network; the two share tensor names and
//! agree to float precision (tested).
//!
//! ```
//! use candle_core::{Device, Tensor, DType};
//! use candle_nn::{VarBuilder, VarMap};
//! use plies::model::{build, seeded_init, InputShape, ModelConfig, ResNetConfig};
//! use rand::SeedableRng;
//! let cfg = ModelConfig::Resnet(ResNetConfig {
//!     policy: true,
//!     ..ResNetConfig::tiny(InputShape::new([2, 9, 9], 0))
//! });
//! let vm = VarMap::new();
//! let dev = Device::Cpu;
//! let net = build(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
//! seeded_init(&vm, &cfg, &mut rand::rngs::StdRng::seed_from_u64(1), &dev).unwrap();
//! let planes = Tensor::zeros((4, 2, 9, 9), DType::F32, &dev).unwrap();
//! let out = net.forward(&planes, None, false).unwrap();
//! assert_eq!(out.value.dims(), &[4]);
//! assert_eq!(out.policy.unwrap().dims(), &[4, 81]);
//! ```

mod activation;
mod cast;
mod cnn3;
mod cnn3_net;
mod config;
pub mod device_kernels;
pub mod dropout;
mod error;
mod frozen_mlp;
mod init;
mod io;
pub mod kernels;
mod linear;
mod mdrnn;
mod mlp;
mod native_mdrnn;
mod native_mlp;
mod resnet;
mod size;
mod stock_conv;
#[cfg(test)]
pub(crate) mod test_tensors;

pub use activation::{elliott, Activation};
pub use cast::CastNet;
pub use cnn3::{Cnn3, Cnn3Config, Cnn3Output};
pub use cnn3_net::{Cnn3Net, Cnn3NetConfig};
pub use config::{is_running_stat, ModelConfig, WeightInit};
pub use error::ModelError;
pub use frozen_mlp::FrozenMlp;
pub use init::{draw_values, fan_in_bound, seeded_init, seeded_tensors, Draw, TensorInit};
pub use io::{Batch, InputShape, ModelInput, ModelIo, ModelOutput, OutputActivation};
pub use linear::{Linear, LinearConfig, LinearInit, ARIMAA_MATERIAL, GLOBALS_WEIGHT};
pub use mdrnn::{Mdrnn, MdrnnConfig};
pub use mlp::{Mlp, MlpConfig, MlpNetConfig};
pub use native_mdrnn::NativeMdrnn;
pub use native_mlp::NativeMlp;
pub use resnet::{ResNet, ResNetConfig};
pub use size::{ParamCount, F32_BYTES};

use candle_core::{Tensor, Var};
use candle_nn::{VarBuilder, VarMap};

/// A model: planes `[B, C, H, W]` (+ globals `[B, G]`) -> [`ModelOutput`].
pub trait ValueNet: Send + Sync {
    /// The model's name, input and value scale.
    fn io(&self) -> &ModelIo;

    /// The model's pass over a batch that [`forward`](Self::forward) has
    /// checked against [`io`](Self::io).
    fn forward_checked(&self, batch: Batch<'_>) -> candle_core::Result<ModelOutput>;

    /// `train` turns on dropout and batch-norm batch statistics (which also
    /// updates the running statistics); evaluation passes `false`.
    fn forward(
        &self,
        planes: &Tensor,
        globals: Option<&Tensor>,
        train: bool,
    ) -> candle_core::Result<ModelOutput> {
        self.io().check(planes, globals)?;
        self.forward_checked(Batch {
            planes,
            globals,
            train,
        })
    }

    /// The values `[B]` before the output activation (a sigmoid model's
    /// logits): the scale comparison training and move ranking work on.
    /// By default the inverse of the activation of [`forward`](Self::forward)'s
    /// value; models that have it at hand return it exactly.
    fn pre_activation(
        &self,
        planes: &Tensor,
        globals: Option<&Tensor>,
        train: bool,
    ) -> candle_core::Result<Tensor> {
        let value = self.forward(planes, globals, train)?.value;
        self.output().inverse(&value)
    }

    /// The value's scale ([`ModelConfig::output`]).
    fn output(&self) -> OutputActivation {
        self.io().output
    }

    /// Declares the weights fixed from here on, so that evaluation-mode
    /// passes may reuse work derived from them (the residual net's folded
    /// batch norms). A training-mode pass undoes it; weights changed by
    /// other means after it (a `Var::set`, a checkpoint loaded into the same
    /// variables) are not seen by evaluation until `freeze` is called again.
    fn freeze(&self) -> candle_core::Result<()> {
        Ok(())
    }

    /// Whether [`ModelOutput::policy`] is filled.
    fn has_policy(&self) -> bool {
        false
    }

    /// The values `[B]` in evaluation mode.
    fn value(&self, planes: &Tensor, globals: Option<&Tensor>) -> candle_core::Result<Tensor> {
        Ok(self.forward(planes, globals, false)?.value)
    }
}

/// Builds the model a config describes, creating or reading its variables
/// through `vb`. Fresh variables get candle's (unseeded) draws; call
/// [`seeded_init`] for reproducible ones.
pub fn build(cfg: &ModelConfig, vb: VarBuilder) -> Result<Box<dyn ValueNet>, ModelError> {
    Ok(match cfg {
        ModelConfig::Linear(c) => Box::new(Linear::new(c, vb)?),
        ModelConfig::Mlp(c) => Box::new(Mlp::new(c, vb)?),
        ModelConfig::Cnn3(c) => Box::new(Cnn3Net::new(c, vb)?),
        ModelConfig::Resnet(c) => Box::new(ResNet::new(c, vb)?),
        ModelConfig::Mdrnn(c) => Box::new(Mdrnn::new(c, vb)?),
    })
}

/// The variables an optimizer should update: all but batch-norm running
/// statistics.
pub fn trainable_vars(varmap: &VarMap) -> Vec<Var> {
    let data = match varmap.data().lock() {
        Ok(d) => d,
        Err(p) => p.into_inner(),
    };
    let mut named: Vec<(&String, &Var)> =
        data.iter().filter(|(n, _)| !is_running_stat(n)).collect();
    named.sort_by(|a, b| a.0.cmp(b.0));
    named.into_iter().map(|(_, v)| v.clone()).collect()
}

#[cfg(test)]
mod tests;
