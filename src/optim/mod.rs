//! Optimizers, gradient clipping and learning-rate schedules that candle-nn
//! lacks.
//!
//! candle-nn 0.11 ships plain SGD (no momentum) and AdamW. This module adds,
//! in candle-nn's style (a plain struct, a serde `*Config` with `Default`, and
//! `impl candle_nn::Optimizer`):
//!
//! - [`Momentum`]: SGD with (optionally Nesterov) momentum, dampening and L2
//!   weight decay, step for step the same as `torch.optim.SGD`;
//! - [`RmsProp`]: `torch.optim.RMSprop`, including `momentum` and `centered`;
//! - [`clip_grad_norm`]: global-norm gradient clipping over a `GradStore`, as
//!   `torch.nn.utils.clip_grad_norm_`;
//! - [`LrSchedule`]: constant, step, cosine and linear-warmup schedules.
//!
//! Trainers pick an optimizer by configuration: [`OptimizerConfig`] is a serde
//! enum tagged by `"kind"` and [`AnyOptimizer`] runs whichever it names.
//! Parity with PyTorch is checked by `tests/optim_reference.rs` against
//! trajectories recorded by `scripts/optim_reference.py`.
//!
//! ```
//! use candle_core::{DType, Device, Tensor};
//! use candle_nn::{Module, VarBuilder, VarMap};
//! use plies::optim::{AnyOptimizer, OptimizerConfig};
//!
//! # fn main() -> candle_core::Result<()> {
//! let varmap = VarMap::new();
//! let vb = VarBuilder::from_varmap(&varmap, DType::F64, &Device::Cpu);
//! let layer = candle_nn::linear(2, 1, vb.pp("out"))?;
//!
//! let cfg: OptimizerConfig =
//!     serde_json::from_str(r#"{"kind": "momentum", "lr": 0.05, "momentum": 0.9, "nesterov": true}"#)
//!         .map_err(candle_core::Error::wrap)?;
//! let mut opt = AnyOptimizer::new(varmap.all_vars(), &cfg)?;
//!
//! let x = Tensor::new(&[[1.0f64, 2.0], [3.0, -1.0], [0.5, 0.5]], &Device::Cpu)?;
//! let y = Tensor::new(&[[1.0f64], [-1.0], [0.0]], &Device::Cpu)?;
//! let loss_at = |layer: &candle_nn::Linear| -> candle_core::Result<f64> {
//!     layer.forward(&x)?.sub(&y)?.sqr()?.mean_all()?.to_scalar::<f64>()
//! };
//! let before = loss_at(&layer)?;
//! for _ in 0..20 {
//!     let loss = layer.forward(&x)?.sub(&y)?.sqr()?.mean_all()?;
//!     opt.backward_step(&loss)?;
//! }
//! assert!(loss_at(&layer)? < before);
//! opt.set_learning_rate(0.01);
//! assert_eq!(opt.learning_rate(), 0.01);
//! # Ok(())
//! # }
//! ```

mod adamw;
mod any;
mod clip;
mod momentum;
mod rmsprop;
mod schedule;
mod state;

pub use adamw::{AdamW, AdamWConfig};
pub use any::{AnyOptimizer, OptimizerConfig};
pub use clip::{clip_grad_norm, grad_norm};
pub use momentum::{Momentum, MomentumConfig};
pub use rmsprop::{RmsProp, RmsPropConfig};
pub use schedule::LrSchedule;
pub use state::OptimizerState;

/// A configuration value an optimizer, clipper or schedule cannot work with.
///
/// Optimizer constructors return `candle_core::Result`; these errors are then
/// wrapped into `candle_core::Error` (see the `From` impl) and keep their
/// message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptimError {
    /// A hyper-parameter is NaN, infinite or outside its valid range.
    #[error("invalid {name} for {owner}: {value} (must be {expected})")]
    InvalidParameter {
        /// The optimizer, clipper or schedule that rejected it.
        owner: &'static str,
        /// The parameter's name, as in its config.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The valid range, in words.
        expected: &'static str,
    },
    /// Nesterov momentum was asked for without momentum or with dampening
    /// (PyTorch rejects the same combination).
    #[error(
        "nesterov momentum requires momentum > 0 and dampening = 0 \
         (got momentum {momentum}, dampening {dampening})"
    )]
    Nesterov {
        /// The momentum given.
        momentum: f64,
        /// The dampening given.
        dampening: f64,
    },
    /// Saved optimizer state that does not fit the optimizer it is loaded
    /// into (a missing or unexpected tensor, another shape or dtype).
    #[error("optimizer state `{name}`: {why}")]
    State {
        /// The state tensor's name (`"<var index>.<buffer>"` or `"step"`).
        name: String,
        /// What was expected and what was found.
        why: String,
    },
    /// A schedule length (step size, cosine period, warmup) of zero.
    #[error("invalid {name} for {owner}: must be at least 1")]
    ZeroLength {
        /// The schedule that rejected it.
        owner: &'static str,
        /// The field's name.
        name: &'static str,
    },
}

impl From<OptimError> for candle_core::Error {
    fn from(err: OptimError) -> Self {
        candle_core::Error::wrap(err)
    }
}

/// Checks that `value` is finite and `>= 0`.
pub(crate) fn non_negative(
    owner: &'static str,
    name: &'static str,
    value: f64,
) -> Result<(), OptimError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(OptimError::InvalidParameter {
            owner,
            name,
            value,
            expected: "finite and >= 0",
        })
    }
}

/// Checks that `value` is finite (any sign).
pub(crate) fn finite(
    owner: &'static str,
    name: &'static str,
    value: f64,
) -> Result<(), OptimError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(OptimError::InvalidParameter {
            owner,
            name,
            value,
            expected: "finite",
        })
    }
}

/// Checks that `0 <= value < 1`.
pub(crate) fn unit_interval(
    owner: &'static str,
    name: &'static str,
    value: f64,
) -> Result<(), OptimError> {
    if (0.0..1.0).contains(&value) {
        Ok(())
    } else {
        Err(OptimError::InvalidParameter {
            owner,
            name,
            value,
            expected: "in [0, 1)",
        })
    }
}
