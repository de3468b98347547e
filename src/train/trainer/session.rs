//! The epoch loop of a prepared run, and what ends each epoch: the
//! metrics row, the best model, the latest model, the run state, and the
//! finished run published.

use std::collections::HashMap;
use std::time::Instant;

use candle_core::{Device, Tensor};

use super::claim::Claim;
use super::inputs::Inputs;
use super::loaders::Loaders;
use super::outputs::save_final;
use super::trainee::Trainee;
use super::weights::snapshot;
use super::{FitConfig, FitError, FitReport};
use crate::checkpoint::{self, CheckpointConfig, TrainingInfo};
use crate::optim::AnyOptimizer;
use crate::train::metrics::{self, EpochMetrics};
use crate::train::run_state::{self, RunState};

/// Everything the epochs of a run read.
pub(super) struct Session<'a> {
    pub cfg: &'a FitConfig,
    pub device: &'a Device,
    pub inputs: &'a Inputs,
    pub trainee: &'a Trainee,
    pub loaders: &'a Loaders,
    pub claim: &'a Claim,
}

impl Session<'_> {
    /// Trains the epochs left from `st` (see the module docs of the trainer).
    pub fn run_epochs(
        &self,
        mut st: RunState,
        opt: &mut AnyOptimizer,
    ) -> Result<FitReport, FitError> {
        while (st.epoch as usize) < self.cfg.epochs {
            let started = Instant::now();
            let lr = self.train_epoch(&mut st, opt, started)?;
            let train_seconds = st.epoch_seconds + started.elapsed().as_secs_f64();
            let valid = self.validate()?;
            let train_loss = st.train_loss_sum / st.train_batches.max(1) as f64;
            let m = EpochMetrics {
                epoch: st.epoch as usize + 1,
                step: st.step,
                lr,
                train_loss,
                valid_loss: valid.loss,
                valid_mse: valid.mse,
                valid_mae: valid.mae,
                valid_acc: valid.acc,
                valid_top1: valid.top1,
                seconds: st.epoch_seconds + started.elapsed().as_secs_f64(),
                positions_per_s: st.train_positions as f64 / train_seconds.max(1e-9),
            };
            self.end_epoch(&mut st, opt, m)?;
            if st.stopped_early {
                break;
            }
        }
        Ok(FitReport::of_state(&st, false))
    }

    /// Records the finished epoch `m` in `st` and the files, and publishes
    /// the run once it is finished.
    fn end_epoch(
        &self,
        st: &mut RunState,
        opt: &AnyOptimizer,
        m: EpochMetrics,
    ) -> Result<(), FitError> {
        let cfg = self.cfg;
        let out = &self.claim.work;
        let epoch = st.epoch;
        let key = m.valid_loss.unwrap_or(m.train_loss);
        metrics::append(out, &m).map_err(super::error::io_err(out))?;
        st.history.push(m);
        let improved = st.best_valid_loss.is_none_or(|b| key < b);
        if improved {
            st.best_valid_loss = Some(key);
            st.best_epoch = Some(epoch as usize + 1);
            st.bad_epochs = 0;
        } else {
            st.bad_epochs += 1;
        }
        st.epoch += 1;
        st.batch = 0;
        st.train_loss_sum = 0.0;
        st.train_batches = 0;
        st.train_positions = 0;
        st.epoch_seconds = 0.0;
        if cfg.patience.is_some_and(|p| st.bad_epochs >= p) && (st.epoch as usize) < cfg.epochs {
            st.stopped_early = true;
        }
        st.finished = st.stopped_early || st.epoch as usize >= cfg.epochs;
        let tensors = snapshot(&self.trainee.varmap)?;
        if improved {
            checkpoint::save(
                &out.join("best"),
                &self.checkpoint_config(st, true),
                &tensors,
            )?;
        }
        save_final(out, &self.checkpoint_config(st, false), &tensors)?;
        self.save_state(st, opt)?;
        if st.finished {
            self.claim.run_dir.publish(out)?;
        }
        Ok(())
    }

    /// Saves `st` with the model's and the optimizer's tensors.
    pub fn save_state(&self, st: &RunState, opt: &AnyOptimizer) -> Result<(), FitError> {
        let o: HashMap<String, Tensor> = opt
            .state()?
            .into_iter()
            .map(|(k, t)| Ok((k, t.to_device(&Device::Cpu)?)))
            .collect::<Result<_, candle_core::Error>>()?;
        run_state::save(&self.claim.work, st, &snapshot(&self.trainee.varmap)?, &o)?;
        Ok(())
    }

    /// The checkpoint config of the model at `st`: the best one by
    /// validation loss, or the last epoch's.
    fn checkpoint_config(&self, st: &RunState, best: bool) -> CheckpointConfig {
        let cfg = self.cfg;
        let inputs = self.inputs;
        let last = st.history.last();
        CheckpointConfig::new(
            &inputs.spec.game,
            inputs.encoder.clone(),
            cfg.model.clone(),
            TrainingInfo {
                method: if cfg.comparison.is_some() {
                    "comparison".into()
                } else {
                    "supervised".into()
                },
                seed: Some(cfg.seed),
                dataset_manifest_sha256: Some(inputs.dataset.manifest_sha256().to_string()),
                dataset: Some(cfg.data.display().to_string()),
                examples: st.history.len() as u64 * self.loaders.train.len(),
                hyperparameters: st.args.clone(),
                metrics: serde_json::json!({
                    "epoch": last.map(|m| m.epoch),
                    "kind": if best { "best by validation loss" } else { "last epoch" },
                    "last": last,
                    "best_epoch": st.best_epoch,
                    "best_valid_loss": st.best_valid_loss,
                }),
            },
        )
    }
}
