//! Which games and positions of a record file go into a dataset.
//!
//! The filters of the Arimaa study: only games that ended in a way that says
//! something about the position (`--terminations`), only games between
//! players rated at least R (`--min-rating`), and only the last K positions
//! of each game (`--last-plies`).

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;

use super::error::PositionsError;
use crate::games::GameSupport;
use crate::record::GameRecord;

/// Left out by default for the other games: endings not decided on the board.
pub const EXCLUDED_BY_DEFAULT: [&str; 7] = [
    "resignation",
    "timeout",
    "forfeit",
    "unfinished",
    "illegal_move",
    "other",
    "resignation_or_time",
];

/// Which terminations count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Terminations {
    /// Every termination.
    All,
    /// Only these.
    Only(BTreeSet<String>),
    /// Every termination except these.
    AllExcept(BTreeSet<String>),
}

impl Terminations {
    /// The default for `G` ([`GameSupport::DEFAULT_TERMINATIONS`]).
    pub fn default_for<G: GameSupport>() -> Terminations {
        let set = |names: &[&str]| names.iter().map(|s| s.to_string()).collect();
        match G::DEFAULT_TERMINATIONS {
            Some(names) => Terminations::Only(set(names)),
            None => Terminations::AllExcept(set(&EXCLUDED_BY_DEFAULT)),
        }
    }

    /// Parses `all` or a comma list (`goal,elimination`), checked against
    /// [`GameSupport::TERMINATIONS`] where the game has a closed list.
    pub fn parse<G: GameSupport>(list: &str) -> Result<Terminations, PositionsError> {
        let list = list.trim();
        if list == "all" {
            return Ok(Terminations::All);
        }
        let mut set = BTreeSet::new();
        for name in list.split(',').map(str::trim) {
            let ok = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            let known = G::TERMINATIONS.is_none_or(|names| names.contains(&name));
            if !ok || !known {
                return Err(PositionsError::InvalidOption {
                    option: "--terminations",
                    expected: match G::TERMINATIONS {
                        Some(names) => format!("`all` or a comma list of {}", names.join(", ")),
                        None => "`all` or a comma list of snake_case termination names".into(),
                    },
                    found: format!("`{name}` in `{list}`"),
                });
            }
            set.insert(name.to_string());
        }
        Ok(Terminations::Only(set))
    }

    /// Whether a game that ended by `termination` counts.
    pub fn allows(&self, termination: &str) -> bool {
        match self {
            Terminations::All => true,
            Terminations::Only(set) => set.contains(termination),
            Terminations::AllExcept(set) => !set.contains(termination),
        }
    }
}

impl fmt::Display for Terminations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(",");
        match self {
            Terminations::All => f.write_str("all"),
            Terminations::Only(s) => f.write_str(&join(s)),
            Terminations::AllExcept(s) => write!(f, "all except {}", join(s)),
        }
    }
}

/// The game and position filters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Filters {
    /// Keep only the K positions nearest the end of each game
    /// (`plies_to_end < K`); `None` keeps all.
    pub last_plies: Option<u32>,
    /// Keep only games whose two players' ratings are both known and >= R.
    pub min_rating: Option<i32>,
    pub terminations: Terminations,
}

impl Filters {
    /// No position filter, no rating filter, the game's default terminations.
    pub fn default_for<G: GameSupport>() -> Filters {
        Filters {
            last_plies: None,
            min_rating: None,
            terminations: Terminations::default_for::<G>(),
        }
    }

    /// Why a game is left out before it is replayed, if it is.
    pub fn drop_reason(&self, rec: &GameRecord) -> Option<DropReason> {
        if !self.terminations.allows(&rec.termination) {
            return Some(DropReason::Termination);
        }
        if let Some(r) = self.min_rating {
            let ok = |x: &Option<i32>| x.is_some_and(|x| x >= r);
            if !(ok(&rec.ratings.first) && ok(&rec.ratings.second)) {
                return Some(DropReason::Rating);
            }
        }
        None
    }

