//! [`FitConfig`], everything a training run depends on: its fingerprint
//! (what a resumed run must share) and the checks made before any work.

use std::collections::HashMap;
use std::path::PathBuf;

use candle_core::{Device, Tensor};

use super::{FitError, ScheduleSpec};
use crate::dataset::SourceWeights;
use crate::infer::plan::Precision;
use crate::model::{ModelConfig, F32_BYTES};
use crate::optim::OptimizerConfig;
use crate::train::comparison::ComparisonConfig;
use crate::train::loss::LossKind;

/// Everything a run depends on.
#[derive(Clone, Debug)]
pub struct FitConfig {
    pub data: PathBuf,
    pub out: PathBuf,
    /// The model (input geometry already checked against the dataset).
    pub model: ModelConfig,
    /// Where the model came from, for messages and the model card.
    pub model_source: String,
    /// Starting weights (from a checkpoint); `None` draws them from `seed`.
    pub init_weights: Option<HashMap<String, Tensor>>,
    pub optimizer: OptimizerConfig,
    pub loss: LossKind,
    pub l1: f64,
    pub l2: f64,
    /// Global gradient-norm clipping.
    pub clip: Option<f64>,
    pub schedule: ScheduleSpec,
    pub warmup_steps: usize,
    pub epochs: usize,
    pub batch_size: usize,
    pub buffer_rows: usize,
    pub seed: u64,
    /// Stop after this many epochs without a better validation loss.
    pub patience: Option<usize>,
    /// Save the run state every this many steps (0: only at epoch ends).
    pub save_every: u64,
    /// `cpu`, `cuda:0`, ...: recorded, part of the fingerprint.
    pub device_name: String,
    /// What the training steps compute in
    /// ([`crate::train::mixed_precision`]); weights, optimizer state and
    /// validation stay f32.
    pub precision: Precision,
    pub resume: bool,
    pub overwrite: bool,
    pub quiet: bool,
    /// Comparison training (rank the move played first) instead of value
    /// regression on the labels; `None`: value regression.
    pub comparison: Option<ComparisonConfig>,
    /// Weight of the policy head's cross-entropy against the dataset's
    /// policy targets, added to the value loss (0: value only). Needs a
    /// model with a policy head.
    pub policy_weight: f64,
    /// Serve each training example mapped by a random board symmetry of
    /// its encoder ([`crate::encode::Symmetries`]); refused for encoders
    /// that declare none, and with comparison or policy training.
    pub augment: bool,
    /// Each row's weight in the losses by its source (empty: all 1);
    /// value and policy training only.
    pub source_weights: SourceWeights,
}

impl FitConfig {
    /// The arguments a resumed run must share with the interrupted one.
    pub fn fingerprint(&self, manifest_sha256: &str) -> serde_json::Value {
        let mut v = serde_json::json!({
            "dataset_manifest_sha256": manifest_sha256,
            "model": self.model,
            "model_source": self.model_source,
            "optimizer": self.optimizer,
            "loss": self.loss,
            "l1": self.l1,
            "l2": self.l2,
            "clip": self.clip,
            "schedule": self.schedule,
            "warmup_steps": self.warmup_steps,
            "epochs": self.epochs,
            "batch": self.batch_size,
            "buffer_rows": self.buffer_rows,
            "seed": self.seed,
            "patience": self.patience,
            "device": self.device_name,
        });
        // Only comparison runs carry the key, so value runs saved before it
        // existed still resume.
        if let (Some(c), Some(obj)) = (&self.comparison, v.as_object_mut()) {
            obj.insert("comparison".into(), serde_json::json!(c));
        }
        // Likewise only runs below f32 carry their precision.
        if let (Precision::Tf32 | Precision::Bf16, Some(obj)) = (self.precision, v.as_object_mut())
        {
            obj.insert("precision".into(), serde_json::json!(self.precision.name()));
        }
        // Likewise only augmented runs carry the flag.
        if let (true, Some(obj)) = (self.augment, v.as_object_mut()) {
            obj.insert("augment".into(), serde_json::json!(true));
        }
        // Likewise only runs that weigh sources carry their rules.
        if let (false, Some(obj)) = (self.source_weights.is_empty(), v.as_object_mut()) {
            obj.insert(
                "source_weights".into(),
                serde_json::json!(self.source_weights.rules()),
            );
        }
        // Likewise only value+policy runs carry their weight.
        if let (true, Some(obj)) = (self.policy_weight > 0.0, v.as_object_mut()) {
            obj.insert(
                "policy_weight".into(),
                serde_json::json!(self.policy_weight),
            );
        }
        v
    }

