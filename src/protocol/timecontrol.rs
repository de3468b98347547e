//! The AEI game-state time options and how long to think on a move.
//!
//! All times are seconds, as AEI sends them. A time control `tcmove /
//! tcreserve / tcpercent / tcmax / tctotal / tcturns / tcturntime` follows
//! the arimaa.com rules: each turn has `tcmove` seconds plus whatever is left
//! of the mover's reserve; `tcturntime` caps a single turn. The controller
//! keeps the reserves up to date (`greserve`, `sreserve`) and says how much
//! of the current turn has already gone (`moveused`).

use crate::game::Side;
use crate::search::CRITICAL_SHARE;
use std::time::Duration;

/// What the engine knows of the clock.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeControl {
    pub tcmove: f64,
    pub tcreserve: f64,
    pub tcpercent: f64,
    pub tcmax: f64,
    pub tctotal: f64,
    pub tcturns: f64,
    pub tcturntime: f64,
    /// Current reserves of gold and silver, once the controller sent them.
    pub reserve: [Option<f64>; 2],
    /// Time each side used on its last turn.
    pub used: [Option<f64>; 2],
    pub lastmoveused: Option<f64>,
    /// Time already used on the current turn.
    pub moveused: f64,
}

/// How long to think on a turn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThinkTime {
    /// The time a turn aims at.
    pub target: Duration,
    /// The most a critical position may take (at least `target`).
    pub critical: Duration,
}

impl Default for TimeControl {
    fn default() -> Self {
        TimeControl {
            tcmove: 0.0,
            tcreserve: 0.0,
            tcpercent: 100.0,
            tcmax: 0.0,
            tctotal: 0.0,
            tcturns: 0.0,
            tcturntime: 0.0,
            reserve: [None, None],
            used: [None, None],
            lastmoveused: None,
            moveused: 0.0,
        }
    }
}

/// Latency kept back from every budget: the controller's clock started
/// before our `go` arrived and the answer still has to travel back.
const SAFETY: f64 = 0.1;
/// The share of the reserve a turn may spend on top of its own time.
const RESERVE_SHARE: f64 = 1.0 / 20.0;
/// The share of what is left before a loss on time kept back from a
/// search, between [`SAFETY`] and [`LAG_MAX`]: on a machine whose cores
/// are all busy, replies were seen reaching the controller a third of a
/// second after the engine's own deadline, a delay the engine cannot see
/// (waiting to be scheduled, the pipe), so a tight clock keeps a share of
/// its time back while a long one spends all but a second.
const LAG_SHARE: f64 = 0.4;
/// The most kept back from what is left before a loss on time.
const LAG_MAX: f64 = 1.0;
/// The shortest think time handed out.
const MIN_THINK: f64 = 0.02;
/// The longest time a time option may give, in seconds (about 31 years):
/// longer is no limit in practice, and `Duration` cannot hold every `f64`.
pub const MAX_SECONDS: f64 = 1e9;

impl TimeControl {
    /// Sets a time option by its AEI name (the protocol-0 names `wreserve`,
    /// `breserve`, `wused`, `bused`, `tcmoveused` and `tclastmoveused` are
    /// understood too). Returns `false` for a name that is not a time option.
    pub fn set(&mut self, name: &str, value: f64) -> bool {
        match name {
            "tcmove" => self.tcmove = value,
            "tcreserve" => self.tcreserve = value,
            "tcpercent" => self.tcpercent = value,
            "tcmax" => self.tcmax = value,
            "tctotal" => self.tctotal = value,
            "tcturns" => self.tcturns = value,
            "tcturntime" => self.tcturntime = value,
            "greserve" | "wreserve" => self.reserve[0] = Some(value),
            "sreserve" | "breserve" => self.reserve[1] = Some(value),
            "gused" | "wused" => self.used[0] = Some(value),
            "sused" | "bused" => self.used[1] = Some(value),
            "lastmoveused" | "tclastmoveused" => self.lastmoveused = Some(value),
            "moveused" | "tcmoveused" => self.moveused = value,
            _ => return false,
        }
        true
    }

    /// Whether `name` is one of the options [`TimeControl::set`] takes.
    pub fn is_time_option(name: &str) -> bool {
        TimeControl::default().set(name, 0.0)
    }

    /// A new game keeps the time control but resets the reserves to the
    /// initial value and forgets the time used.
    pub fn new_game(&mut self) {
        self.reserve = [None, None];
        self.used = [None, None];
        self.lastmoveused = None;
        self.moveused = 0.0;
    }

    /// Whether any clock applies.
    pub fn is_timed(&self) -> bool {
        self.tcmove > 0.0
            || self.tcreserve > 0.0
            || self.tcturntime > 0.0
            || self.reserve.iter().any(|r| r.is_some_and(|r| r > 0.0))
    }

    /// How long `side` should think on the turn it is about to play, or
    /// `None` when no clock applies. Spends the turn's own time and a
    /// twentieth of the reserve (the per-turn time is the clock's increment:
    /// what a turn leaves of it only tops up the reserve), less a safety
    /// margin, and keeps back two fifths of what is left before a loss on
    /// time (at least the safety margin, at most a second).
    pub fn budget(&self, side: Side) -> Option<Duration> {
        self.budget_after(side, Duration::ZERO)
    }

    /// [`TimeControl::budget`] less `overhead` as well: what the engine's
    /// replies have lately cost beyond their searches.
    pub fn budget_after(&self, side: Side, overhead: Duration) -> Option<Duration> {
        self.think_after(side, overhead).map(|t| t.target)
    }

