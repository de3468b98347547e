use thiserror::Error;

#[derive(Debug, Error)]
pub enum ModelError {
    #[error("model config: {0}")]
    Config(String),
    /// A config field with a value the model cannot take.
    #[error("{model} config: `{field}` {why}")]
    Field {
        model: String,
        field: String,
        why: String,
    },
    /// The model was built for another input than the encoder gives.
    #[error("{model} config: `{field}` is {model_has} but the encoder gives {encoder_gives}")]
    InputMismatch {
        model: String,
        field: String,
        model_has: String,
        encoder_gives: String,
    },
    /// Sizes whose parameters need more memory than the machine has.
    #[error("{model} config: {error}")]
    Memory {
        model: String,
        error: crate::util::memory::MemoryError,
    },
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
}

impl ModelError {
    pub(crate) fn field(model: &str, field: &str, why: impl Into<String>) -> Self {
        ModelError::Field {
            model: model.into(),
            field: field.into(),
            why: why.into(),
        }
    }
}
