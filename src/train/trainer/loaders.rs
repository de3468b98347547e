//! The run's data: the loaders of the rows trained and validated on (the
//! folds of a cross-validation run), and the learning-rate schedule their
//! size gives.

use super::encoder::policy_len_for;
use super::inputs::Inputs;
use super::{CvFolds, FitConfig, FitError};
use crate::dataset::{Split, StreamConfig, StreamLoader};
use crate::optim::LrSchedule;

/// The loaders and schedule of a run.
pub(super) struct Loaders {
    /// The training rows, mapped by the augmentation's symmetries.
    pub train: StreamLoader,
    pub valid: StreamLoader,
    pub schedule: LrSchedule,
    /// The optimizer's base learning rate.
    pub base_lr: f64,
}

impl Loaders {
    /// Opens the loaders of `cfg` (on the folds `cv`) and checks the
    /// schedule; refuses an empty training split.
    pub fn open(cfg: &FitConfig, cv: Option<&CvFolds>, inputs: &Inputs) -> Result<Self, FitError> {
        let spec = &inputs.spec;
        let policy_len = if cfg.policy_weight > 0.0 {
            policy_len_for(cfg, &spec.game, spec.encoder.shape)?
        } else {
            0
        };
        let stream = |split: Split| StreamConfig {
            policy_len,
            split: Some(split),
            splits: cv.map(|_| vec![Split::Train, Split::Valid]),
            folds: cv.map(|c| match split {
                Split::Train => c.train_folds.clone(),
                _ => c.valid_folds.clone(),
            }),
            batch_size: cfg.batch_size,
            buffer_rows: cfg.buffer_rows.max(cfg.batch_size),
            seed: cfg.seed,
            drop_last: false,
            with_text: cfg.comparison.is_some(),
            source_weights: cfg.source_weights.clone(),
            ..StreamConfig::default()
        };
        // Only the training examples are mapped; validation reads the data as is.
        let train = StreamLoader::new(
            &inputs.dataset,
            StreamConfig {
                symmetries: inputs.symmetries,
                ..stream(Split::Train)
            },
        )?;
        if train.is_empty() {
            return Err(FitError::Invalid {
                field: "data",
                why: format!(
                    "{}: the train split has no rows{}",
                    cfg.data.display(),
                    if cv.is_some() {
                        " in the training folds"
                    } else {
                        ""
                    }
                ),
            });
        }
        let valid = StreamLoader::new(&inputs.dataset, stream(Split::Valid))?;
        let per_epoch = train.num_batches();
        let schedule = cfg
            .schedule
            .to_steps(per_epoch, cfg.epochs, cfg.warmup_steps);
        schedule.validate().map_err(|e| FitError::Invalid {
            field: "schedule",
            why: e.to_string(),
        })?;
        Ok(Loaders {
            train,
            valid,
            schedule,
            base_lr: cfg.optimizer.lr(),
        })
    }
}
