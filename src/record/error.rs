use std::path::{Path, PathBuf};
use thiserror::Error;

/// Errors from reading and replaying game records.
#[derive(Debug, Error)]
pub enum RecordError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: not a valid record: {why}")]
    Parse {
        path: PathBuf,
        line: usize,
        why: String,
    },
    #[error("{path}:{line}: ply {ply}: move '{token}' refused: {why}")]
    BadMove {
        path: PathBuf,
        line: usize,
        ply: usize,
        token: String,
        why: String,
    },
    #[error(
        "{path}:{line}: ply {ply}: {field} differs: record has {expected}, engine has {actual}"
    )]
    Mismatch {
        path: PathBuf,
        line: usize,
        ply: usize,
        field: &'static str,
        expected: String,
        actual: String,
    },
}

impl RecordError {
    /// Shorthand for [`RecordError::Io`] about `path`.
    pub(crate) fn io(path: &Path) -> impl Fn(std::io::Error) -> RecordError + Copy + '_ {
        move |source| RecordError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A failed atomic write is an I/O error about its target.
impl From<crate::util::AtomicWriteError> for RecordError {
    fn from(e: crate::util::AtomicWriteError) -> Self {
        RecordError::Io {
            path: e.path,
            source: e.source,
        }
    }
}
