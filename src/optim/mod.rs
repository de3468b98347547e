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

/// `learning_rate` and `set_learning_rate` of a `candle_nn::Optimizer` that
/// keeps its learning rate in `self.config.lr`.
macro_rules! lr_in_config {
    () => {
        fn learning_rate(&self) -> f64 {
            self.config.lr
        }

        fn set_learning_rate(&mut self, lr: f64) {
            self.config.lr = lr;
        }
    };
}

mod adamw;
mod any;
mod clip;
mod fused;
mod inplace;
mod momentum;
mod rmsprop;
mod schedule;
mod state;

pub use adamw::{AdamW, AdamWConfig};
pub use any::{AnyOptimizer, OptimizerConfig};
pub use clip::{clip_grad_norm, grad_norm};
pub(crate) use fused::refresh_bf16_in_one_launch;
pub use momentum::{Momentum, MomentumConfig};
pub use rmsprop::{RmsProp, RmsPropConfig};
pub use schedule::LrSchedule;
pub use state::OptimizerState;

use candle_core::backprop::GradStore;
use candle_core::{Tensor, Var};

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

/// `Ok` when `ok`, else the [`OptimError::InvalidParameter`] for `value`.
fn check(
    ok: bool,
    owner: &'static str,
    name: &'static str,
    value: f64,
    expected: &'static str,
) -> Result<(), OptimError> {
    if ok {
        Ok(())
    } else {
        Err(OptimError::InvalidParameter {
            owner,
            name,
            value,
            expected,
        })
    }
}

/// A hyper-parameter, its value and the rule it must meet (one of
/// [`non_negative`], [`finite`] or [`unit_interval`]).
pub(crate) type Rule = (
    &'static str,
    f64,
    fn(&'static str, &'static str, f64) -> Result<(), OptimError>,
);

/// Checks `rules` in order; the first broken one is the error.
pub(crate) fn check_rules(owner: &'static str, rules: &[Rule]) -> Result<(), OptimError> {
    rules
        .iter()
        .try_for_each(|&(name, value, rule)| rule(owner, name, value))
}

/// Checks that `value` is finite and `>= 0`.
pub(crate) fn non_negative(
    owner: &'static str,
    name: &'static str,
    value: f64,
) -> Result<(), OptimError> {
    let ok = value.is_finite() && value >= 0.0;
    check(ok, owner, name, value, "finite and >= 0")
}

/// Checks that `value` is finite (any sign).
pub(crate) fn finite(
    owner: &'static str,
    name: &'static str,
    value: f64,
) -> Result<(), OptimError> {
    check(value.is_finite(), owner, name, value, "finite")
}

/// Checks that `0 <= value < 1`.
pub(crate) fn unit_interval(
    owner: &'static str,
    name: &'static str,
    value: f64,
) -> Result<(), OptimError> {
    check((0.0..1.0).contains(&value), owner, name, value, "in [0, 1)")
}

/// The float vars of `vars` (optimizers leave the others alone), each with
/// the state `init` makes for it.
pub(crate) fn float_var_states<S>(
    vars: Vec<Var>,
    init: impl FnMut(Var) -> candle_core::Result<S>,
) -> candle_core::Result<Vec<S>> {
    vars.into_iter()
        .filter(|v| v.dtype().is_float())
        .map(init)
        .collect()
}

/// The parameter `p` of `var` and its gradient in `grads` plus the L2 term
/// `weight_decay * p` (not computed when 0), both detached so the update
/// records no ops on the var's graph; `None` when `var` has no gradient.
pub(crate) fn decayed_grad(
    grads: &GradStore,
    var: &Var,
    weight_decay: f64,
) -> candle_core::Result<Option<(Tensor, Tensor)>> {
    let Some(grad) = grads.get(var) else {
        return Ok(None);
    };
    let param = var.as_tensor().detach();
    let mut g = grad.detach();
    if weight_decay != 0.0 {
        g = (g + (&param * weight_decay)?)?;
    }
    Ok(Some((param, g)))
}

/// What the optimizers' tests share.
#[cfg(test)]
pub(crate) mod test_util {
    use candle_core::{DType, Device, Result, Tensor, Var};
    use candle_nn::Optimizer;

    /// One step from `[2, -4]` in `dtype` with a zero gradient (but a
    /// gradient: `sum(w * 0)`, as candle prunes `affine` with a zero factor
    /// from the graph), so only weight decay moves the weights. Checks the
    /// dtype is kept; returns the weights.
    pub(crate) fn zero_grad_step<O: Optimizer>(
        config: O::Config,
        dtype: DType,
    ) -> Result<Vec<f64>> {
        let w = Var::from_tensor(&Tensor::new(&[2.0f64, -4.0], &Device::Cpu)?.to_dtype(dtype)?)?;
        let mut opt = O::new(vec![w.clone()], config)?;
        let loss = w.as_tensor().mul(&w.as_tensor().zeros_like()?)?.sum_all()?;
        opt.backward_step(&loss)?;
        assert_eq!(w.dtype(), dtype);
        w.to_dtype(DType::F64)?.to_vec1::<f64>()
    }

    /// After `set_learning_rate(lr)`, which `learning_rate` must then
    /// report, one step on `sum(w)` from `w = [0]`; returns `w`.
    pub(crate) fn step_at_lr<O: Optimizer>(config: O::Config, lr: f64) -> Result<f64> {
        let w = Var::from_tensor(&Tensor::new(&[0.0f64], &Device::Cpu)?)?;
        let mut opt = O::new(vec![w.clone()], config)?;
        opt.set_learning_rate(lr);
        assert_eq!(opt.learning_rate(), lr);
        opt.backward_step(&w.as_tensor().sum_all()?)?;
        Ok(w.to_vec1::<f64>()?[0])
    }

    /// The default config with each of `edits` applied, one config per edit.
    pub(crate) fn edited<C: Default>(edits: &[fn(&mut C)]) -> Vec<C> {
        edits
            .iter()
            .map(|edit| {
                let mut c = C::default();
                edit(&mut c);
                c
            })
            .collect()
    }

    /// Checks that `O` refuses to be built with each of `configs`.
    pub(crate) fn refuses<O: Optimizer>(configs: impl IntoIterator<Item = O::Config>)
    where
        O::Config: std::fmt::Debug + Clone,
    {
        for cfg in configs {
            assert!(O::new(vec![], cfg.clone()).is_err(), "{cfg:?}");
        }
    }
}
