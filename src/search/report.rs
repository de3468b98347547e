//! What a search saw while it chose a move: depth, nodes, the chosen
//! move's score and, for MCTS, its tree. Engines print it (`info` lines);
//! game loops that only want the move ignore it.

use super::alphabeta::WIN_THRESHOLD;

/// A move with what its search saw.
#[derive(Clone, Debug, PartialEq)]
pub struct Searched<M> {
    pub mv: M,
    pub info: SearchInfo,
}

impl<M> Searched<M> {
    /// A move chosen without a search worth reporting.
    pub fn plain(mv: M) -> Searched<M> {
        Searched {
            mv,
            info: SearchInfo::default(),
        }
    }
}

/// The chosen move's score for the side to move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Score {
    /// A hand evaluator's own units (Arimaa's material: millirabbits);
    /// forced results at or beyond [`WIN_THRESHOLD`].
    Hand(i32),
    /// A value on `[-1, 1]` (a model's, or an MCTS mean).
    Value(f64),
}

impl Score {
    /// Whether the score is a forced win or loss found by the search.
    pub fn is_forced(self) -> bool {
        matches!(self, Score::Hand(s) if s.abs() >= WIN_THRESHOLD)
    }
}

/// What an MCTS search did for one move.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TreeInfo {
    /// Visits the root already had from earlier searches (a kept tree).
    pub reused: u32,
    /// Visits of the chosen move.
    pub best_visits: u32,
    /// Its mean value on `[-1, 1]` for the side to move.
    pub best_value: f64,
}

/// What a search saw; `None` where the player has nothing to say.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchInfo {
    /// The deepest finished iteration, in moves (alpha-beta).
    pub depth: Option<u32>,
    /// Nodes visited (alpha-beta), simulations run (MCTS) or positions
    /// valued (greedy).
    pub nodes: Option<u64>,
    /// Of `nodes`, how many the player meant to visit when a budget cut it
    /// short (greedy: the legal moves).
    pub planned: Option<u64>,
    pub score: Option<Score>,
    /// MCTS only.
    pub tree: Option<TreeInfo>,
}

impl SearchInfo {
    /// Whether a search ran (anything beyond a plain choice).
    pub fn searched(&self) -> bool {
        self.nodes.is_some()
    }

    /// Whether a budget cut the search short of what it planned.
    pub fn cut_short(&self) -> Option<(u64, u64)> {
        match (self.nodes, self.planned) {
            (Some(seen), Some(planned)) if seen < planned => Some((seen, planned)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infos_say_what_was_searched_and_cut() {
        assert!(!SearchInfo::default().searched());
        let greedy = SearchInfo {
            nodes: Some(256),
            planned: Some(1000),
            ..SearchInfo::default()
        };
        assert!(greedy.searched());
        assert_eq!(greedy.cut_short(), Some((256, 1000)));
        let whole = SearchInfo {
            nodes: Some(1000),
            ..greedy
        };
        assert_eq!(whole.cut_short(), None);
        assert!(Score::Hand(WIN_THRESHOLD).is_forced());
        assert!(!Score::Hand(1500).is_forced() && !Score::Value(1.0).is_forced());
        assert_eq!(Searched::plain(3).info, SearchInfo::default());
    }
}