    /// Whether the run's precision can train this model on `device`
    /// ([`crate::train::mixed_precision`]).
    pub(super) fn check_precision(&self, device: &Device) -> Result<(), FitError> {
        let cfg = self;
        let refuse = |why: String| {
            Err(FitError::Invalid {
                field: "precision",
                why: format!("{}: {why}", cfg.precision),
            })
        };
        match cfg.precision {
            Precision::F32 => Ok(()),
            Precision::Tf32 if !device.is_cuda() => refuse(format!(
                "TF32 is a mode of CUDA's tensor cores, and this run is on {}; use f32 or bf16",
                cfg.device_name
            )),
            Precision::Tf32 => Ok(()),
            Precision::Bf16 if cfg.comparison.is_some() => {
                refuse("comparison training runs in f32 or tf32".into())
            }
            Precision::Bf16 => match crate::train::mixed_precision::bf16_refusal(&cfg.model) {
                Some(why) => refuse(why.into()),
                None => Ok(()),
            },
        }
    }

    pub(super) fn validate(&self) -> Result<(), FitError> {
        let nonneg = |field: &'static str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(FitError::Invalid {
                    field,
                    why: format!("{v}, expected a finite number >= 0"),
                })
            }
        };
        nonneg("l1", self.l1)?;
        nonneg("l2", self.l2)?;
        nonneg("policy_weight", self.policy_weight)?;
        if self.policy_weight > 0.0 && !self.model.has_policy() {
            return Err(FitError::Invalid {
                field: "policy_weight",
                why: format!(
                    "{}, but {} has no policy head",
                    self.policy_weight, self.model_source
                ),
            });
        }
        if self.augment && (self.policy_weight > 0.0 || self.comparison.is_some()) {
            return Err(FitError::Invalid {
                field: "augment",
                why: "only value training is augmented (policy targets and compared moves are not mapped)".into(),
            });
        }
        if !self.source_weights.is_empty() && self.comparison.is_some() {
            return Err(FitError::Invalid {
                field: "source_weight",
                why: "applies to value and policy training, not the comparison objective".into(),
            });
        }
        if self.policy_weight > 0.0 && self.comparison.is_some() {
            return Err(FitError::Invalid {
                field: "policy_weight",
                why: "applies to value training, not the comparison objective".into(),
            });
        }
        if let Some(c) = self.clip {
            nonneg("clip", c)?;
        }
        if self.epochs == 0 {
            return Err(FitError::Invalid {
                field: "epochs",
                why: "0, expected at least 1".into(),
            });
        }
        if let Some(c) = &self.comparison {
            c.validate()?;
        }
        if self.batch_size == 0 {
            return Err(FitError::Invalid {
                field: "batch",
                why: "0, expected at least 1".into(),
            });
        }
        self.optimizer.validate().map_err(|e| FitError::Invalid {
            field: "optimizer",
            why: e.to_string(),
        })?;
        self.loss
            .check_output(self.model.output())
            .map_err(|e| FitError::Invalid {
                field: "loss",
                why: e.to_string(),
            })?;
        // Weights, gradients and the optimizer's state, before any is made;
        // bf16 adds a half-width copy of the weights and their gradients.
        let copies = u64::from(self.precision == Precision::Bf16);
        let values = 2 + self.optimizer.state_per_param() + copies;
        self.model
            .check_memory(F32_BYTES * values)
            .map_err(|e| FitError::Model {
                source_name: self.model_source.clone(),
                why: e.to_string(),
            })?;
        Ok(())
    }
}
