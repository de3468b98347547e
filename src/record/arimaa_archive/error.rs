//! Why an archive header or an Arimaa record is not usable.

use super::REQUIRED_COLUMNS;
use crate::game::arimaa::{SetupError, Termination};
use crate::game::{GameError, Outcome, Side};

/// Why an archive header or an Arimaa record is not usable.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error(
        "the header has no column {} (an arimaa.com archive header names {})",
        quoted(.missing),
        REQUIRED_COLUMNS.join(", ")
    )]
    MissingColumns { missing: Vec<&'static str> },
    #[error("a setup is missing")]
    SetupMissing,
    #[error(transparent)]
    Setups(#[from] SetupError),
    #[error("replaying '{mv}' after a takeback: {error}")]
    Takeback { mv: String, error: GameError },
    #[error("game {id}: not an Arimaa record but '{game}'")]
    NotArimaa { id: String, game: String },
    #[error("game {id}: expected 2 setups, found {found}")]
    SetupCount { id: String, found: usize },
    #[error("game {id}: {side} setup: {error}")]
    BadSetup {
        id: String,
        side: &'static str,
        error: GameError,
    },
    #[error("game {id}: {error}")]
    Start { id: String, error: SetupError },
    #[error("game {id}: move {label}: {error}")]
    BadMove {
        id: String,
        label: String,
        error: GameError,
    },
    #[error("game {id}: unknown termination '{termination}'")]
    UnknownTermination { id: String, termination: String },
    /// The engine's result after the last move contradicts the record: a
    /// different one for a termination decided on the board (`on_board`),
    /// any at all for another termination.
    #[error("game {id}: the record says {}", differs(*.result, .termination, *.on_board, .engine))]
    ResultDiffers {
        id: String,
        result: Option<Side>,
        termination: String,
        on_board: bool,
        engine: Option<(Outcome, Termination)>,
    },
}

/// `'a', 'b'`.
fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|m| format!("'{m}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn differs(
    result: Option<Side>,
    termination: &str,
    on_board: bool,
    engine: &Option<(Outcome, Termination)>,
) -> String {
    if on_board {
        format!("{result:?} by {termination}, the engine {engine:?}")
    } else {
        format!("{termination}, the board shows {engine:?}")
    }
}
