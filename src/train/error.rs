use thiserror::Error;

#[derive(Debug, Error)]
pub enum TrainError {
    #[error("dataset: {0}")]
    Dataset(Box<crate::dataset::DatasetError>),
    #[error("{context}: {why}")]
    BadData { context: String, why: String },
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
    #[error("training: {0}")]
    Config(String),
    #[error("{path}: the checkpoint could not be written: {why}")]
    Checkpoint {
        path: std::path::PathBuf,
        why: String,
    },
    /// A strength measurement during training failed.
    #[error("equity measurement: {0}")]
    Equity(String),
}

impl From<crate::optim::OptimError> for TrainError {
    fn from(e: crate::optim::OptimError) -> Self {
        TrainError::Config(e.to_string())
    }
}

impl From<crate::dataset::DatasetError> for TrainError {
    fn from(e: crate::dataset::DatasetError) -> Self {
        TrainError::Dataset(Box::new(e))
    }
}
