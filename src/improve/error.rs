use std::path::PathBuf;
use thiserror::Error;

/// Why a loop could not go on.
#[derive(Debug, Error)]
pub enum LoopError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {why}")]
    Config { path: PathBuf, why: String },
    #[error(
        "{path} holds a loop of another configuration: `{field}` was {was}, now {now}; \
         resume it with the same configuration or use another directory"
    )]
    Mismatch {
        path: PathBuf,
        field: String,
        was: String,
        now: String,
    },
    /// Another loop writes the directory, or its lock cannot be taken.
    #[error(transparent)]
    Locked(#[from] crate::util::LockError),
    #[error("thread pool: {0}")]
    Pool(String),
    #[error(transparent)]
    Dataset(#[from] crate::dataset::DatasetError),
    #[error(transparent)]
    Search(#[from] crate::search::SearchError),
    #[error(transparent)]
    Train(#[from] crate::train::FitError),
    #[error(transparent)]
    Arena(#[from] crate::arena::ArenaError),
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
    #[error(transparent)]
    Game(#[from] crate::game::GameError),
    #[error(transparent)]
    Device(#[from] crate::util::DeviceError),
    #[error(transparent)]
    Encoder(#[from] crate::encode::EncodeError),
}
