use thiserror::Error;

#[derive(Debug, Error)]
pub enum InferError {
    #[error("evaluator: {0}")]
    Candle(#[from] candle_core::Error),
    #[error("evaluator: {0}")]
    Model(#[from] crate::model::ModelError),
    /// A network that cannot be compiled into, or run by, an inference plan.
    #[error("inference plan: {0}")]
    Plan(String),
    #[error("evaluator: {0}")]
    Other(String),
}
