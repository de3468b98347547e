//! RMSProp, as `torch.optim.RMSprop`.

use candle_core::backprop::GradStore;
use candle_core::{Result, Tensor, Var};
use serde::{Deserialize, Serialize};

use std::collections::HashMap;

use super::inplace;
use super::state::{key, OptimizerState, StateReader};
use super::{check_rules, decayed_grad, float_var_states, non_negative, OptimError};

/// Hyper-parameters of [`RmsProp`], named and defaulted as in
/// `torch.optim.RMSprop`. Missing fields deserialize to their defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RmsPropConfig {
    /// Learning rate (default 0.01).
    pub lr: f64,
    /// Smoothing constant of the squared-gradient average (default 0.99).
    pub alpha: f64,
    /// Added to the denominator after the square root (default 1e-8).
    pub eps: f64,
    /// L2 penalty: `weight_decay * param` is added to the gradient
    /// (default 0).
    pub weight_decay: f64,
    /// Momentum factor (default 0: no momentum buffer).
    pub momentum: f64,
    /// Normalise by the estimated variance (`E[g^2] - E[g]^2`) instead of the
    /// uncentered second moment (default false).
    pub centered: bool,
}

impl Default for RmsPropConfig {
    fn default() -> Self {
        Self {
            lr: 0.01,
            alpha: 0.99,
            eps: 1e-8,
            weight_decay: 0.0,
            momentum: 0.0,
            centered: false,
        }
    }
}

impl RmsPropConfig {
    /// Checks the hyper-parameters the way PyTorch does: each finite and
    /// non-negative.
    pub fn validate(&self) -> std::result::Result<(), OptimError> {
        check_rules(
            "RMSProp",
            &[
                ("lr", self.lr, non_negative),
                ("alpha", self.alpha, non_negative),
                ("eps", self.eps, non_negative),
                ("weight_decay", self.weight_decay, non_negative),
                ("momentum", self.momentum, non_negative),
            ],
        )
    }
}

#[derive(Debug)]
struct VarState {
    var: Var,
    square_avg: Tensor,
    /// Running mean of the gradient, when centered.
    grad_avg: Option<Tensor>,
    /// Momentum buffer, when momentum > 0.
    buf: Option<Tensor>,
}

/// RMSProp. All state starts at zero; each step, for each var with a
/// gradient `g`:
///
/// ```text
/// g          = g + weight_decay * p
/// square_avg = alpha * square_avg + (1 - alpha) * g^2
/// avg        = sqrt(square_avg) + eps                       (uncentered)
/// grad_avg   = grad_avg + (1 - alpha) * (g - grad_avg)      (centered)
/// avg        = sqrt(square_avg - grad_avg^2) + eps          (centered)
/// buf        = momentum * buf + g / avg;  p = p - lr * buf  (momentum > 0)
/// p          = p - lr * g / avg                             (otherwise)
/// ```
///
/// Vars without a gradient are left alone. Non-float vars are ignored.
#[derive(Debug)]
pub struct RmsProp {
    vars: Vec<VarState>,
    config: RmsPropConfig,
}

impl RmsProp {
    /// The whole step in one launch on CUDA ([`super::fused`]), when every
    /// parameter with a gradient, the gradient and the states are f32 on
    /// one CUDA device; `false` (nothing done) otherwise.
    fn fused_step(&mut self, grads: &GradStore) -> Result<bool> {
        let entries: Vec<super::fused::Entry<'_>> = self
            .vars
            .iter()
            .filter_map(|s| {
                Some(super::fused::Entry {
                    param: s.var.as_tensor(),
                    grad: grads.get(&s.var)?,
                    states: [Some(&s.square_avg), s.grad_avg.as_ref(), s.buf.as_ref()],
                    first: false,
                })
            })
            .collect();
        if !super::fused::takes_entries(&entries) {
            return Ok(false);
        }
        let hyper = super::fused::RmsPropHyper::new(&self.config);
        super::fused::step(&entries, super::fused::Rule::RmsProp(hyper))?;
        Ok(true)
    }

    /// The current hyper-parameters.
    pub fn config(&self) -> &RmsPropConfig {
        &self.config
    }

    /// The vars this optimizer updates.
    pub fn vars(&self) -> Vec<Var> {
        self.vars.iter().map(|s| s.var.clone()).collect()
    }

    /// The state, as `"<var index>.square_avg"`, `".grad_avg"` (centered)
    /// and `".momentum_buffer"` (momentum > 0).
    pub fn state(&self) -> Result<OptimizerState> {
        let mut out = Vec::new();
        for (i, s) in self.vars.iter().enumerate() {
            // Copies: the states may be updated in place.
            out.push((key(i, "square_avg"), s.square_avg.copy()?));
            if let Some(g) = &s.grad_avg {
                out.push((key(i, "grad_avg"), g.copy()?));
            }
            if let Some(b) = &s.buf {
                out.push((key(i, "momentum_buffer"), b.copy()?));
            }
        }
        Ok(out)
    }

    /// Restores state saved by [`RmsProp::state`] with the same config (all
    /// checked first).
    pub fn load_state(&mut self, state: &HashMap<String, Tensor>) -> Result<()> {
        let mut reader = StateReader::new(state);
        let mut new = Vec::with_capacity(self.vars.len());
        for (i, s) in self.vars.iter().enumerate() {
            let sq = reader.required(i, "square_avg", &s.var)?;
            let ga = match s.grad_avg {
                Some(_) => Some(reader.required(i, "grad_avg", &s.var)?),
                None => None,
            };
            let buf = match s.buf {
                Some(_) => Some(reader.required(i, "momentum_buffer", &s.var)?),
                None => None,
            };
            new.push((sq, ga, buf));
        }
        reader.finish("RMSProp")?;
        for (s, (sq, ga, buf)) in self.vars.iter_mut().zip(new) {
            // States of their own: they may be updated in place.
            s.square_avg = inplace::owned(&sq)?;
            s.grad_avg = ga.as_ref().map(inplace::owned).transpose()?;
            s.buf = buf.as_ref().map(inplace::owned).transpose()?;
        }
        Ok(())
    }

