//! How an engine keeps a controller's clock: a move's time counts from the
//! moment its command was read (stamped before the line is parsed), and the
//! search is given that time less a margin for the work after it (stopping
//! the search threads, picking the move, writing the reply) and before it
//! (parsing, setting up the board). The margin is measured, not assumed: a
//! floor for what the engine cannot see (the pipe, the controller's own
//! scheduling) plus twice the worst overhead of the last [`KEPT`] replies
//! (room for a reply slower than any of those), so an engine on a loaded
//! machine, whose replies lag their searches, stops its searches earlier.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Replies whose overhead is remembered.
pub const KEPT: usize = 8;

/// The measured overhead counts this many times in the margin.
const HEADROOM: u32 = 2;

/// The shortest search a deadline allows, however large the margin.
const MIN_SEARCH: Duration = Duration::from_millis(1);

/// One answered move, for [`ReplyClock::record`].
#[derive(Clone, Copy, Debug)]
pub struct Reply {
    /// When the command's line was read.
    pub arrived: Instant,
    /// How long the search itself ran.
    pub searched: Duration,
    /// The deadline the search was given, if any.
    pub due: Option<Instant>,
    /// When the reply was written and flushed.
    pub written: Instant,
}

impl Reply {
    /// What the reply cost beyond its search: the time from the line's
    /// arrival to the written reply less the search's own, or, when the
    /// search ran to its deadline, how far past the deadline the reply went
    /// out (which also counts a search slow to stop), whichever is larger.
    pub fn overhead(&self) -> Duration {
        let around = self
            .written
            .saturating_duration_since(self.arrived)
            .saturating_sub(self.searched);
        let late = self.due.map_or(Duration::ZERO, |d| {
            self.written.saturating_duration_since(d)
        });
        around.max(late)
    }
}

/// The margin an engine keeps back from each move's time limit.
#[derive(Clone, Debug)]
pub struct ReplyClock {
    floor: Duration,
    recent: VecDeque<Duration>,
}

impl ReplyClock {
    /// A clock whose margin is never below `floor`.
    pub fn new(floor: Duration) -> ReplyClock {
        ReplyClock {
            floor,
            recent: VecDeque::with_capacity(KEPT),
        }
    }

    /// The worst overhead of the last [`KEPT`] replies (zero before any).
    pub fn worst_overhead(&self) -> Duration {
        self.recent.iter().copied().max().unwrap_or_default()
    }

    /// What is kept back from a move's time: the floor plus twice the
    /// worst recent overhead.
    pub fn margin(&self) -> Duration {
        self.floor + self.worst_overhead() * HEADROOM
    }

    /// When the search of a move whose command arrived at `arrived`, with
    /// `limit` to answer in, must stop: `limit` less the margin after the
    /// arrival (at least [`MIN_SEARCH`] after it).
    pub fn due(&self, arrived: Instant, limit: Duration) -> Instant {
        arrived + limit.saturating_sub(self.margin()).max(MIN_SEARCH)
    }

    /// Remembers what a reply cost beyond its search.
    pub fn record(&mut self, reply: &Reply) {
        if self.recent.len() == KEPT {
            self.recent.pop_front();
        }
        self.recent.push_back(reply.overhead());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn overhead_is_what_the_reply_cost_beyond_its_search() {
        let t0 = Instant::now();
        // Read at 0, searched 900 ms up to its deadline at 950, written at 980.
        let r = Reply {
            arrived: t0,
            searched: ms(900),
            due: Some(t0 + ms(950)),
            written: t0 + ms(980),
        };
        assert_eq!(r.overhead(), ms(80));
        // A search that overran its deadline: the lateness counts.
        let r = Reply {
            searched: ms(975),
            ..r
        };
        assert_eq!(r.overhead(), ms(30));
        // One that ended early (a node limit): only the time around it.
        let r = Reply {
            arrived: t0,
            searched: ms(100),
            due: Some(t0 + ms(950)),
            written: t0 + ms(110),
        };
        assert_eq!(r.overhead(), ms(10));
    }

    #[test]
    fn the_margin_grows_with_slow_replies_and_forgets_them() {
        let t0 = Instant::now();
        let mut clock = ReplyClock::new(ms(50));
        assert_eq!(clock.margin(), ms(50));
        assert_eq!(clock.due(t0, ms(1000)), t0 + ms(950));
        let reply = |extra: u64| Reply {
            arrived: t0,
            searched: ms(500),
            due: None,
            written: t0 + ms(500 + extra),
        };
        clock.record(&reply(70));
        clock.record(&reply(5));
        assert_eq!(clock.margin(), ms(190));
        assert_eq!(clock.due(t0, ms(1000)), t0 + ms(810));
        // The slow reply is forgotten after KEPT more.
        for _ in 0..KEPT - 1 {
            clock.record(&reply(5));
        }
        assert_eq!(clock.margin(), ms(60));
        // A margin beyond the limit still leaves the shortest search.
        clock.record(&reply(2000));
        assert_eq!(clock.due(t0, ms(300)), t0 + MIN_SEARCH);
    }
}
