//! SGD with momentum, as `torch.optim.SGD`.

use candle_core::backprop::GradStore;
use candle_core::{Result, Tensor, Var};
use serde::{Deserialize, Serialize};

use std::collections::HashMap;

use super::inplace;
use super::state::{key, OptimizerState, StateReader};
use super::{check_rules, decayed_grad, finite, float_var_states, non_negative, OptimError};

/// Hyper-parameters of [`Momentum`], named as in `torch.optim.SGD`.
///
/// Missing fields deserialize to their [`Default`] values. The default
/// momentum is 0.9 (PyTorch's is 0, which is plain SGD).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MomentumConfig {
    /// Learning rate (default 0.01).
    pub lr: f64,
    /// Momentum factor (default 0.9); 0 gives plain SGD with weight decay.
    pub momentum: f64,
    /// Dampening of the gradient added to the momentum buffer (default 0).
    /// Not applied on the first step, where the buffer is the gradient.
    pub dampening: f64,
    /// L2 penalty: `weight_decay * param` is added to the gradient
    /// (default 0).
    pub weight_decay: f64,
    /// Nesterov momentum: the step uses `grad + momentum * buf` (default
    /// false). Needs `momentum > 0` and `dampening == 0`.
    pub nesterov: bool,
}

impl Default for MomentumConfig {
    fn default() -> Self {
        Self {
            lr: 0.01,
            momentum: 0.9,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: false,
        }
    }
}

impl MomentumConfig {
    /// Checks the hyper-parameters the way PyTorch does (lr, momentum and
    /// weight decay finite and non-negative, dampening finite, Nesterov only
    /// with momentum and without dampening).
    pub fn validate(&self) -> std::result::Result<(), OptimError> {
        check_rules(
            "momentum SGD",
            &[
                ("lr", self.lr, non_negative),
                ("momentum", self.momentum, non_negative),
                ("dampening", self.dampening, finite),
                ("weight_decay", self.weight_decay, non_negative),
            ],
        )?;
        if self.nesterov && (self.momentum <= 0.0 || self.dampening != 0.0) {
            return Err(OptimError::Nesterov {
                momentum: self.momentum,
                dampening: self.dampening,
            });
        }
        Ok(())
    }
}

#[derive(Debug)]
struct VarState {
    var: Var,
    /// The momentum buffer; `None` until the var's first gradient.
    buf: Option<Tensor>,
}

/// SGD with momentum, optional Nesterov momentum, dampening and L2 weight
/// decay. Each step, for each var that has a gradient `g`:
///
/// ```text
/// g   = g + weight_decay * p
/// buf = g                                    (first step)
/// buf = momentum * buf + (1 - dampening) * g (later steps)
/// g   = g + momentum * buf  if nesterov, else buf
/// p   = p - lr * g
/// ```
///
/// Vars without a gradient in the `GradStore` are left alone, their buffer
/// included. Non-float vars are ignored.
#[derive(Debug)]
pub struct Momentum {
    vars: Vec<VarState>,
    config: MomentumConfig,
}

impl Momentum {
    /// The current hyper-parameters.
    pub fn config(&self) -> &MomentumConfig {
        &self.config
    }

    /// The vars this optimizer updates.
    pub fn vars(&self) -> Vec<Var> {
        self.vars.iter().map(|s| s.var.clone()).collect()
    }

    /// The momentum buffers, as `"<var index>.momentum_buffer"` (vars that
    /// have not had a gradient yet have none): copies, as the buffers are
    /// updated in place.
    pub fn state(&self) -> Result<OptimizerState> {
        let mut out = Vec::new();
        for (i, s) in self.vars.iter().enumerate() {
            if let Some(b) = &s.buf {
                out.push((key(i, "momentum_buffer"), b.copy()?));
            }
        }
        Ok(out)
    }