    /// Adds a var, with zeroed state.
    pub fn push(&mut self, var: &Var) -> Result<()> {
        if var.dtype().is_float() {
            self.vars.push(VarState::new(var.clone(), &self.config)?);
        }
        Ok(())
    }
}

impl VarState {
    fn new(var: Var, config: &RmsPropConfig) -> Result<Self> {
        // Each state in storage of its own: the fused step on a GPU
        // updates them in place.
        let zeros = || var.as_tensor().zeros_like();
        Ok(Self {
            grad_avg: config.centered.then(zeros).transpose()?,
            buf: (config.momentum > 0.0).then(zeros).transpose()?,
            square_avg: zeros()?,
            var,
        })
    }
}

impl candle_nn::Optimizer for RmsProp {
    type Config = RmsPropConfig;

    fn new(vars: Vec<Var>, config: RmsPropConfig) -> Result<Self> {
        config.validate()?;
        let vars = float_var_states(vars, |var| VarState::new(var, &config))?;
        Ok(Self { vars, config })
    }

    fn step(&mut self, grads: &GradStore) -> Result<()> {
        let RmsPropConfig {
            lr,
            alpha,
            eps,
            weight_decay,
            momentum,
            centered: _,
        } = self.config;
        if self.fused_step(grads)? {
            return Ok(());
        }
        for state in self.vars.iter_mut() {
            let Some((param, g)) = decayed_grad(grads, &state.var, weight_decay)? else {
                continue;
            };
            state.square_avg = ((&state.square_avg * alpha)? + (g.sqr()? * (1.0 - alpha))?)?;
            let avg = match state.grad_avg.as_mut() {
                Some(grad_avg) => {
                    // torch's lerp_(g, 1 - alpha): avg + w * (g - avg).
                    *grad_avg = (&*grad_avg + ((&g - &*grad_avg)? * (1.0 - alpha))?)?;
                    (&state.square_avg - grad_avg.sqr()?)?.sqrt()?
                }
                None => state.square_avg.sqrt()?,
            };
            let avg = (avg + eps)?;
            let update = match state.buf.as_mut() {
                Some(buf) => {
                    *buf = ((&*buf * momentum)? + (&g / &avg)?)?;
                    (&*buf * lr)?
                }
                None => ((&g / &avg)? * lr)?,
            };
            state.var.set(&(&param - update)?)?;
        }
        Ok(())
    }

    lr_in_config!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optim::test_util::{edited, refuses, step_at_lr, zero_grad_step};
    use candle_core::{DType, Device};
    use candle_nn::Optimizer;

    #[test]
    fn first_step_is_sign_times_lr_over_sqrt_one_minus_alpha() -> Result<()> {
        // square_avg = (1 - alpha) g^2, so the first step is lr * g / (|g| sqrt(1 - alpha)).
        let w = Var::from_tensor(&Tensor::new(&[1.0f64, -1.0], &Device::Cpu)?)?;
        let cfg = RmsPropConfig {
            lr: 0.1,
            alpha: 0.75,
            eps: 0.0,
            ..Default::default()
        };
        let mut opt = RmsProp::new(vec![w.clone()], cfg)?;
        // loss = sum(3 w^2): g = 6 w = [6, -6]
        opt.backward_step(&(w.as_tensor().sqr()?.sum_all()? * 3.0)?)?;
        let got = w.to_vec1::<f64>()?;
        assert!((got[0] - (1.0 - 0.2)).abs() < 1e-12, "{got:?}");
        assert!((got[1] - (-1.0 + 0.2)).abs() < 1e-12, "{got:?}");
        Ok(())
    }

    #[test]
    fn weight_decay_with_zero_grad_shrinks_weights() -> Result<()> {
        for dtype in [DType::F32, DType::F64] {
            let cfg = RmsPropConfig {
                lr: 0.01,
                weight_decay: 0.1,
                momentum: 0.5,
                centered: true,
                ..Default::default()
            };
            let got = zero_grad_step::<RmsProp>(cfg, dtype)?;
            assert!(got[0] > 0.0 && got[0] < 2.0, "{got:?}");
            assert!(got[1] < 0.0 && got[1] > -4.0, "{got:?}");
        }
        Ok(())
    }

    #[test]
    fn set_learning_rate_is_used() -> Result<()> {
        let run = |lr: f64| step_at_lr::<RmsProp>(RmsPropConfig::default(), lr);
        let (a, b) = (run(0.01)?, run(0.02)?);
        assert!(a < 0.0 && ((b / a) - 2.0).abs() < 1e-12, "{a} {b}");
        Ok(())
    }

    #[test]
    fn invalid_configs_are_errors() {
        refuses::<RmsProp>(edited::<RmsPropConfig>(&[
            |c| c.lr = -0.1,
            |c| c.alpha = f64::NAN,
            |c| c.eps = -1e-8,
            |c| c.momentum = -0.9,
            |c| c.weight_decay = f64::INFINITY,
        ]));
        assert!(RmsPropConfig::default().validate().is_ok());
    }
}
