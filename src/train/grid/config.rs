//! [`GridConfig`], everything a grid search depends on: its fingerprint
//! (what a rerun must share), the configurations drawn, each fold's rows,
//! and the training run of one (configuration, fold).

use std::path::PathBuf;

use rand::seq::SliceRandom;

use super::{GridAxes, GridError, GridPoint, Regularizer, Rule};
use crate::dataset::Dataset;
use crate::infer::plan::Precision;
use crate::model::{Cnn3NetConfig, ModelConfig};
use crate::train::loss::LossKind;
use crate::train::trainer::{CvFolds, FitConfig, ScheduleSpec};
use crate::util::seeded_rng;

/// Everything a grid search depends on.
#[derive(Clone, Debug)]
pub struct GridConfig {
    pub data: PathBuf,
    pub out: PathBuf,
    /// Cross-validation folds (2 to the dataset's k).
    pub folds: u8,
    /// Draw this many configurations from the product (seeded); `None`: all.
    pub sample: Option<usize>,
    pub seed: u64,
    pub epochs: usize,
    pub batch_size: usize,
    pub buffer_rows: usize,
    /// Runs trained at the same time.
    pub jobs: usize,
    pub axes: GridAxes,
    /// The cnn3 model every configuration starts from (kernel and dropout
    /// are replaced).
    pub base: Cnn3NetConfig,
    pub model_source: String,
    /// Strength of the l1 or l2 penalty.
    pub penalty: f64,
    /// Learning rate (default 0.01).
    pub lr: f64,
    pub momentum: f64,
    pub device_name: String,
    /// What the training steps compute in ([`FitConfig::precision`]).
    pub precision: Precision,
    pub quiet: bool,
}

impl GridConfig {
    /// The arguments a rerun must share.
    pub fn fingerprint(&self, manifest_sha256: &str) -> serde_json::Value {
        let mut v = serde_json::json!({
            "dataset_manifest_sha256": manifest_sha256,
            "folds": self.folds,
            "sample": self.sample,
            "seed": self.seed,
            "epochs": self.epochs,
            "batch": self.batch_size,
            "buffer_rows": self.buffer_rows,
            "axes": self.axes,
            "base": self.base,
            "penalty": self.penalty,
            "lr": self.lr,
            "momentum": self.momentum,
            "device": self.device_name,
        });
        // Only grids below f32 carry their precision, so older ones rerun.
        if let (Precision::Tf32 | Precision::Bf16, Some(obj)) = (self.precision, v.as_object_mut())
        {
            obj.insert("precision".into(), serde_json::json!(self.precision.name()));
        }
        v
    }

    /// The configurations to train, in product order.
    pub fn points(&self) -> Vec<GridPoint> {
        let all = self.axes.product();
        match self.sample {
            Some(n) if n < all.len() => {
                let mut idx: Vec<usize> = (0..all.len()).collect();
                idx.shuffle(&mut seeded_rng(self.seed, 0x6772_6964));
                let mut idx = idx[..n].to_vec();
                idx.sort_unstable();
                idx.into_iter().map(|i| all[i]).collect()
            }
            _ => all,
        }
    }

    /// Dataset folds of cross-validation fold `f` and of the others.
    pub fn cv_folds(&self, k: u8, f: u8) -> CvFolds {
        let (valid, train): (Vec<u8>, Vec<u8>) = (0..k).partition(|d| d % self.folds == f);
        CvFolds {
            train_folds: train,
            valid_folds: valid,
        }
    }

    pub(super) fn check(&self, ds: &Dataset) -> Result<(), GridError> {
        let k = ds.spec().folds;
        if self.folds < 2 || self.folds > k {
            return Err(GridError::Invalid {
                flag: "folds",
                why: format!(
                    "{}, expected 2 to {k} (the dataset {} has {k} folds)",
                    self.folds,
                    ds.dir().display()
                ),
            });
        }
        if self.axes.is_empty() {
            return Err(GridError::Invalid {
                flag: "dropout/regularizer/optimizer/kernel",
                why: "an empty axis".into(),
            });
        }
        if self.sample == Some(0) {
            return Err(GridError::Invalid {
                flag: "sample",
                why: "0, expected at least 1".into(),
            });
        }
        for (flag, v) in [("penalty", self.penalty), ("lr", self.lr)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(GridError::Invalid {
                    flag,
                    why: format!("{v}, expected a finite number >= 0"),
                });
            }
        }
        if self.jobs == 0 {
            return Err(GridError::Invalid {
                flag: "jobs",
                why: "0, expected at least 1".into(),
            });
        }
        let [_, h, w] = self.base.input.planes;
        for &[kh, kw] in &self.axes.kernel {
            if kh > h || kw > w {
                return Err(GridError::Axis {
                    flag: "kernel",
                    value: format!("{kh}x{kw}"),
                    why: format!(
                        "does not fit the {h}x{w} board of the dataset {} (encoder {}); \
                         a kernel is at most {h}x{w}",
                        ds.dir().display(),
                        ds.spec().encoder.name
                    ),
                });
            }
        }
        Ok(())
    }

    pub(super) fn fit_config(&self, p: &GridPoint, out: PathBuf) -> FitConfig {
        let mut net = self.base.net.clone();
        net.kernel = p.kernel;
        net.dropout = p.dropout;
        // The grid's RMSprop is the plain one: no momentum.
        let momentum = if p.optimizer == Rule::Rmsprop {
            0.0
        } else {
            self.momentum
        };
        let optimizer = p.optimizer.optimizer(self.lr, momentum, 0.0);
        FitConfig {
            data: self.data.clone(),
            out,
            model: ModelConfig::Cnn3(Cnn3NetConfig::new(self.base.input, net)),
            model_source: self.model_source.clone(),
            init_weights: None,
            optimizer,
            loss: LossKind::Mse,
            l1: if p.regularizer == Regularizer::L1 {
                self.penalty
            } else {
                0.0
            },
            l2: if p.regularizer == Regularizer::L2 {
                self.penalty
            } else {
                0.0
            },
            clip: None,
            schedule: ScheduleSpec::Constant,
            warmup_steps: 0,
            epochs: self.epochs,
            batch_size: self.batch_size,
            buffer_rows: self.buffer_rows,
            seed: self.seed,
            patience: None,
            save_every: 200,
            device_name: self.device_name.clone(),
            precision: self.precision,
            resume: true,
            overwrite: false,
            quiet: true,
            comparison: None,
            policy_weight: 0.0,
            augment: false,
            source_weights: Default::default(),
        }
    }
}
