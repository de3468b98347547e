//! Errors of evaluation.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Dataset(Box<crate::dataset::DatasetError>),
    #[error(transparent)]
    Stream(Box<crate::dataset::StreamError>),
    #[error(transparent)]
    Checkpoint(Box<crate::checkpoint::CheckpointError>),
    #[error("running the model failed: {0}")]
    Candle(#[from] candle_core::Error),
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
    /// The checkpoint's encoder is not the one the dataset was encoded with.
    #[error(
        "checkpoint {checkpoint} was trained on encoder '{checkpoint_encoder}' (version \
         {checkpoint_version}), but dataset {dataset} is encoded with '{dataset_encoder}' \
         (version {dataset_version})"
    )]
    EncoderMismatch {
        checkpoint: PathBuf,
        checkpoint_encoder: String,
        checkpoint_version: u32,
        dataset: PathBuf,
        dataset_encoder: String,
        dataset_version: u32,
    },
    /// The checkpoint or baseline is for another game than the dataset.
    #[error("{what} is for game '{expected}', but dataset {dataset} holds '{found}' positions")]
    GameMismatch {
        what: String,
        expected: String,
        dataset: PathBuf,
        found: String,
    },
    /// A row's `position` text does not parse.
    #[error("dataset {dataset}: row of game '{game_id}' at ply {ply}: position text: {why}")]
    BadPosition {
        dataset: PathBuf,
        game_id: String,
        ply: u32,
        why: String,
    },
    /// Move prediction: a row whose move cannot be ranked (not legal in its
    /// position, an unreadable position), or a game without its rules.
    #[error("move prediction: {0}")]
    Children(Box<crate::positions::children::ChildrenError>),
    /// Move prediction on a split none of whose rows has a move played.
    #[error("dataset {dataset}: no row of the {split} split has a move played (column `move_played`), so there is no move to predict")]
    NoMoves { dataset: PathBuf, split: String },
    /// A setting is out of range.
    #[error("invalid {field}: {found}, expected {expected}")]
    InvalidArgument {
        field: &'static str,
        expected: String,
        found: String,
    },
}

// Boxed: these errors are large, and results travel through every batch.
impl From<crate::dataset::DatasetError> for EvalError {
    fn from(e: crate::dataset::DatasetError) -> Self {
        EvalError::Dataset(Box::new(e))
    }
}

impl From<crate::dataset::StreamError> for EvalError {
    fn from(e: crate::dataset::StreamError) -> Self {
        EvalError::Stream(Box::new(e))
    }
}

impl From<crate::checkpoint::CheckpointError> for EvalError {
    fn from(e: crate::checkpoint::CheckpointError) -> Self {
        EvalError::Checkpoint(Box::new(e))
    }
}
