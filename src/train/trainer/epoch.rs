//! One epoch's training steps (from the batch a resumed run stopped at),
//! with the run state saved every `save_every` steps.

use std::time::Instant;

use candle_core::{DType, Tensor};

use super::batch::{labels_for, move_rows, SAMPLE_STREAM};
use super::session::Session;
use super::FitError;
use crate::dataset::TensorBatch;
use crate::optim::{clip_grad_norm, AnyOptimizer};
use crate::train::comparison::{add_grads, keep_vars, Comparer};
use crate::train::loss::value_loss;
use crate::train::policy_loss::policy_cross_entropy;
use crate::train::regularize::penalty;
use crate::train::run_state::RunState;
use crate::util::derive_seed;

impl Session<'_> {
    /// Trains the rest of the epoch `st.epoch`, begun at `started`;
    /// returns the learning rate of its last step.
    pub fn train_epoch(
        &self,
        st: &mut RunState,
        opt: &mut AnyOptimizer,
        started: Instant,
    ) -> Result<f64, FitError> {
        let (cfg, loaders) = (self.cfg, self.loaders);
        let train = &loaders.train;
        let epoch = st.epoch;
        let pb = progress_bar(cfg.quiet, train.len(), epoch as usize + 1, cfg.epochs);
        pb.set_position((st.batch * cfg.batch_size as u64).min(train.len()));
        pb.reset_eta();
        let mut lr = loaders.schedule.lr(loaders.base_lr, st.step as usize);
        let epoch_from_start = st.batch == 0;
        let mut moved_rows = 0u64;
        for batch in train.epoch_tensors_from(epoch, st.batch, self.device) {
            let b = batch?;
            lr = loaders.schedule.lr(loaders.base_lr, st.step as usize);
            opt.set_learning_rate(lr);
            self.trainee.begin_step()?;
            let (lv, mut grads) = match (&cfg.comparison, &self.inputs.children) {
                (Some(cmp), Some(x)) => {
                    let rows = move_rows(&b);
                    moved_rows += rows.len() as u64;
                    let comparer = Comparer {
                        net: self.trainee.step_net(),
                        expander: x.as_ref(),
                        cfg: cmp,
                        shape: self.inputs.spec.encoder.shape,
                        device: self.device,
                        vars: self.trainee.step_vars(),
                    };
                    let scale = 1.0 / rows.len().max(1) as f64;
                    let seed = derive_seed(derive_seed(cfg.seed, SAMPLE_STREAM), st.step);
                    let c = comparer.run(&rows, scale, seed, true)?;
                    let rest = self.value_part(&b, st.step, cmp.value_weight)?;
                    let lv = c.loss_sum * scale + rest.to_dtype(DType::F64)?.to_scalar::<f64>()?;
                    let mut g = c.grads;
                    add_grads(
                        &mut g,
                        keep_vars(rest.backward()?, self.trainee.step_vars()),
                    )?;
                    (lv, g.ok_or(candle_core::Error::Msg("no gradient".into()))?)
                }
                _ => {
                    let loss = self.value_part(&b, st.step, 1.0)?;
                    let lv = loss.to_dtype(DType::F64)?.to_scalar::<f64>()?;
                    (lv, loss.backward()?)
                }
            };
            if !lv.is_finite() {
                return Err(FitError::NotFinite {
                    step: st.step,
                    epoch: epoch + 1,
                });
            }
            self.trainee.to_masters(&mut grads)?;
            if let Some(c) = cfg.clip {
                let norm = clip_grad_norm(&mut grads, &self.trainee.tvars, c)?;
                if !norm.is_finite() {
                    return Err(FitError::NotFinite {
                        step: st.step,
                        epoch: epoch + 1,
                    });
                }
            }
            opt.step(&grads)?;
            st.step += 1;
            st.batch += 1;
            st.train_loss_sum += lv;
            st.train_batches += 1;
            st.train_positions += b.len as u64;
            pb.inc(b.len as u64);
            if cfg.save_every > 0 && st.step.is_multiple_of(cfg.save_every) {
                let mut snap = st.clone();
                snap.epoch_seconds += started.elapsed().as_secs_f64();
                self.save_state(&snap, opt)?;
            }
        }
        pb.finish_and_clear();
        if self.inputs.children.is_some() && epoch_from_start && moved_rows == 0 {
            return Err(FitError::NoMoves {
                data: cfg.data.clone(),
                split: "train",
            });
        }
        Ok(lr)
    }

    /// The value loss of batch `b` at `step` (with the policy's
    /// cross-entropy where there are targets) times `weight`, plus the
    /// weight penalty.
    fn value_part(&self, b: &TensorBatch, step: u64, weight: f64) -> Result<Tensor, FitError> {
        let cfg = self.cfg;
        let labels = labels_for(b, self.inputs.encoder.perspective)?;
        let out_v = crate::model::dropout::with_step(cfg.seed, step, || {
            self.trainee
                .step_net()
                .forward(&b.planes, b.globals.as_ref(), true)
        })?;
        let weights = b.weights.as_ref();
        let data_loss = value_loss(cfg.loss, cfg.model.output(), &out_v.value, &labels, weights)?;
        let data_loss = match (&b.policy, &out_v.policy) {
            (Some(target), Some(logits)) => {
                let ce = policy_cross_entropy(logits, target, weights)?;
                (data_loss + ce.affine(cfg.policy_weight, 0.0)?)?
            }
            _ => data_loss,
        };
        let data_loss = if weight == 1.0 {
            data_loss
        } else {
            data_loss.affine(weight, 0.0)?
        };
        Ok(match penalty(&self.trainee.pvars, cfg.l1, cfg.l2)? {
            Some(p) => (&data_loss + p)?,
            None => data_loss,
        })
    }
}

fn progress_bar(
    quiet: bool,
    positions: u64,
    epoch: usize,
    epochs: usize,
) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(positions);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg} [{bar:30}] {human_pos}/{human_len} positions ({per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    pb.set_message(format!("epoch {epoch}/{epochs}"));
    pb
}