    /// Restores buffers saved by [`Momentum::state`] (all checked first).
    pub fn load_state(&mut self, state: &HashMap<String, Tensor>) -> Result<()> {
        let mut reader = StateReader::new(state);
        let mut bufs = Vec::with_capacity(self.vars.len());
        for (i, s) in self.vars.iter().enumerate() {
            bufs.push(reader.optional(i, "momentum_buffer", &s.var)?);
        }
        reader.finish("momentum")?;
        for (s, b) in self.vars.iter_mut().zip(bufs) {
            // Buffers of their own: they are updated in place.
            s.buf = b.as_ref().map(inplace::owned).transpose()?;
        }
        Ok(())
    }

    /// The whole step in one launch on CUDA ([`super::fused`]), when every
    /// parameter with a gradient, the gradient and the buffer are f32 on
    /// one CUDA device; `false` (nothing done) otherwise.
    fn fused_step(&mut self, grads: &GradStore) -> Result<bool> {
        let with_grads: Vec<(usize, &Tensor)> = self
            .vars
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i, grads.get(&s.var)?)))
            .collect();
        let mut all: Vec<&Tensor> = Vec::with_capacity(3 * with_grads.len());
        for &(i, g) in &with_grads {
            all.push(self.vars[i].var.as_tensor());
            all.push(g);
            all.extend(self.vars[i].buf.as_ref());
        }
        if !super::fused::takes(&all) {
            return Ok(false);
        }
        let mut first = vec![false; self.vars.len()];
        for &(i, _) in &with_grads {
            if self.vars[i].buf.is_none() {
                // Storage of its own, filled by the kernel.
                self.vars[i].buf = Some(self.vars[i].var.as_tensor().zeros_like()?);
                first[i] = true;
            }
        }
        let mut entries = Vec::with_capacity(with_grads.len());
        for &(i, g) in &with_grads {
            let s = &self.vars[i];
            let Some(buf) = s.buf.as_ref() else {
                candle_core::bail!("momentum: a buffer was not made");
            };
            entries.push(super::fused::Entry {
                param: s.var.as_tensor(),
                grad: g,
                states: [Some(buf), None, None],
                first: first[i],
            });
        }
        let rule = super::fused::Rule::Momentum(super::fused::MomentumHyper::new(&self.config));
        super::fused::step(&entries, rule)?;
        Ok(true)
    }

    /// Adds a var (with an empty momentum buffer).
    pub fn push(&mut self, var: &Var) {
        if var.dtype().is_float() {
            self.vars.push(VarState {
                var: var.clone(),
                buf: None,
            });
        }
    }
}

impl candle_nn::Optimizer for Momentum {
    type Config = MomentumConfig;

    fn new(vars: Vec<Var>, config: MomentumConfig) -> Result<Self> {
        config.validate()?;
        let vars = float_var_states(vars, |var| Ok(VarState { var, buf: None }))?;
        Ok(Self { vars, config })
    }

