//! Which policy target a dataset built from game records gives a position.
//!
//! A record keeps the moves, not the search behind them, so the one target it
//! can give is the move played: all the probability on it. That is the
//! target of supervised policy learning from real games, and for alpha-beta
//! self-play it is exactly the search's best move. Moves a self-play run drew
//! at random for exploration ([`GameRecord::explored`]) are no one's choice
//! and get no target; neither does the final position.
//!
//! [`GameRecord::explored`]: crate::record::GameRecord::explored

use super::PositionsError;
use crate::game::Game;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The policy target of each position of a dataset built from records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyTargets {
    /// No policy column (format 3 datasets without policies).
    #[default]
    None,
    /// The move played, with probability 1, where the player chose it.
    Played,
}

impl PolicyTargets {
    /// The names `--policy-targets` takes.
    pub const NAMES: &'static [&'static str] = &["none", "played"];
}

impl PolicyTargets {
    /// Refuses targets game `G` cannot give: `played` needs moves with a
    /// policy index ([`Game::policy_index`]; Arimaa's whole turns have none).
    pub fn check<G: Game>(self) -> Result<(), PositionsError> {
        if self == PolicyTargets::Played && !has_policy_index::<G>() {
            return Err(PositionsError::InvalidOption {
                option: "--policy-targets",
                expected: format!(
                    "none for {}: its moves have no policy index for a policy head",
                    G::NAME
                ),
                found: self.to_string(),
            });
        }
        Ok(())
    }
}

/// Whether the moves of the start position have policy indices (every game
/// gives them for all its moves or for none).
fn has_policy_index<G: Game>() -> bool {
    let start = G::new();
    let mut moves = Vec::new();
    start.legal_moves(&mut moves);
    moves
        .first()
        .is_some_and(|&m| start.policy_index(m).is_some())
}

impl FromStr for PolicyTargets {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(PolicyTargets::None),
            "played" => Ok(PolicyTargets::Played),
            other => Err(format!(
                "unknown policy targets '{other}': expected one of {}",
                PolicyTargets::NAMES.join(", ")
            )),
        }
    }
}

impl fmt::Display for PolicyTargets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PolicyTargets::None => "none",
            PolicyTargets::Played => "played",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_print_back() {
        for name in PolicyTargets::NAMES {
            assert_eq!(name.parse::<PolicyTargets>().unwrap().to_string(), *name);
        }
        let err = "visits".parse::<PolicyTargets>().unwrap_err();
        assert!(
            err.contains("'visits'") && err.contains("none, played"),
            "{err}"
        );
    }

    #[test]
    fn played_targets_need_a_policy_index() {
        use crate::game::{Arimaa, ConnectFour, TicTacToe};
        assert!(PolicyTargets::Played.check::<TicTacToe>().is_ok());
        assert!(PolicyTargets::Played.check::<ConnectFour>().is_ok());
        assert!(PolicyTargets::None.check::<Arimaa>().is_ok());
        let err = PolicyTargets::Played
            .check::<Arimaa>()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--policy-targets") && err.contains("arimaa") && err.contains("played"),
            "{err}"
        );
    }
}
