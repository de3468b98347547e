use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum EvolveError {
    #[error(transparent)]
    Search(#[from] crate::search::SearchError),
    #[error(transparent)]
    Arena(#[from] crate::arena::ArenaError),
    #[error(transparent)]
    Infer(#[from] crate::infer::InferError),
    #[error(transparent)]
    Checkpoint(#[from] crate::checkpoint::CheckpointError),
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
    /// Another writer holds the output directory.
    #[error(transparent)]
    RunDir(#[from] crate::util::run_dir::RunDirError),
    #[error(transparent)]
    Encode(#[from] crate::encode::EncodeError),
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
    /// An option out of range, named.
    #[error("--{option}: {why}")]
    Option { option: String, why: String },
    /// The run state in the output directory cannot be read or belongs to
    /// another run.
    #[error("{}: {why}", path.display())]
    State { path: PathBuf, why: String },
}

impl EvolveError {
    pub(crate) fn option(option: &str, why: impl Into<String>) -> Self {
        EvolveError::Option {
            option: option.into(),
            why: why.into(),
        }
    }
}
