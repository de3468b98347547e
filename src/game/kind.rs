//! The games by name, for the command line.

use super::GameError;
use std::fmt;
use std::str::FromStr;

/// A game the command line can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameKind {
    TicTacToe,
    Arimaa,
    Amazons,
    Pentago,
    Gomoku,
    AtariGo,
}

impl GameKind {
    pub const ALL: [GameKind; 6] = [
        GameKind::TicTacToe,
        GameKind::Arimaa,
        GameKind::Amazons,
        GameKind::Pentago,
        GameKind::Gomoku,
        GameKind::AtariGo,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GameKind::TicTacToe => "tictactoe",
            GameKind::Arimaa => "arimaa",
            GameKind::Amazons => "amazons",
            GameKind::Pentago => "pentago",
            GameKind::Gomoku => "gomoku",
            GameKind::AtariGo => "atari-go",
        }
    }

    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|k| k.name()).collect()
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GameKind {
    type Err = GameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = |t: &str| t.to_ascii_lowercase().replace(['-', '_'], "");
        Self::ALL
            .iter()
            .copied()
            .find(|k| norm(k.name()) == norm(s))
            .ok_or_else(|| GameError::UnknownGame(s.to_string()))
    }
}
