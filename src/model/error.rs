use thiserror::Error;

#[derive(Debug, Error)]
pub enum ModelError {
    #[error("model config: {0}")]
    Config(String),
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
}