    fn step(&mut self, grads: &GradStore) -> Result<()> {
        if self.config.momentum != 0.0 && self.fused_step(grads)? {
            return Ok(());
        }
        let MomentumConfig {
            lr,
            momentum,
            dampening,
            weight_decay,
            nesterov,
        } = self.config;
        for state in self.vars.iter_mut() {
            let Some((param, mut g)) = decayed_grad(grads, &state.var, weight_decay)? else {
                continue;
            };
            let buf_fits = state
                .buf
                .as_ref()
                .is_none_or(|b| inplace::takes(&[&param, b]));
            if momentum != 0.0 && buf_fits && inplace::takes(&[&param, &g]) {
                // The same values in one pass per tensor, without temporaries.
                let buf = match state.buf.take() {
                    None => inplace::owned(&g)?,
                    Some(buf) => {
                        let rule = inplace::Blend {
                            old: momentum,
                            new: 1.0 - dampening,
                            squared: false,
                        };
                        buf.inplace_op2(&g, &inplace::InPlace(rule))?;
                        buf
                    }
                };
                let rule = inplace::MomentumStep {
                    lr,
                    momentum,
                    nesterov,
                };
                state
                    .var
                    .as_tensor()
                    .inplace_op3(&g, &buf, &inplace::InPlace(rule))?;
                state.buf = Some(buf);
                continue;
            }
            if momentum != 0.0 {
                let buf = match state.buf.take() {
                    None => g.clone(),
                    Some(buf) => ((buf * momentum)? + (&g * (1.0 - dampening))?)?,
                };
                g = if nesterov {
                    (&g + (&buf * momentum)?)?
                } else {
                    buf.clone()
                };
                state.buf = Some(buf);
            }
            state.var.set(&(&param - (g * lr)?)?)?;
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

    fn quadratic_loss(w: &Var) -> Result<Tensor> {
        // sum((w - target)^2) with a fixed target.
        let target = Tensor::new(&[1.0f64, -2.0, 0.5], w.device())?.to_dtype(w.dtype())?;
        w.as_tensor().sub(&target)?.sqr()?.sum_all()
    }

    #[test]
    fn momentum_zero_equals_plain_sgd() -> Result<()> {
        let init = Tensor::new(&[0.3f64, 0.7, -1.1], &Device::Cpu)?;
        let a = Var::from_tensor(&init)?;
        let b = Var::from_tensor(&init)?;
        let cfg = MomentumConfig {
            lr: 0.1,
            momentum: 0.0,
            ..Default::default()
        };
        let mut ours = Momentum::new(vec![a.clone()], cfg)?;
        let mut sgd = candle_nn::SGD::new(vec![b.clone()], 0.1)?;
        for _ in 0..4 {
            ours.backward_step(&quadratic_loss(&a)?)?;
            sgd.backward_step(&quadratic_loss(&b)?)?;
        }
        assert_eq!(a.to_vec1::<f64>()?, b.to_vec1::<f64>()?);
        Ok(())
    }

    #[test]
    fn weight_decay_with_zero_grad_shrinks_weights() -> Result<()> {
        for dtype in [DType::F32, DType::F64] {
            let cfg = MomentumConfig {
                lr: 0.1,
                momentum: 0.5,
                weight_decay: 0.5,
                ..Default::default()
            };
            // g = 0.5 * w, buf = g, w -= 0.1 * g  =>  w * 0.95
            let got = zero_grad_step::<Momentum>(cfg, dtype)?;
            assert!(
                (got[0] - 1.9).abs() < 1e-6 && (got[1] + 3.8).abs() < 1e-6,
                "{got:?}"
            );
        }
        Ok(())
    }

    #[test]
    fn momentum_accumulates_and_nesterov_looks_ahead() -> Result<()> {
        // Constant gradient 1: loss = sum(w).
        let run = |nesterov: bool| -> Result<Vec<f64>> {
            let w = Var::from_tensor(&Tensor::new(&[0.0f64], &Device::Cpu)?)?;
            let cfg = MomentumConfig {
                lr: 1.0,
                momentum: 0.5,
                nesterov,
                ..Default::default()
            };
            let mut opt = Momentum::new(vec![w.clone()], cfg)?;
            let mut out = vec![];
            for _ in 0..3 {
                opt.backward_step(&w.as_tensor().sum_all()?)?;
                out.push(w.to_vec1::<f64>()?[0]);
            }
            Ok(out)
        };
        // buf: 1, 1.5, 1.75
        assert_eq!(run(false)?, vec![-1.0, -2.5, -4.25]);
        // step: 1 + 0.5 * buf = 1.5, 1.75, 1.875
        assert_eq!(run(true)?, vec![-1.5, -3.25, -5.125]);
        Ok(())
    }

    #[test]
    fn set_learning_rate_is_used() -> Result<()> {
        let cfg = MomentumConfig {
            lr: 1.0,
            momentum: 0.0,
            ..Default::default()
        };
        assert_eq!(step_at_lr::<Momentum>(cfg, 0.25)?, -0.25);
        Ok(())
    }

    #[test]
    fn invalid_configs_are_errors() {
        let bad = edited::<MomentumConfig>(&[
            |c| c.lr = -1.0,
            |c| c.lr = f64::NAN,
            |c| c.momentum = -0.1,
            |c| c.weight_decay = f64::INFINITY,
            |c| {
                c.nesterov = true;
                c.dampening = 0.1;
            },
            |c| {
                c.nesterov = true;
                c.momentum = 0.0;
            },
        ]);
        for cfg in &bad {
            assert!(cfg.validate().is_err(), "{cfg:?}");
        }
        refuses::<Momentum>(bad);
        assert!(MomentumConfig::default().validate().is_ok());
    }

    #[test]
    fn vars_without_gradient_are_untouched() -> Result<()> {
        let a = Var::from_tensor(&Tensor::new(&[1.0f64], &Device::Cpu)?)?;
        let b = Var::from_tensor(&Tensor::new(&[1.0f64], &Device::Cpu)?)?;
        let cfg = MomentumConfig {
            weight_decay: 0.1,
            ..Default::default()
        };
        let mut opt = Momentum::new(vec![a.clone(), b.clone()], cfg)?;
        opt.backward_step(&a.as_tensor().sum_all()?)?;
        assert_eq!(b.to_vec1::<f64>()?, vec![1.0]);
        assert_ne!(a.to_vec1::<f64>()?, vec![1.0]);
        Ok(())
    }

    /// The update as candle ops, as `step` ran it before the in-place path
    /// (and still runs it off the CPU).
    fn op_step(
        p: &Tensor,
        buf: Option<Tensor>,
        g: &Tensor,
        c: &MomentumConfig,
    ) -> Result<(Tensor, Tensor)> {
        let g = (g + (p * c.weight_decay)?)?;
        let buf = match buf {
            None => g.clone(),
            Some(b) => ((b * c.momentum)? + (&g * (1.0 - c.dampening))?)?,
        };
        let g = if c.nesterov {
            (&g + (&buf * c.momentum)?)?
        } else {
            buf.clone()
        };
        Ok(((p - (g * c.lr)?)?, buf))
    }

    #[test]
    fn in_place_update_is_the_candle_ops_bit_for_bit() -> Result<()> {
        let mut rt = crate::model::test_tensors::SeededTensors::new(9);
        let dev = Device::Cpu;
        let configs = [
            (true, 0.0, 0.0),
            (false, 0.25, 0.0),
            (false, 0.0, 0.01),
            (true, 0.0, 0.03),
        ];
        // Large enough for the parallel chunks, and a small one.
        for n in [7usize, 100_003] {
            for dtype in [DType::F32, DType::F64] {
                for (nesterov, dampening, weight_decay) in configs {
                    let cfg = MomentumConfig {
                        lr: 0.013,
                        momentum: 0.87,
                        dampening,
                        weight_decay,
                        nesterov,
                    };
                    let p0 = rt.randn(0f32, 1.0, n, &dev)?.to_dtype(dtype)?;
                    let w = Var::from_tensor(&p0)?;
                    let mut opt = Momentum::new(vec![w.clone()], cfg)?;
                    let (mut p, mut buf) = (p0, None);
                    for step in 0..3 {
                        let target = rt.randn(0f32, 1.0, n, &dev)?.to_dtype(dtype)?;
                        // loss = sum(w * target): the gradient is `target`.
                        opt.backward_step(&(w.as_tensor() * &target)?.sum_all()?)?;
                        let (np, nb) = op_step(&p, buf, &target, &cfg)?;
                        let what = format!("{dtype:?} {n} {cfg:?} step {step}");
                        let (got, want) = (
                            w.as_tensor().to_dtype(DType::F64)?,
                            np.to_dtype(DType::F64)?,
                        );
                        assert_eq!(got.to_vec1::<f64>()?, want.to_vec1::<f64>()?, "{what}");
                        (p, buf) = (np, Some(nb));
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn saved_buffers_do_not_move_with_later_steps() -> Result<()> {
        let w = Var::from_tensor(&Tensor::new(&[0.5f32, -1.0, 2.0], &Device::Cpu)?)?;
        let mut opt = Momentum::new(vec![w.clone()], MomentumConfig::default())?;
        opt.backward_step(&w.as_tensor().sqr()?.sum_all()?)?;
        let saved = opt.state()?;
        let before: Vec<f32> = saved[0].1.to_vec1()?;
        opt.backward_step(&w.as_tensor().sqr()?.sum_all()?)?;
        assert_eq!(before, saved[0].1.to_vec1::<f32>()?);
        assert_ne!(before, opt.state()?[0].1.to_vec1::<f32>()?);
        Ok(())
    }
}
