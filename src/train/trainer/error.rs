//! [`FitError`], the errors of the training engine, and how the errors of
//! the layers below (datasets, checkpoints, the run folder) become one.

use std::path::PathBuf;

use crate::checkpoint::CheckpointError;
use crate::dataset::{DatasetError, StreamError};
use crate::model::ModelError;
use crate::positions::children::ChildrenError;
use crate::train::run_state::RunStateError;
use crate::util::memory::human_bytes;
use crate::util::run_dir::RunDirError;
use crate::util::{AtomicWriteError, LockError};

/// Errors of the training engine; each names the file or field at fault.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A model config that does not fit the dataset, or is malformed.
    #[error("model {source_name}: {why}")]
    Model { source_name: String, why: String },
    /// `--resume` with arguments that differ from the saved run's.
    #[error(
        "--resume: `{field}` differs from the interrupted run's (it had {saved}, now {given}); \
         rerun with the same arguments, or start over with --overwrite"
    )]
    ResumeMismatch {
        field: String,
        saved: String,
        given: String,
    },
    /// An argument out of range.
    #[error("invalid `{field}`: {why}")]
    Invalid { field: &'static str, why: String },
    #[error(
        "{dir} already holds a training run (run-state/ or metrics); pass --resume to continue \
         it or --overwrite to start over"
    )]
    Exists { dir: PathBuf },
    #[error("the loss is not finite at step {step} (epoch {epoch}); lower the learning rate or clip gradients (--clip)")]
    NotFinite { step: u64, epoch: u64 },
    #[error(transparent)]
    Dataset(Box<DatasetError>),
    #[error(transparent)]
    Stream(Box<StreamError>),
    #[error(transparent)]
    Checkpoint(Box<CheckpointError>),
    #[error(transparent)]
    RunState(Box<RunStateError>),
    #[error(transparent)]
    ModelBuild(Box<ModelError>),
    #[error(transparent)]
    Candle(Box<candle_core::Error>),
    /// Comparison training: a row whose move cannot be ranked (not legal in
    /// its position, an unreadable position), or a game without the rules.
    #[error("comparison training: {0}")]
    Children(Box<ChildrenError>),
    /// Comparison training on a dataset that has no `move_played` column.
    #[error("{data}: the dataset has no `move_played` column, which comparison training ranks; rebuild it with `plies dataset build` (it records the move played from every position)")]
    NoMoveColumn { data: PathBuf },
    /// Comparison training on a split none of whose rows has a move played.
    #[error("{data}: no row of the {split} split has a move played (column `move_played` is empty), so there is nothing to compare; build the dataset from game records")]
    NoMoves { data: PathBuf, split: &'static str },
    /// Comparison training whose batches would not fit the memory limit.
    #[error(
        "comparison training would need about {} at its peak ({} of expanded children, {} for \
         one pass), more than the memory limit of {limit}; {advice}",
        human_bytes(*needs), human_bytes(*children), human_bytes(*pass)
    )]
    ComparisonMemory {
        needs: u64,
        children: u64,
        pass: u64,
        limit: crate::util::memory::MemoryLimit,
        advice: String,
    },
    /// Another writer holds the run directory.
    #[error(transparent)]
    Locked(#[from] LockError),
}

impl From<AtomicWriteError> for FitError {
    fn from(e: AtomicWriteError) -> Self {
        FitError::Io {
            path: e.path,
            source: e.source,
        }
    }
}

macro_rules! boxed_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for FitError {
            fn from(e: $t) -> Self {
                FitError::$v(Box::new(e))
            }
        }
    )*};
}
boxed_from!(DatasetError => Dataset, StreamError => Stream, CheckpointError => Checkpoint,
    RunStateError => RunState, ModelError => ModelBuild, candle_core::Error => Candle);

impl From<RunDirError> for FitError {
    fn from(e: RunDirError) -> Self {
        match e {
            RunDirError::Locked(e) => FitError::Locked(e),
            RunDirError::Io { path, source } => FitError::Io { path, source },
            RunDirError::Write(e) => e.into(),
            RunDirError::Mismatch { difference, .. } => FitError::ResumeMismatch {
                saved: difference.saved_text(),
                given: difference.given_text(),
                field: difference.field,
            },
            RunDirError::Unreadable { path, why } => FitError::Io {
                path,
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, why),
            },
        }
    }
}

/// A closure for `map_err` that names `path`.
pub(super) fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> FitError + '_ {
    move |source| FitError::Io {
        path: path.to_path_buf(),
        source,
    }
}
