//! A failure while replaying one game's move list: the reason, where, and
//! what exactly; the row it came from names the game.

use crate::game::{GameError, Outcome, Side};

/// A failure while replaying one game's move list.
#[derive(Debug)]
pub(super) struct Fail {
    pub(super) reason: &'static str,
    pub(super) turn: Option<String>,
    pub(super) token: Option<String>,
    pub(super) detail: String,
}

impl Fail {
    pub(super) fn new(
        reason: &'static str,
        turn: Option<&str>,
        token: Option<&str>,
        detail: String,
    ) -> Fail {
        Fail {
            reason,
            turn: turn.map(str::to_string),
            token: token.map(str::to_string),
            detail,
        }
    }

    pub(super) fn from_game_error(reason: &'static str, turn: &str, e: GameError) -> Fail {
        match e {
            GameError::BadMove { token, why } => Fail::new(reason, Some(turn), Some(&token), why),
            other => Fail::new(reason, Some(turn), None, other.to_string()),
        }
    }
}

/// A result in words, for the messages.
pub(super) fn outcome_words(o: Option<Outcome>) -> &'static str {
    match o {
        Some(Outcome::Win(Side::First)) => "gold wins",
        Some(Outcome::Win(Side::Second)) => "silver wins",
        Some(Outcome::Draw) => "draw",
        None => "no winner",
    }
}
