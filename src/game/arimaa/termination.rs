//! How an Arimaa game ended: the arimaa.com termination codes.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// A rabbit reached its goal rank (`g`).
    Goal,
    /// A side lost all its rabbits (`e`).
    Elimination,
    /// The side to move had no legal step (`m`).
    Immobilization,
    /// Every move left would repeat a position a third time (`p`).
    Repetition,
    /// Resigned (`r`).
    Resignation,
    /// Ran out of time (`t`).
    Timeout,
    /// An illegal move was attempted (`i`).
    IllegalMove,
    /// Forfeit (`f`).
    Forfeit,
    /// Ended by an arbiter or by agreement, or an unknown code.
    Other,
}

impl Termination {
    /// Terminations decided on the board, which the rules engine must reproduce.
    pub fn is_on_board(self) -> bool {
        matches!(
            self,
            Termination::Goal
                | Termination::Elimination
                | Termination::Immobilization
                | Termination::Repetition
        )
    }

    pub fn code(self) -> char {
        match self {
            Termination::Goal => 'g',
            Termination::Elimination => 'e',
            Termination::Immobilization => 'm',
            Termination::Repetition => 'p',
            Termination::Resignation => 'r',
            Termination::Timeout => 't',
            Termination::IllegalMove => 'i',
            Termination::Forfeit => 'f',
            Termination::Other => 'o',
        }
    }

    pub fn from_code(code: &str) -> Termination {
        match code {
            "g" => Termination::Goal,
            "e" => Termination::Elimination,
            "m" => Termination::Immobilization,
            "p" => Termination::Repetition,
            "r" => Termination::Resignation,
            "t" => Termination::Timeout,
            "i" => Termination::IllegalMove,
            "f" => Termination::Forfeit,
            _ => Termination::Other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Termination::Goal => "goal",
            Termination::Elimination => "elimination",
            Termination::Immobilization => "immobilization",
            Termination::Repetition => "repetition",
            Termination::Resignation => "resignation",
            Termination::Timeout => "timeout",
            Termination::IllegalMove => "illegal_move",
            Termination::Forfeit => "forfeit",
            Termination::Other => "other",
        }
    }
}
