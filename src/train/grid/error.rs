//! [`GridError`], the errors of the grid search; each names the flag or
//! file at fault.

use std::path::{Path, PathBuf};

use crate::eval::EvalError;
use crate::train::trainer::FitError;
use crate::util::run_dir::RunDirError;
use crate::util::{AtomicWriteError, LockError};

/// Errors of the grid search; each names the flag or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum GridError {
    #[error("invalid --{flag} value {value:?}: {why}")]
    Axis {
        flag: &'static str,
        value: String,
        why: String,
    },
    #[error("invalid --{flag}: {why}")]
    Invalid { flag: &'static str, why: String },
    #[error(
        "{dir} holds a grid started with other arguments (`{field}` was {saved}, now {given}); \
         rerun with the same arguments or use another --out"
    )]
    ArgsMismatch {
        dir: PathBuf,
        field: String,
        saved: String,
        given: String,
    },
    #[error("{path}: {why}")]
    File { path: PathBuf, why: String },
    #[error("configuration {id}, fold {fold}: {source}")]
    Run {
        id: String,
        fold: u8,
        source: Box<FitError>,
    },
    #[error("configuration {id}, fold {fold}: evaluating the held-out fold: {source}")]
    Eval {
        id: String,
        fold: u8,
        source: Box<EvalError>,
    },
    #[error(transparent)]
    Dataset(Box<crate::dataset::DatasetError>),
    #[error(transparent)]
    Write(#[from] AtomicWriteError),
    /// Another writer holds the grid's folder.
    #[error(transparent)]
    Locked(#[from] LockError),
}

impl From<crate::dataset::DatasetError> for GridError {
    fn from(e: crate::dataset::DatasetError) -> Self {
        GridError::Dataset(Box::new(e))
    }
}

impl From<RunDirError> for GridError {
    fn from(e: RunDirError) -> Self {
        match e {
            RunDirError::Mismatch { path, difference } => GridError::ArgsMismatch {
                dir: path.parent().map_or_else(PathBuf::new, Path::to_path_buf),
                saved: difference.saved_text(),
                given: difference.given_text(),
                field: difference.field,
            },
            RunDirError::Io { path, source } => file_err(&path, source),
            RunDirError::Unreadable { path, why } => GridError::File { path, why },
            RunDirError::Write(e) => GridError::Write(e),
            RunDirError::Locked(e) => GridError::Locked(e),
        }
    }
}

pub(super) fn file_err(path: &Path, why: impl ToString) -> GridError {
    GridError::File {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}
