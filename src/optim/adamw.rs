//! AdamW: a serde mirror of candle-nn's `ParamsAdamW`, and the optimizer
//! itself with its state exposed (candle-nn's keeps its moments private, so
//! a run could not be resumed exactly).

use std::collections::HashMap;

use candle_core::backprop::GradStore;
use candle_core::{Result, Tensor, Var};
use serde::{Deserialize, Serialize};

use super::inplace;
use super::state::{key, step_tensor, OptimizerState, StateReader};
use super::{check_rules, decayed_grad, float_var_states, non_negative, unit_interval, OptimError};

/// Hyper-parameters of `candle_nn::AdamW` (the fields of
/// `candle_nn::ParamsAdamW`, which has no serde support), with the same
/// defaults. Missing fields deserialize to their defaults.
///
/// candle's AdamW matches `torch.optim.AdamW` (decoupled weight decay,
/// bias-corrected moments, eps added after the square root).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdamWConfig {
    /// Learning rate (default 0.001).
    pub lr: f64,
    /// Decay of the first moment (default 0.9).
    pub beta1: f64,
    /// Decay of the second moment (default 0.999).
    pub beta2: f64,
    /// Added to the denominator after the square root (default 1e-8).
    pub eps: f64,
    /// Decoupled weight decay: `p *= 1 - lr * weight_decay` (default 0.01).
    pub weight_decay: f64,
}

impl Default for AdamWConfig {
    fn default() -> Self {
        candle_nn::ParamsAdamW::default().into()
    }
}

impl AdamWConfig {
    /// Checks the hyper-parameters the way PyTorch does (lr, eps and weight
    /// decay finite and non-negative, betas in `[0, 1)`).
    pub fn validate(&self) -> std::result::Result<(), OptimError> {
        check_rules(
            "AdamW",
            &[
                ("lr", self.lr, non_negative),
                ("beta1", self.beta1, unit_interval),
                ("beta2", self.beta2, unit_interval),
                ("eps", self.eps, non_negative),
                ("weight_decay", self.weight_decay, non_negative),
            ],
        )
    }
}

impl From<AdamWConfig> for candle_nn::ParamsAdamW {
    fn from(c: AdamWConfig) -> Self {
        Self {
            lr: c.lr,
            beta1: c.beta1,
            beta2: c.beta2,
            eps: c.eps,
            weight_decay: c.weight_decay,
        }
    }
}

impl From<candle_nn::ParamsAdamW> for AdamWConfig {
    fn from(p: candle_nn::ParamsAdamW) -> Self {
        Self {
            lr: p.lr,
            beta1: p.beta1,
            beta2: p.beta2,
            eps: p.eps,
            weight_decay: p.weight_decay,
        }
    }
}

#[derive(Debug)]
struct VarState {
    var: Var,
    m: Tensor,
    v: Tensor,
}

/// AdamW, operation for operation the same as `candle_nn::AdamW` (and so
/// `torch.optim.AdamW`), with [`AdamW::state`] / [`AdamW::load_state`].
#[derive(Debug)]
pub struct AdamW {
    vars: Vec<VarState>,
    config: AdamWConfig,
    step_t: usize,
}

impl AdamW {
    /// The whole step in one launch on CUDA ([`super::fused`]), when every
    /// parameter with a gradient, the gradient and both moments are f32
    /// on one CUDA device; `false` (nothing done) otherwise.
    fn fused_step(&mut self, grads: &GradStore, hyper: super::fused::AdamWHyper) -> Result<bool> {
        let entries: Vec<super::fused::Entry<'_>> = self
            .vars
            .iter()
            .filter_map(|s| {
                Some(super::fused::Entry {
                    param: s.var.as_tensor(),
                    grad: grads.get(&s.var)?,
                    states: [Some(&s.m), Some(&s.v), None],
                    first: false,
                })
            })
            .collect();
        if !super::fused::takes_entries(&entries) {
            return Ok(false);
        }
        super::fused::step(&entries, super::fused::Rule::AdamW(hyper))?;
        Ok(true)
    }

