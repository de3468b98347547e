use thiserror::Error;

#[derive(Debug, Error)]
pub enum InferError {
    #[error("evaluator: {0}")]
    Candle(#[from] candle_core::Error),
    #[error("evaluator: {0}")]
    Model(#[from] crate::model::ModelError),
    #[error("evaluator: {0}")]
    Other(String),
}