    /// [`TimeControl::budget_after`] and the most a critical position may
    /// take: [`CRITICAL_SHARE`] times the turn's share, under the same
    /// cap of what is left before a loss on time (so a clock without
    /// reserve leaves nothing extra).
    pub fn think_after(&self, side: Side, overhead: Duration) -> Option<ThinkTime> {
        if !self.is_timed() {
            return None;
        }
        let reserve = self.reserve[side.index()]
            .unwrap_or(self.tcreserve)
            .max(0.0);
        let mut hard = self.tcmove.max(0.0) + reserve;
        if self.tcturntime > 0.0 && (hard <= 0.0 || self.tcturntime < hard) {
            hard = self.tcturntime;
        }
        hard -= self.moveused.max(0.0);
        let mut target = self.tcmove.max(0.0) + reserve * RESERVE_SHARE;
        if target <= 0.0 {
            target = hard;
        }
        let lag = (LAG_SHARE * hard).clamp(SAFETY, LAG_MAX);
        let seconds = |aim: f64| {
            let think = ((aim - SAFETY).min(hard - lag) - overhead.as_secs_f64())
                .clamp(MIN_THINK, MAX_SECONDS);
            // Only a NaN set through `set` fails here: it gets the shortest time.
            Duration::try_from_secs_f64(think).unwrap_or(Duration::from_secs_f64(MIN_THINK))
        };
        let think = seconds(target);
        Some(ThinkTime {
            target: think,
            critical: seconds(f64::from(CRITICAL_SHARE) * target).max(think),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(d: Option<Duration>) -> f64 {
        d.unwrap().as_secs_f64()
    }

    #[test]
    fn untimed_games_have_no_budget() {
        let tc = TimeControl::default();
        assert_eq!(tc.budget(Side::First), None);
    }

    #[test]
    fn budgets_stay_well_inside_the_turn() {
        let mut tc = TimeControl::default();
        assert!(tc.set("tcmove", 2.0));
        assert!(tc.set("tcreserve", 10.0));
        // The 2 s of the turn plus half a second of reserve, less the margin.
        assert!((secs(tc.budget(Side::First)) - 2.4).abs() < 1e-9);
        // Silver's reserve is nearly gone; gold's is large.
        tc.set("sreserve", 0.0);
        tc.set("greserve", 100.0);
        // Silver: three fifths of its 2 s; gold: 2 s and 5 of its 100.
        assert!((secs(tc.budget(Side::Second)) - 1.2).abs() < 1e-9);
        assert!((secs(tc.budget(Side::First)) - 6.9).abs() < 1e-9);
        // A turn-time cap and time already used shrink it.
        tc.set("tcturntime", 3.0);
        tc.set("moveused", 1.0);
        assert!((secs(tc.budget(Side::First)) - 1.2).abs() < 1e-9);
        // Never below the minimum, even when the turn is over.
        tc.set("moveused", 10.0);
        assert!((secs(tc.budget(Side::First)) - MIN_THINK).abs() < 1e-9);
        tc.new_game();
        assert_eq!(tc.reserve, [None, None]);
        assert_eq!(tc.moveused, 0.0);
        assert_eq!(tc.tcmove, 2.0);
        // What the replies cost beyond their searches comes off too.
        let mut tc = TimeControl::default();
        tc.set("tcmove", 1.0);
        assert!((secs(tc.budget(Side::First)) - 0.6).abs() < 1e-9);
        let late = Duration::from_millis(150);
        assert!((secs(tc.budget_after(Side::First, late)) - 0.45).abs() < 1e-9);
        let awful = Duration::from_secs(5);
        assert!((secs(tc.budget_after(Side::First, awful)) - MIN_THINK).abs() < 1e-9);
        // A critical position may take three turns' shares, under the
        // same cap: 2 s and 5 of gold's 100 s reserve make 6.9 s, 20.9 s
        // when critical; with no reserve there is nothing to add.
        let mut tc = TimeControl::default();
        tc.set("tcmove", 2.0);
        tc.set("greserve", 100.0);
        let t = tc.think_after(Side::First, Duration::ZERO).unwrap();
        assert!((t.target.as_secs_f64() - 6.9).abs() < 1e-9, "{t:?}");
        assert!((t.critical.as_secs_f64() - 20.9).abs() < 1e-9, "{t:?}");
        tc.set("greserve", 0.0);
        let t = tc.think_after(Side::First, Duration::ZERO).unwrap();
        assert_eq!(t.critical, t.target);
        assert!((t.target.as_secs_f64() - 1.2).abs() < 1e-9, "{t:?}");
        // A long turn with no reserve spends all but a second of it.
        tc.set("tcmove", 30.0);
        assert!((secs(tc.budget(Side::First)) - 29.0).abs() < 1e-9);
    }

    #[test]
    fn absurd_clocks_give_a_bounded_think() {
        for (name, value) in [
            ("tcmove", 1e308),
            ("tcreserve", f64::MAX),
            ("greserve", 1e300),
        ] {
            let mut tc = TimeControl::default();
            tc.set(name, value);
            tc.set("tcmove", value);
            assert_eq!(
                tc.budget(Side::First),
                Some(Duration::from_secs_f64(MAX_SECONDS))
            );
        }
    }

    #[test]
    fn reserve_only_and_old_names() {
        let mut tc = TimeControl::default();
        assert!(tc.set("wreserve", 20.0));
        assert!(tc.set("tcmoveused", 0.0));
        assert!((secs(tc.budget(Side::First)) - 0.9).abs() < 1e-9);
        assert!(!tc.set("hash", 1.0));
        assert!(TimeControl::is_time_option("tcpercent"));
        assert!(!TimeControl::is_time_option("depth"));
    }
}