    /// Index in a game of `plies` moves of the first kept position.
    pub fn first_kept_ply(&self, plies: u32) -> u32 {
        match self.last_plies {
            // Positions 0..=plies; keep those with plies - i < k.
            Some(k) => (plies + 1).saturating_sub(k),
            None => 0,
        }
    }
}

/// Why a whole game was left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Its termination is not among those that count.
    Termination,
    /// A rating is unknown or below the minimum.
    Rating,
    /// No winner and not a draw (e.g. unfinished).
    NoResult,
}

/// Games and positions left out, per reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Dropped {
    pub games: u64,
    /// Positions of those games (`plies + 1` each), or for `last_plies` the
    /// positions cut from kept games.
    pub positions: u64,
}

impl Dropped {
    pub fn add(&mut self, positions: u64) {
        self.games += 1;
        self.positions += positions;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Arimaa, Gomoku, Side};
    use crate::record::PerSide;

    fn rec(termination: &str, ratings: (Option<i32>, Option<i32>)) -> GameRecord {
        GameRecord {
            game: "arimaa".into(),
            id: "1".into(),
            source: "t".into(),
            event: String::new(),
            players: PerSide::new("a".into(), "b".into()),
            ratings: PerSide::new(ratings.0, ratings.1),
            player_types: None,
            setups: vec![],
            moves: vec![],
            result: Some(Side::First),
            termination: termination.into(),
            plies: 0,
            rated: None,
            start_time: None,
            board_size: None,
            explored: Vec::new(),
        }
    }

    #[test]
    fn defaults_per_game() {
        let a = Filters::default_for::<Arimaa>();
        assert_eq!(a.drop_reason(&rec("goal", (None, None))), None);
        assert_eq!(
            a.drop_reason(&rec("resignation", (None, None))),
            Some(DropReason::Termination)
        );
        let g = Filters::default_for::<Gomoku>();
        assert_eq!(g.drop_reason(&rec("five", (None, None))), None);
        for t in EXCLUDED_BY_DEFAULT {
            assert!(g.drop_reason(&rec(t, (None, None))).is_some(), "{t}");
        }
    }

    #[test]
    fn rating_needs_both_known_and_high_enough() {
        let f = Filters {
            min_rating: Some(1800),
            ..Filters::default_for::<Arimaa>()
        };
        assert_eq!(f.drop_reason(&rec("goal", (Some(1800), Some(2000)))), None);
        for r in [(Some(1799), Some(2000)), (None, Some(2000)), (None, None)] {
            assert_eq!(f.drop_reason(&rec("goal", r)), Some(DropReason::Rating));
        }
    }

    #[test]
    fn termination_lists_parse_and_typos_are_named() {
        let t = Terminations::parse::<Arimaa>("goal, resignation").unwrap();
        assert!(t.allows("goal") && t.allows("resignation") && !t.allows("timeout"));
        assert_eq!(
            Terminations::parse::<Arimaa>("all").unwrap(),
            Terminations::All
        );
        let msg = Terminations::parse::<Arimaa>("goal,gaol")
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("gaol") && msg.contains("immobilization"),
            "{msg}"
        );
        assert!(Terminations::parse::<Gomoku>("five").is_ok());
        assert!(Terminations::parse::<Gomoku>("").is_err());
    }

    #[test]
    fn last_plies_keeps_the_positions_nearest_the_end() {
        let f = Filters {
            last_plies: Some(3),
            ..Filters::default_for::<Gomoku>()
        };
        // 10 moves: positions 0..=10, keep 8, 9, 10.
        assert_eq!(f.first_kept_ply(10), 8);
        assert_eq!(f.first_kept_ply(1), 0);
        assert_eq!(Filters::default_for::<Gomoku>().first_kept_ply(10), 0);
    }
}
