//! What one move's search may spend: time, nodes (simulations for MCTS)
//! and depth. Engines turn their clocks into a budget and matches give
//! none; every player stops at the first limit reached, its budget's or
//! its own spec's (`mcts:sims=`, `alphabeta:depth=`).

use std::time::{Duration, Instant};

/// Limits on one move's search; `None` leaves that limit to the player.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// Wall-clock time for the move.
    pub time: Option<Duration>,
    /// Nodes visited (alpha-beta) or simulations run (MCTS).
    pub nodes: Option<u64>,
    /// Depth in moves (alpha-beta).
    pub depth: Option<u32>,
}

impl Budget {
    /// No limit beyond the player's own.
    pub const UNLIMITED: Budget = Budget {
        time: None,
        nodes: None,
        depth: None,
    };

    /// Only a time limit.
    pub fn time(time: Duration) -> Budget {
        Budget {
            time: Some(time),
            ..Budget::UNLIMITED
        }
    }

    /// The instant the time runs out, for a search started at `start`.
    pub fn deadline(&self, start: Instant) -> Option<Instant> {
        self.time.map(|t| start + t)
    }
}

/// The tighter of a player's own limit and a budget's.
pub fn tighter<T: Ord>(own: Option<T>, budget: Option<T>) -> Option<T> {
    match (own, budget) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tighter_limit_wins() {
        assert_eq!(tighter(Some(3), Some(5)), Some(3));
        assert_eq!(tighter(None, Some(5)), Some(5));
        assert_eq!(tighter(Some(3), None), Some(3));
        assert_eq!(tighter::<u32>(None, None), None);
        let b = Budget::time(Duration::from_millis(250));
        let t0 = Instant::now();
        assert_eq!(b.deadline(t0), Some(t0 + Duration::from_millis(250)));
        assert_eq!(Budget::UNLIMITED.deadline(t0), None);
    }
}
