//! Errors of the game list and the games' support.

use crate::game::GameError;

#[derive(Debug, thiserror::Error)]
pub enum SupportError {
    #[error("unknown game '{name}' (known: {known})")]
    UnknownGame { name: String, known: String },
    #[error("--setups {given}: setups are for Arimaa only, not {game}")]
    NoSetups { game: &'static str, given: String },
    #[error("--setups {given}: {why}")]
    Setups { given: String, why: String },
    #[error("{game} has no record format '{format}' (known: {known})")]
    UnknownFormat {
        game: &'static str,
        format: String,
        known: String,
    },
    #[error(transparent)]
    Records(#[from] crate::record::RecordError),
    #[error("game {id}: {why}")]
    Record { id: String, why: String },
    #[error("{command} supports --game {only} only, not {given}")]
    OneGameOnly {
        command: String,
        only: &'static str,
        given: &'static str,
    },
    #[error(transparent)]
    Game(#[from] GameError),
}
