//! [`ScheduleSpec`], the learning-rate schedule as `--schedule` gives it
//! (in epochs), and its conversion to optimizer steps.

use serde::{Deserialize, Serialize};

use super::FitError;
use crate::optim::LrSchedule;

/// The learning-rate schedule, in epochs where it has a length.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ScheduleSpec {
    #[default]
    Constant,
    /// Multiply by `gamma` every `every_epochs` epochs (`StepLR`).
    Step { every_epochs: usize, gamma: f64 },
    /// Half a cosine from the base rate to `eta_min` over the whole run.
    Cosine { eta_min: f64 },
}

impl ScheduleSpec {
    /// Parses `constant`, `step:EPOCHS[:GAMMA]` (gamma 0.1 by default) or
    /// `cosine[:ETA_MIN]`.
    pub fn parse(s: &str) -> Result<Self, FitError> {
        let parts: Vec<&str> = s.split(':').collect();
        let bad = |why: &str| FitError::Invalid {
            field: "schedule",
            why: format!(
                "{s:?}: {why} (expected constant, step:EPOCHS[:GAMMA] or cosine[:ETA_MIN])"
            ),
        };
        let num = |t: &str| t.parse::<f64>().map_err(|_| bad("not a number"));
        match parts.as_slice() {
            ["constant"] => Ok(Self::Constant),
            ["step", e] | ["step", e, _] => {
                let every_epochs = e
                    .parse::<usize>()
                    .map_err(|_| bad("EPOCHS is not a count"))?;
                if every_epochs == 0 {
                    return Err(bad("EPOCHS must be at least 1"));
                }
                let gamma = match parts.get(2) {
                    Some(g) => num(g)?,
                    None => 0.1,
                };
                Ok(Self::Step {
                    every_epochs,
                    gamma,
                })
            }
            ["cosine"] => Ok(Self::Cosine { eta_min: 0.0 }),
            ["cosine", m] => Ok(Self::Cosine { eta_min: num(m)? }),
            _ => Err(bad("unknown schedule")),
        }
    }

    /// The schedule in optimizer steps.
    pub fn to_steps(
        &self,
        batches_per_epoch: u64,
        epochs: usize,
        warmup_steps: usize,
    ) -> LrSchedule {
        let per = batches_per_epoch.max(1) as usize;
        let main = match *self {
            Self::Constant => LrSchedule::Constant,
            Self::Step {
                every_epochs,
                gamma,
            } => LrSchedule::Step {
                step_size: every_epochs * per,
                gamma,
            },
            Self::Cosine { eta_min } => LrSchedule::Cosine {
                t_max: (epochs * per).saturating_sub(warmup_steps).max(1),
                eta_min,
            },
        };
        if warmup_steps > 0 {
            LrSchedule::Warmup {
                warmup_steps,
                start_factor: 1.0 / 3.0,
                then: Box::new(main),
            }
        } else {
            main
        }
    }
}
