//! The training engine behind `plies train --data ...`: any model on any
//! dataset, streamed through [`StreamLoader`], with validation, metrics
//! files, the best checkpoint, early stopping and exact resume.
//!
//! Layout of the output directory `CKPT`:
//!
//! ```text
//! CKPT/model.safetensors, config.json, README.md   the latest epoch's model
//! CKPT/best/                                      the best epoch by validation loss
//! CKPT/metrics.csv, metrics.jsonl                 one line per epoch
//! CKPT/run-state/                                 what --resume continues from
//! ```
//!
//! `--overwrite` of a used `CKPT` trains in `.CKPT.plies-staging` beside it
//! and swaps the finished run in, so `CKPT` holds the old run, whole, until
//! then; `--resume` continues an interrupted overwrite with the same
//! arguments.
//!
//! Determinism: the batches depend only on (seed, epoch, batch size, shuffle
//! buffer); the weights start from a seeded draw; the learning rate is a
//! function of the step. With the same thread count (`RAYON_NUM_THREADS`)
//! a CPU run killed at any moment and resumed ends with exactly the weights
//! of an uninterrupted run. Dropout masks are a function of (seed, step,
//! layer) ([`crate::model::dropout`]), so runs with dropout repeat and
//! resume exactly too.
//!
//! Cross-validation ([`fit_cv`]): the train and valid splits together, cut
//! by the dataset's `fold` column into the folds trained on and the folds
//! validated on; the test split is never read.
//!
//! A run is prepared in steps, then trained epoch by epoch:
//!
//! | file | concept |
//! | --- | --- |
//! | `config.rs` | [`FitConfig`]: the arguments, their fingerprint and checks |
//! | `schedule.rs` | [`ScheduleSpec`], the learning-rate schedule in epochs |
//! | `models.rs` | [`PRESETS`], [`preset`], [`resolve_model`]: what `--model` names |
//! | `encoder.rs` | the encoder's perspective, symmetries and policy length |
//! | `inputs.rs` | step 1: the inputs checked before the folder is touched |
//! | `claim.rs` | step 2: the folder claimed, and where the run starts |
//! | `trainee.rs` | step 3: the model and its optimizer |
//! | `loaders.rs` | step 4: the loaders and the schedule |
//! | `session.rs` | the epoch loop and what ends each epoch |
//! | `epoch.rs` | one epoch's training steps |
//! | `validation.rs` | the validation pass |
//! | `batch.rs` | a batch's labels and compared moves |
//! | `weights.rs` | variables to tensors and back |
//! | `outputs.rs` | the latest model's files in the folder |
//! | `report.rs` | [`FitReport`] |
//! | `error.rs` | [`FitError`] |

mod batch;
mod claim;
mod config;
mod encoder;
mod epoch;
mod error;
mod inputs;
mod loaders;
mod models;
mod outputs;
mod report;
mod schedule;
mod session;
#[cfg(test)]
mod tests;
mod trainee;
mod validation;
mod weights;

use candle_core::Device;
use serde::{Deserialize, Serialize};

pub use config::FitConfig;
pub use encoder::encoder_spec;
pub use error::FitError;
pub use models::{preset, resolve_model, PRESETS};
pub use report::FitReport;
pub use schedule::ScheduleSpec;

use crate::optim::AnyOptimizer;
use crate::train::metrics;
use crate::train::run_state::{RunState, RUN_STATE_VERSION};
use claim::Claim;
use inputs::Inputs;
use loaders::Loaders;
use session::Session;
use trainee::Trainee;

/// Which rows a cross-validation run trains and validates on: the rows of
/// the train and valid splits whose fold is in `train_folds`, resp.
/// `valid_folds` (dataset folds, `0..k`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CvFolds {
    pub train_folds: Vec<u8>,
    pub valid_folds: Vec<u8>,
}

/// Trains `cfg.model` on `cfg.data` (see the module docs).
pub fn fit(cfg: &FitConfig, device: &Device) -> Result<FitReport, FitError> {
    fit_cv(cfg, None, device)
}

/// [`fit`] on the folds `cv` of the train and valid splits (`None`: the
/// train split, validated on the valid split).
pub fn fit_cv(
    cfg: &FitConfig,
    cv: Option<&CvFolds>,
    device: &Device,
) -> Result<FitReport, FitError> {
    if device.is_cpu() && rayon::current_num_threads() > 1 {
        // The steps' serial parts on a pool thread: see on_compute_pool.
        return crate::model::kernels::on_compute_pool(|| fit_cv_here(cfg, cv, device));
    }
    fit_cv_here(cfg, cv, device)
}

/// Prepares the run (inputs, folder, model, loaders), then trains its
/// epochs.
fn fit_cv_here(
    cfg: &FitConfig,
    cv: Option<&CvFolds>,
    device: &Device,
) -> Result<FitReport, FitError> {
    cfg.check_precision(device)?;
    let _products = crate::train::mixed_precision::Tf32Products::set(cfg.precision);
    let inputs = Inputs::check(cfg, cv)?;
    let claim = Claim::take(cfg, &inputs)?;
    let (trainee, mut opt) = Trainee::build(cfg, device)?;
    let st = match starting_state(&inputs, &claim, &trainee, &mut opt)? {
        Start::Train(st) => st,
        Start::Finished(report) => return Ok(report),
    };
    let loaders = Loaders::open(cfg, cv, &inputs)?;
    let session = Session {
        cfg,
        device,
        inputs: &inputs,
        trainee: &trainee,
        loaders: &loaders,
        claim: &claim,
    };
    session.run_epochs(st, &mut opt)
}

/// Where a prepared run stands.
enum Start {
    /// Epochs are left, from this state.
    Train(RunState),
    /// The saved run had finished (now published): nothing to train.
    Finished(FitReport),
}

/// A fresh state, or the claimed saved one with the model and optimizer
/// restored from it.
fn starting_state(
    inputs: &Inputs,
    claim: &Claim,
    trainee: &Trainee,
    opt: &mut AnyOptimizer,
) -> Result<Start, FitError> {
    let Some(s) = &claim.saved else {
        return Ok(Start::Train(fresh_state(inputs.fingerprint.clone())));
    };
    weights::restore(&trainee.varmap, &s.weights, "the run state's weights")?;
    opt.load_state(&s.optimizer)?;
    let st = s.state.clone();
    let out = &claim.work;
    metrics::rewrite(out, &st.history).map_err(error::io_err(out))?;
    if st.finished {
        claim.run_dir.publish(out)?;
        return Ok(Start::Finished(FitReport::of_state(&st, true)));
    }
    Ok(Start::Train(st))
}

/// The state of a run before its first step.
fn fresh_state(fingerprint: serde_json::Value) -> RunState {
    RunState {
        version: RUN_STATE_VERSION,
        args: fingerprint,
        epoch: 0,
        batch: 0,
        step: 0,
        train_loss_sum: 0.0,
        train_batches: 0,
        train_positions: 0,
        epoch_seconds: 0.0,
        best_valid_loss: None,
        best_epoch: None,
        bad_epochs: 0,
        history: Vec::new(),
        finished: false,
        stopped_early: false,
    }
}
