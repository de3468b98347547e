//! What can stop the study: [`AmazonsExperimentError`], one variant per
//! kind of failure (a player spec, the arena, the database, training, a
//! file, a setting, the output folder), so the CLI can say which stage
//! failed and why.

use crate::arena::ArenaError;
use crate::checkpoint::CheckpointError;
use crate::dataset::DatasetError;
use crate::eval::EvalError;
use crate::positions::PositionsError;
use crate::report::ReportError;
use crate::search::SearchError;
use crate::train::TrainError;
use crate::util::run_dir::{Difference, RunDirError};
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum AmazonsExperimentError {
    #[error("player: {0}")]
    Player(#[from] SearchError),
    #[error(transparent)]
    Arena(#[from] ArenaError),
    #[error("database: {0}")]
    Positions(#[from] PositionsError),
    #[error("dataset: {0}")]
    Dataset(#[from] DatasetError),
    #[error("training: {0}")]
    Train(#[from] TrainError),
    #[error("error of the evaluators: {0}")]
    Eval(#[from] EvalError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error("{path}: {why}")]
    File { path: PathBuf, why: String },
    #[error("invalid setting {field}: {why}")]
    Config { field: &'static str, why: String },
    /// Another writer holds the output folder, or it cannot be claimed.
    #[error(transparent)]
    RunDir(RunDirError),
    /// The folder's database was played with other settings.
    #[error(
        "{}: the database in this folder was played with other settings: `{}` was {}, now {} (rerun with the same, or choose another output folder)",
        path.display(), difference.field, difference.saved_text(), difference.given_text()
    )]
    Settings {
        path: PathBuf,
        difference: Difference,
    },
}

impl From<RunDirError> for AmazonsExperimentError {
    fn from(e: RunDirError) -> Self {
        match e {
            RunDirError::Mismatch { path, difference } => {
                AmazonsExperimentError::Settings { path, difference }
            }
            other => AmazonsExperimentError::RunDir(other),
        }
    }
}

pub(super) type Result<T> = std::result::Result<T, AmazonsExperimentError>;

/// A failure tied to a file or folder of the study's output.
pub(super) fn file_error(path: &Path, why: impl ToString) -> AmazonsExperimentError {
    AmazonsExperimentError::File {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}
