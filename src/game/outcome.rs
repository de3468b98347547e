//! Sides and results.

use serde::{Deserialize, Serialize};

/// A player: `First` moves first (White / x / Black in Go-like games).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    First,
    Second,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }

    /// 0 for the first player, 1 for the second.
    pub fn index(self) -> usize {
        match self {
            Side::First => 0,
            Side::Second => 1,
        }
    }

    /// The side to move after `plies` plies of a game where the sides
    /// alternate.
    pub fn after_plies(plies: u32) -> Side {
        if plies.is_multiple_of(2) {
            Side::First
        } else {
            Side::Second
        }
    }

    pub fn from_index(i: usize) -> Option<Side> {
        match i {
            0 => Some(Side::First),
            1 => Some(Side::Second),
            _ => None,
        }
    }

    /// +1 for the first player, -1 for the second: turns a first-player
    /// value into this side's value.
    pub fn sign(self) -> f32 {
        match self {
            Side::First => 1.0,
            Side::Second => -1.0,
        }
    }
}

/// How a finished game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Win(Side),
    Draw,
}

impl Outcome {
    /// 1 win, 0.5 draw, 0 loss for `side` (the dataset label convention).
    pub fn score_for(self, side: Side) -> f32 {
        match self {
            Outcome::Win(w) if w == side => 1.0,
            Outcome::Win(_) => 0.0,
            Outcome::Draw => 0.5,
        }
    }

    /// +1 win, 0 draw, -1 loss for `side` (the TD target convention).
    pub fn value_for(self, side: Side) -> f32 {
        2.0 * self.score_for(side) - 1.0
    }

    /// OpenSpiel-style returns `[first, second]`.
    pub fn returns(self) -> [f32; 2] {
        [self.value_for(Side::First), self.value_for(Side::Second)]
    }
}
