//! Learning-rate schedules: closed forms of PyTorch's `StepLR`,
//! `CosineAnnealingLR` and `LinearLR` warmup.

use serde::{Deserialize, Serialize};

use super::{finite, non_negative, OptimError};

/// A learning rate as a function of the step (or epoch) count, relative to a
/// base learning rate. Serialized tagged by `"kind"`, snake_case:
///
/// ```
/// use plies::optim::LrSchedule;
/// let s: LrSchedule = serde_json::from_str(
///     r#"{"kind": "warmup", "warmup_steps": 2, "start_factor": 0.5,
///         "then": {"kind": "cosine", "t_max": 10}}"#,
/// ).unwrap();
/// assert_eq!(s.lr(0.1, 0), 0.05);
/// assert_eq!(s.lr(0.1, 2), 0.1);
/// assert!(s.lr(0.1, 12).abs() < 1e-12);
/// ```
///
/// Use it with any optimizer: `schedule.apply(&mut opt, base_lr, step)`
/// before step `step` (counted from 0).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LrSchedule {
    /// Always the base rate.
    #[default]
    Constant,
    /// `base * gamma^(step / step_size)` (integer division), as `StepLR`.
    Step {
        /// Steps between decays (at least 1).
        step_size: usize,
        /// Decay factor (default 0.1).
        #[serde(default = "default_gamma")]
        gamma: f64,
    },
    /// `eta_min + (base - eta_min) * (1 + cos(pi * step / t_max)) / 2`, as
    /// `CosineAnnealingLR`, for steps up to `t_max`; from then on `eta_min`
    /// (PyTorch's goes back up after `t_max`).
    Cosine {
        /// Steps of the half cosine (at least 1).
        t_max: usize,
        /// The final rate (default 0).
        #[serde(default)]
        eta_min: f64,
    },
    /// Linear warmup as `LinearLR(start_factor, 1.0, warmup_steps)`:
    /// `base * (start_factor + (1 - start_factor) * step / warmup_steps)`
    /// for the first `warmup_steps` steps, then `then`, with its step count
    /// restarted at 0 (as `SequentialLR` does).
    Warmup {
        /// Steps of warmup (at least 1).
        warmup_steps: usize,
        /// Fraction of the base rate at step 0, in `(0, 1]` (default 1/3,
        /// PyTorch's).
        #[serde(default = "default_start_factor")]
        start_factor: f64,
        /// The schedule after warmup (default constant).
        #[serde(default)]
        then: Box<LrSchedule>,
    },
}

fn default_gamma() -> f64 {
    0.1
}

fn default_start_factor() -> f64 {
    1.0 / 3.0
}

/// Refuses a length of 0 steps.
fn at_least_one(owner: &'static str, name: &'static str, steps: usize) -> Result<(), OptimError> {
    if steps == 0 {
        return Err(OptimError::ZeroLength { owner, name });
    }
    Ok(())
}

impl LrSchedule {
    /// Checks lengths (at least 1) and factors (finite; gamma, eta_min >= 0;
    /// start_factor in `(0, 1]`, as PyTorch requires).
    pub fn validate(&self) -> Result<(), OptimError> {
        match self {
            Self::Constant => Ok(()),
            Self::Step { step_size, gamma } => {
                at_least_one("step schedule", "step_size", *step_size)?;
                non_negative("step schedule", "gamma", *gamma)
            }
            Self::Cosine { t_max, eta_min } => {
                at_least_one("cosine schedule", "t_max", *t_max)?;
                non_negative("cosine schedule", "eta_min", *eta_min)
            }
            Self::Warmup {
                warmup_steps,
                start_factor,
                then,
            } => {
                at_least_one("warmup schedule", "warmup_steps", *warmup_steps)?;
                finite("warmup schedule", "start_factor", *start_factor)?;
                if !(*start_factor > 0.0 && *start_factor <= 1.0) {
                    return Err(OptimError::InvalidParameter {
                        owner: "warmup schedule",
                        name: "start_factor",
                        value: *start_factor,
                        expected: "in (0, 1]",
                    });
                }
                then.validate()
            }
        }
    }

