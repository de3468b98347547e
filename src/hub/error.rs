//! Hub errors: each names the repository, the revision and the file.

use crate::util::safe_name::{shown, UnsafeName};
use std::fmt;
use std::path::PathBuf;
use thiserror::Error;

/// Which file of which repository at which revision an error is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct At {
    /// `ORG/NAME@REVISION` (see [`super::RepoRef`]'s display).
    pub repo: String,
    /// The file, or empty for the repository as a whole.
    pub file: String,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.file.is_empty() {
            write!(f, "{}", self.repo)
        } else {
            write!(f, "{} file '{}'", self.repo, shown(&self.file))
        }
    }
}

/// A downloaded file whose bytes do not hash to its ETag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// `sha256` (LFS files) or `git blob id` (other files).
    pub algorithm: &'static str,
    pub expected: String,
    pub found: String,
    /// The size, and the text when it is short text (an error body).
    pub received: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "have {} {}, the hub says {} (received {})",
            self.algorithm, self.found, self.expected, self.received
        )
    }
}

#[derive(Debug, Error)]
pub enum HubError {
    #[error("'{spec}' is not a hub repository: expected ORG/NAME[@REVISION] ({why})")]
    BadRef { spec: String, why: String },
    #[error("{at}: no such repository on {endpoint}")]
    RepoNotFound { at: At, endpoint: String },
    #[error("{at}: the repository has no such revision on {endpoint}")]
    RevisionNotFound { at: At, endpoint: String },
    #[error("{at}: no such file in the repository on {endpoint}")]
    FileNotFound { at: At, endpoint: String },
    #[error(
        "{at}: {endpoint} refused the request ({status}{message}); set HF_TOKEN to a token \
         with access to the repository"
    )]
    Refused {
        at: At,
        endpoint: String,
        status: u16,
        message: String,
    },
    #[error("{at}: not in the cache {cache} and {endpoint} cannot be reached ({why})")]
    Unreachable {
        at: At,
        endpoint: String,
        cache: PathBuf,
        why: String,
    },
    #[error("{at}: the bytes from {endpoint} {mismatch}; the file was removed from the cache")]
    Corrupt {
        at: At,
        endpoint: String,
        mismatch: Box<Mismatch>,
    },
    #[error("{at}: the transfer with {endpoint} failed: {why}")]
    Transfer {
        at: At,
        endpoint: String,
        why: String,
    },
    #[error("{at}: {why}")]
    Rejected { at: At, why: String },
    /// A name from the hub (a listed file, an ETag, a commit id) or in a
    /// folder to upload that cannot safely become a path; nothing was
    /// written (downloads) or sent (uploads).
    #[error("{at}: refused: the {name}; {}", .action)]
    Unsafe {
        at: At,
        name: Box<UnsafeName>,
        /// `nothing was downloaded` / `nothing was uploaded`.
        action: &'static str,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{repo}: this plies was built without the `hub` feature (cargo build --features hub)")]
    NotBuilt { repo: String },
}

impl From<crate::util::AtomicWriteError> for HubError {
    fn from(e: crate::util::AtomicWriteError) -> Self {
        HubError::Io {
            path: e.path,
            source: e.source,
        }
    }
}