    /// The current hyper-parameters.
    pub fn config(&self) -> &AdamWConfig {
        &self.config
    }

    /// Steps taken.
    pub fn step_count(&self) -> usize {
        self.step_t
    }

    /// The moments as `"<var index>.exp_avg"` / `".exp_avg_sq"`, and the
    /// step count as `"step"`.
    pub fn state(&self) -> Result<OptimizerState> {
        let mut out = vec![("step".to_string(), step_tensor(self.step_t)?)];
        // Copies: the moments are updated in place.
        for (i, s) in self.vars.iter().enumerate() {
            out.push((key(i, "exp_avg"), s.m.copy()?));
            out.push((key(i, "exp_avg_sq"), s.v.copy()?));
        }
        Ok(out)
    }

    /// Restores state saved by [`AdamW::state`] (all checked first).
    pub fn load_state(&mut self, state: &HashMap<String, Tensor>) -> Result<()> {
        let mut reader = StateReader::new(state);
        let step = reader.step()?;
        let mut new = Vec::with_capacity(self.vars.len());
        for (i, s) in self.vars.iter().enumerate() {
            new.push((
                reader.required(i, "exp_avg", &s.var)?,
                reader.required(i, "exp_avg_sq", &s.var)?,
            ));
        }
        reader.finish("AdamW")?;
        self.step_t = step;
        for (s, (m, v)) in self.vars.iter_mut().zip(new) {
            s.m = inplace::owned(&m)?;
            s.v = inplace::owned(&v)?;
        }
        Ok(())
    }
}

impl candle_nn::Optimizer for AdamW {
    type Config = AdamWConfig;

    fn new(vars: Vec<Var>, config: AdamWConfig) -> Result<Self> {
        config.validate()?;
        let vars = float_var_states(vars, |var| {
            // Two tensors of their own: they are updated in place.
            Ok(VarState {
                m: var.as_tensor().zeros_like()?,
                v: var.as_tensor().zeros_like()?,
                var,
            })
        })?;
        Ok(Self {
            vars,
            config,
            step_t: 0,
        })
    }

    fn step(&mut self, grads: &GradStore) -> Result<()> {
        self.step_t += 1;
        let AdamWConfig {
            lr,
            beta1,
            beta2,
            eps,
            weight_decay,
        } = self.config;
        let lr_lambda = lr * weight_decay;
        let t = i32::try_from(self.step_t).unwrap_or(i32::MAX);
        let scale_m = 1f64 / (1f64 - beta1.powi(t));
        let scale_v = 1f64 / (1f64 - beta2.powi(t));
        let hyper = super::fused::AdamWHyper {
            lr: lr as f32,
            beta1: beta1 as f32,
            beta1_new: (1.0 - beta1) as f32,
            beta2: beta2 as f32,
            beta2_new: (1.0 - beta2) as f32,
            scale_m: scale_m as f32,
            scale_v: scale_v as f32,
            eps: eps as f32,
            decay: (1f64 - lr_lambda) as f32,
        };
        if self.fused_step(grads, hyper)? {
            return Ok(());
        }
        for s in self.vars.iter_mut() {
            // Decoupled weight decay: the gradient itself is not decayed.
            let Some((theta, g)) = decayed_grad(grads, &s.var, 0.0)? else {
                continue;
            };
            if inplace::takes(&[&theta, &g, &s.m, &s.v]) {
                // The same values in one pass per tensor, without temporaries.
                let moment = |beta: f64, squared| {
                    inplace::InPlace(inplace::Blend {
                        old: beta,
                        new: 1.0 - beta,
                        squared,
                    })
                };
                s.m.inplace_op2(&g, &moment(beta1, false))?;
                s.v.inplace_op2(&g, &moment(beta2, true))?;
                let rule = inplace::AdamWStep {
                    lr,
                    decay: 1f64 - lr_lambda,
                    scale_m,
                    scale_v,
                    eps,
                };
                s.var
                    .as_tensor()
                    .inplace_op3(&s.m, &s.v, &inplace::InPlace(rule))?;
                continue;
            }
            let next_m = ((&s.m * beta1)? + (&g * (1.0 - beta1))?)?;
            let next_v = ((&s.v * beta2)? + (g.sqr()? * (1.0 - beta2))?)?;
            let m_hat = (&next_m * scale_m)?;
            let v_hat = (&next_v * scale_v)?;
            let next_theta = (theta * (1f64 - lr_lambda))?;
            let adjusted = (m_hat / (v_hat.sqrt()? + eps)?)?;
            let next_theta = (next_theta - (adjusted * lr)?)?;
            s.m = next_m;
            s.v = next_v;
            s.var.set(&next_theta)?;
        }
        Ok(())
    }

