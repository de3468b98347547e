//! The run state of `plies train`: everything needed to continue a run
//! exactly where it stopped, in `CKPT/run-state/`:
//!
//! - `weights.safetensors`: every model variable (batch-norm running
//!   statistics included) in its own dtype;
//! - `optimizer.safetensors`: the optimizer's state
//!   ([`crate::optim::AnyOptimizer::state`]);
//! - `state.json`: [`RunState`] (the run's arguments, where to continue,
//!   the best-so-far figures and the metrics rows so far).
//!
//! It is written to `run-state.tmp/` and renamed into place (the previous
//! state moves to `run-state.old/` for the instant in between), so a kill at
//! any moment leaves one complete state to continue from.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor};
use serde::{Deserialize, Serialize};

use super::metrics::EpochMetrics;
use crate::util::atomic::{replace_dir, write_atomic_with, AtomicWriteError};

pub const RUN_STATE_DIR: &str = "run-state";
const TMP_DIR: &str = "run-state.tmp";
const OLD_DIR: &str = "run-state.old";
const STATE_FILE: &str = "state.json";
const WEIGHTS_FILE: &str = "weights.safetensors";
const OPTIMIZER_FILE: &str = "optimizer.safetensors";
pub const RUN_STATE_VERSION: u32 = 1;

/// Where a run stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub version: u32,
    /// The arguments that determine the run (see `FitConfig::fingerprint`).
    pub args: serde_json::Value,
    /// The epoch to continue (from 0).
    pub epoch: u64,
    /// The batch of that epoch to continue from.
    pub batch: u64,
    /// Optimizer steps taken.
    pub step: u64,
    /// Sums over the current epoch's batches so far.
    pub train_loss_sum: f64,
    pub train_batches: u64,
    pub train_positions: u64,
    /// Training seconds of the current epoch before the state was saved.
    pub epoch_seconds: f64,
    pub best_valid_loss: Option<f64>,
    pub best_epoch: Option<usize>,
    /// Epochs since the best one.
    pub bad_epochs: usize,
    /// Rows of the metrics files.
    pub history: Vec<EpochMetrics>,
    /// The run ended (all epochs, or early stopping).
    pub finished: bool,
    pub stopped_early: bool,
}

/// A run state with its tensors.
pub struct SavedRun {
    pub state: RunState,
    pub weights: HashMap<String, Tensor>,
    pub optimizer: HashMap<String, Tensor>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RunStateError + '_ {
    move |source| RunStateError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Errors reading or writing a run state.
#[derive(Debug, thiserror::Error)]
pub enum RunStateError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {why}")]
    Bad { path: PathBuf, why: String },
}

/// A failed directory swap is an I/O error about the run-state directory.
impl From<AtomicWriteError> for RunStateError {
    fn from(e: AtomicWriteError) -> Self {
        RunStateError::Io {
            path: e.path,
            source: e.source,
        }
    }
}

/// Writes the run state into `out/run-state/` atomically.
pub fn save(
    out: &Path,
    state: &RunState,
    weights: &HashMap<String, Tensor>,
    optimizer: &HashMap<String, Tensor>,
) -> Result<(), RunStateError> {
    let tmp = out.join(TMP_DIR);
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
    }
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    save_tensors(&tmp.join(WEIGHTS_FILE), weights)?;
    let o = tmp.join(OPTIMIZER_FILE);
    if optimizer.is_empty() {
        std::fs::write(&o, b"").map_err(io(&o))?;
    } else {
        save_tensors(&o, optimizer)?;
    }
    let s = tmp.join(STATE_FILE);
    let json = serde_json::to_string_pretty(state).map_err(|e| RunStateError::Bad {
        path: s.clone(),
        why: e.to_string(),
    })?;
    std::fs::write(&s, json + "\n").map_err(io(&s))?;
    replace_dir(&tmp, &out.join(RUN_STATE_DIR), &out.join(OLD_DIR))?;
    Ok(())
}

/// Writes `tensors` to `path` with the mode a new file gets under the
/// umask (safetensors alone stages through a private 0600 file).
fn save_tensors(path: &Path, tensors: &HashMap<String, Tensor>) -> Result<(), RunStateError> {
    write_atomic_with(path, |tmp| {
        candle_core::safetensors::save(tensors, tmp).map_err(|e| RunStateError::Bad {
            path: path.to_path_buf(),
            why: e.to_string(),
        })
    })
}

/// The directory holding the latest complete run state, if any
/// (`run-state/`, or `run-state.old/` after a kill between the renames).
pub fn find(out: &Path) -> Option<PathBuf> {
    [RUN_STATE_DIR, OLD_DIR]
        .iter()
        .map(|d| out.join(d))
        .find(|d| d.join(STATE_FILE).is_file())
}

/// Whether `out` holds a finished run (its latest run state says so).
pub fn finished(out: &Path) -> bool {
    find(out)
        .and_then(|d| std::fs::read_to_string(d.join(STATE_FILE)).ok())
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v["finished"].as_bool() == Some(true))
}

/// Removes every run-state directory of `out`.
pub fn remove(out: &Path) -> Result<(), RunStateError> {
    for d in [RUN_STATE_DIR, TMP_DIR, OLD_DIR] {
        let p = out.join(d);
        if p.exists() {
            std::fs::remove_dir_all(&p).map_err(io(&p))?;
        }
    }
    Ok(())
}

/// Reads the run state in `dir` (from [`find`]), tensors on the CPU.
pub fn load(dir: &Path) -> Result<SavedRun, RunStateError> {
    let s = dir.join(STATE_FILE);
    let text = std::fs::read_to_string(&s).map_err(io(&s))?;
    let state: RunState = serde_json::from_str(&text).map_err(|e| RunStateError::Bad {
        path: s.clone(),
        why: e.to_string(),
    })?;
    if state.version != RUN_STATE_VERSION {
        return Err(RunStateError::Bad {
            path: s,
            why: format!(
                "run-state version {}, expected {RUN_STATE_VERSION}",
                state.version
            ),
        });
    }
    let read = |name: &str| -> Result<HashMap<String, Tensor>, RunStateError> {
        let p = dir.join(name);
        let len = std::fs::metadata(&p).map_err(io(&p))?.len();
        if len == 0 {
            return Ok(HashMap::new());
        }
        candle_core::safetensors::load(&p, &Device::Cpu).map_err(|e| RunStateError::Bad {
            path: p.clone(),
            why: e.to_string(),
        })
    };
    Ok(SavedRun {
        weights: read(WEIGHTS_FILE)?,
        optimizer: read(OPTIMIZER_FILE)?,
        state,
    })
}
