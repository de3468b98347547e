//! What one move's search may spend: time, nodes (simulations for MCTS)
//! and depth, and a flag that ends it at once. Engines turn their clocks
//! and `stop` commands into a budget and matches give none; every player
//! stops at the first limit reached, its budget's or its own spec's
//! (`mcts:sims=`, `alphabeta:depth=`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A critical position may take this many times a move's share of the
/// clock (see [`Budget::critical_deadline`]), within the clock's hard limit.
pub const CRITICAL_SHARE: u32 = 3;

/// Limits on one move's search; `None` leaves that limit to the player.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// Wall-clock time for the move, counted from the search's start.
    pub time: Option<Duration>,
    /// The instant the move is due, whenever the search starts: an
    /// engine's clock, counted from when the command arrived (the time
    /// spent before the search, reading the line and setting up the board,
    /// is already gone). The search stops at the earlier of this and its
    /// start plus `time`.
    pub deadline: Option<Instant>,
    /// The latest instant a search may run to in a critical position (see
    /// [`crate::search::alphabeta::Extension`]): an engine's share of its
    /// reserve for the moves that matter. Only with `deadline`, never
    /// before it.
    pub critical_deadline: Option<Instant>,
    /// Nodes visited (alpha-beta), simulations run (MCTS) or positions
    /// valued (greedy).
    pub nodes: Option<u64>,
    /// Depth in moves (alpha-beta).
    pub depth: Option<u32>,
    /// Raised by another thread to end the search early with the best
    /// move found so far (an engine's `stop`).
    pub stop: Option<StopFlag>,
}

/// A flag one thread raises and a search polls between nodes or
/// simulations. Two flags are equal when they are the same flag.
#[derive(Clone, Debug, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    /// Asks every search polling this flag to stop.
    pub fn raise(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_raised(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// The flag itself, for searches that poll an `AtomicBool`.
    pub fn as_atomic(&self) -> &AtomicBool {
        &self.0
    }
}

impl PartialEq for StopFlag {
    fn eq(&self, other: &StopFlag) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for StopFlag {}

impl Budget {
    /// No limit beyond the player's own.
    pub const UNLIMITED: Budget = Budget {
        time: None,
        deadline: None,
        critical_deadline: None,
        nodes: None,
        depth: None,
        stop: None,
    };

    /// Only a time limit.
    pub fn time(time: Duration) -> Budget {
        Budget {
            time: Some(time),
            ..Budget::UNLIMITED
        }
    }

    /// Only a deadline: the move is due at `deadline`.
    pub fn until(deadline: Instant) -> Budget {
        Budget {
            deadline: Some(deadline),
            ..Budget::UNLIMITED
        }
    }

    /// The instant the time runs out, for a search started at `start`:
    /// the earlier of `start + time` and the deadline.
    pub fn deadline(&self, start: Instant) -> Option<Instant> {
        tighter(self.time.map(|t| start + t), self.deadline)
    }

    /// The time left at `now` (zero once the deadline has passed), for
    /// searches that take a duration and start at once.
    pub fn time_left(&self, now: Instant) -> Option<Duration> {
        self.deadline(now).map(|d| d.saturating_duration_since(now))
    }

    /// Whether the stop flag, if any, has been raised.
    pub fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(StopFlag::is_raised)
    }

    /// The stop flag as the `AtomicBool` searches poll.
    pub fn stop_flag(&self) -> Option<&AtomicBool> {
        self.stop.as_ref().map(StopFlag::as_atomic)
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
        // A deadline counts whenever the search starts; the earlier wins.
        let due = t0 + Duration::from_millis(100);
        let later = t0 + Duration::from_millis(40);
        assert_eq!(Budget::until(due).deadline(later), Some(due));
        assert_eq!(
            Budget::until(due).time_left(later),
            Some(Duration::from_millis(60))
        );
        assert_eq!(
            Budget::until(due).time_left(due + Duration::from_millis(5)),
            Some(Duration::ZERO)
        );
        let both = Budget {
            deadline: Some(due),
            ..Budget::time(Duration::from_millis(30))
        };
        assert_eq!(
            both.deadline(later),
            Some(later + Duration::from_millis(30))
        );
        assert_eq!(both.deadline(t0 + Duration::from_millis(90)), Some(due));
        assert_eq!(Budget::UNLIMITED.time_left(t0), None);
    }

    #[test]
    fn a_stop_flag_is_seen_through_every_clone() {
        let flag = StopFlag::new();
        let budget = Budget {
            stop: Some(flag.clone()),
            ..Budget::UNLIMITED
        };
        let copy = budget.clone();
        assert!(!copy.stopped());
        flag.raise();
        assert!(budget.stopped() && copy.stopped());
        assert_eq!(budget, copy);
        assert_ne!(
            copy,
            Budget {
                stop: Some(StopFlag::new()),
                ..Budget::UNLIMITED
            }
        );
        assert!(!Budget::UNLIMITED.stopped());
    }
}