    /// The learning rate for step `step` (from 0) given the base rate.
    ///
    /// Never panics: a zero `step_size` means no decay, a zero `t_max` means
    /// `eta_min` at once (such configs fail [`LrSchedule::validate`]).
    pub fn lr(&self, base_lr: f64, step: usize) -> f64 {
        match self {
            Self::Constant => base_lr,
            Self::Step { step_size, gamma } => {
                let k = step.checked_div(*step_size).unwrap_or(0);
                match i32::try_from(k) {
                    Ok(k) => base_lr * gamma.powi(k),
                    Err(_) => base_lr * gamma.powf(k as f64),
                }
            }
            Self::Cosine { t_max, eta_min } => {
                if step >= *t_max {
                    return *eta_min;
                }
                let t = step as f64 / *t_max as f64;
                eta_min + (base_lr - eta_min) * (1.0 + (std::f64::consts::PI * t).cos()) / 2.0
            }
            Self::Warmup {
                warmup_steps,
                start_factor,
                then,
            } => {
                if step < *warmup_steps {
                    let t = step as f64 / *warmup_steps as f64;
                    base_lr * (start_factor + (1.0 - start_factor) * t)
                } else {
                    then.lr(base_lr, step - warmup_steps)
                }
            }
        }
    }

    /// Sets `opt`'s learning rate to `self.lr(base_lr, step)`.
    pub fn apply<O: candle_nn::Optimizer>(&self, opt: &mut O, base_lr: f64, step: usize) {
        opt.set_learning_rate(self.lr(base_lr, step));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_schedule() {
        let s = LrSchedule::Step {
            step_size: 3,
            gamma: 0.5,
        };
        let lrs: Vec<f64> = (0..8).map(|i| s.lr(1.0, i)).collect();
        assert_eq!(lrs, vec![1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25]);
        assert!(s.validate().is_ok());
    }

    #[test]
    fn cosine_schedule() {
        let s = LrSchedule::Cosine {
            t_max: 4,
            eta_min: 0.1,
        };
        assert_eq!(s.lr(1.0, 0), 1.0);
        assert!((s.lr(1.0, 2) - 0.55).abs() < 1e-12);
        assert_eq!(s.lr(1.0, 4), 0.1);
        assert_eq!(s.lr(1.0, 100), 0.1);
        let mut prev = f64::INFINITY;
        for i in 0..6 {
            let lr = s.lr(1.0, i);
            assert!(lr <= prev);
            prev = lr;
        }
    }

    #[test]
    fn warmup_then_step() {
        let s = LrSchedule::Warmup {
            warmup_steps: 4,
            start_factor: 0.2,
            then: Box::new(LrSchedule::Step {
                step_size: 2,
                gamma: 0.1,
            }),
        };
        let lrs: Vec<f64> = (0..7).map(|i| s.lr(2.0, i)).collect();
        for (got, want) in lrs.iter().zip([0.4, 0.8, 1.2, 1.6, 2.0]) {
            assert!((got - want).abs() < 1e-15, "{lrs:?}");
        }
        assert!((lrs[6] - 0.2).abs() < 1e-15);
    }

    #[test]
    fn degenerate_schedules_do_not_panic_but_fail_validation() {
        let bad = [
            LrSchedule::Step {
                step_size: 0,
                gamma: 0.5,
            },
            LrSchedule::Cosine {
                t_max: 0,
                eta_min: 0.0,
            },
            LrSchedule::Warmup {
                warmup_steps: 0,
                start_factor: 0.5,
                then: Box::default(),
            },
            LrSchedule::Warmup {
                warmup_steps: 2,
                start_factor: 1.5,
                then: Box::default(),
            },
            LrSchedule::Warmup {
                warmup_steps: 2,
                start_factor: 0.0,
                then: Box::default(),
            },
            LrSchedule::Step {
                step_size: 1,
                gamma: f64::NAN,
            },
        ];
        for s in bad {
            assert!(s.validate().is_err(), "{s:?}");
            for i in 0..3 {
                let _ = s.lr(1.0, i);
            }
        }
        let huge = LrSchedule::Step {
            step_size: 1,
            gamma: 0.5,
        };
        assert_eq!(huge.lr(1.0, usize::MAX), 0.0);
    }

    #[test]
    fn serde_round_trip_and_apply() -> candle_core::Result<()> {
        let s: LrSchedule = serde_json::from_str(r#"{"kind":"step","step_size":10}"#)
            .map_err(candle_core::Error::wrap)?;
        assert_eq!(
            s,
            LrSchedule::Step {
                step_size: 10,
                gamma: 0.1
            }
        );
        let json = serde_json::to_string(&s).map_err(candle_core::Error::wrap)?;
        let back: LrSchedule = serde_json::from_str(&json).map_err(candle_core::Error::wrap)?;
        assert_eq!(back, s);
        let d: LrSchedule =
            serde_json::from_str(r#"{"kind":"constant"}"#).map_err(candle_core::Error::wrap)?;
        assert_eq!(d, LrSchedule::Constant);

        let mut opt = <candle_nn::SGD as candle_nn::Optimizer>::new(vec![], 1.0)?;
        s.apply(&mut opt, 0.4, 25);
        assert!((candle_nn::Optimizer::learning_rate(&opt) - 0.004).abs() < 1e-15);
        Ok(())
    }
}
