use thiserror::Error;

#[derive(Debug, Error)]
pub enum EncodeError {
    #[error("unknown encoder '{name}' for {game} (known: {})", known.join(", "))]
    Unknown {
        game: String,
        name: String,
        known: Vec<&'static str>,
    },
}
