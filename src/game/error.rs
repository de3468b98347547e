use thiserror::Error;

/// Errors from parsing moves and positions.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GameError {
    #[error("bad move '{token}': {why}")]
    BadMove { token: String, why: String },
    #[error("bad position '{text}': {why}")]
    BadPosition { text: String, why: String },
    #[error("{game} cannot be played on a {size}x{size} board (sizes: {allowed})")]
    BadSize {
        game: &'static str,
        size: usize,
        allowed: String,
    },
}