    lr_in_config!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device};
    use candle_nn::Optimizer;

    #[test]
    fn same_steps_as_candle_nn() -> Result<()> {
        // Bit for bit, small and large (parallel chunks), f32 and f64.
        let mut rt = crate::model::test_tensors::SeededTensors::new(4);
        for n in [6usize, 100_003] {
            for dtype in [DType::F32, DType::F64] {
                let init = rt.randn(0f32, 1.0, n, &Device::Cpu)?.to_dtype(dtype)?;
                let a = Var::from_tensor(&init)?;
                let b = Var::from_tensor(&init)?;
                let cfg = AdamWConfig {
                    lr: 0.05,
                    weight_decay: 0.1,
                    ..Default::default()
                };
                let mut ours = AdamW::new(vec![a.clone()], cfg)?;
                let mut theirs = candle_nn::AdamW::new(vec![b.clone()], cfg.into())?;
                let loss = |w: &Var| w.as_tensor().sqr()?.sum_all()? + w.as_tensor().sum_all()?;
                for _ in 0..5 {
                    ours.backward_step(&loss(&a)?)?;
                    theirs.backward_step(&loss(&b)?)?;
                }
                let (a64, b64) = (a.to_dtype(DType::F64)?, b.to_dtype(DType::F64)?);
                assert_eq!(
                    a64.to_vec1::<f64>()?,
                    b64.to_vec1::<f64>()?,
                    "{dtype:?} {n}"
                );
                assert_eq!(a.dtype(), dtype);
            }
        }
        Ok(())
    }

    #[test]
    fn saved_state_does_not_move_with_later_steps() -> Result<()> {
        let w = Var::from_tensor(&Tensor::new(&[0.5f32, -1.0, 2.0], &Device::Cpu)?)?;
        let mut opt = AdamW::new(vec![w.clone()], AdamWConfig::default())?;
        opt.backward_step(&w.as_tensor().sqr()?.sum_all()?)?;
        let saved = opt.state()?;
        let before: Vec<Vec<f32>> = saved
            .iter()
            .skip(1)
            .map(|(_, t)| t.to_vec1())
            .collect::<Result<_>>()?;
        opt.backward_step(&w.as_tensor().sqr()?.sum_all()?)?;
        let after: Vec<Vec<f32>> = saved
            .iter()
            .skip(1)
            .map(|(_, t)| t.to_vec1())
            .collect::<Result<_>>()?;
        assert_eq!(before, after);
        let now: Vec<Vec<f32>> = opt
            .state()?
            .iter()
            .skip(1)
            .map(|(_, t)| t.to_vec1())
            .collect::<Result<_>>()?;
        assert_ne!(before, now);
        Ok(())
    }

    #[test]
    fn defaults_match_candle_and_round_trip() {
        let c = AdamWConfig::default();
        let p: candle_nn::ParamsAdamW = c.into();
        let d = candle_nn::ParamsAdamW::default();
        assert_eq!(
            (p.lr, p.beta1, p.beta2, p.eps, p.weight_decay),
            (d.lr, d.beta1, d.beta2, d.eps, d.weight_decay)
        );
        assert!(c.validate().is_ok());
        let bad = AdamWConfig { beta2: 1.0, ..c };
        assert!(bad.validate().is_err());
    }
}
