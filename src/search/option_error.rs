//! Why a player's `key=value` option was refused: the one error of the
//! option parsers (MCTS, OpenSpiel's bot), naming the key and the value.

use thiserror::Error;

#[derive(Clone, Debug, PartialEq, Error)]
pub enum OptionError {
    /// A value of the wrong kind or out of range.
    #[error("{key}={value}: expected {expected}")]
    BadValue {
        key: String,
        value: String,
        expected: String,
    },
    #[error("unknown option '{key}' for {player}: expected {known}")]
    Unknown {
        key: String,
        player: &'static str,
        known: String,
    },
    #[error("option '{0}' is not key=value")]
    NotKeyValue(String),
    /// Options that need another one, or do not go together.
    #[error("{0}")]
    Inconsistent(&'static str),
}

impl OptionError {
    /// `key=value: expected ...`.
    pub fn bad(key: &str, value: &str, expected: impl Into<String>) -> OptionError {
        OptionError::BadValue {
            key: key.to_string(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}
