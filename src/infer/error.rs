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
    /// A GPU call that failed, named with the step it was for.
    #[error("device: {0}")]
    Device(String),
    #[error("evaluator: {0}")]
    Other(String),
}
