use super::EloEstimate;
use crate::game::{Outcome, Side};
use serde::Serialize;
use std::fmt;

/// Wins, draws and losses from one player's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Wdl {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Wdl {
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// `(w - l) / (w + l + d)`, as Patist & Wiering define it.
    pub fn equity(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            0.0
        } else {
            (self.wins as f64 - self.losses as f64) / n as f64
        }
    }

    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            0.5
        } else {
            (self.wins as f64 + 0.5 * self.draws as f64) / n as f64
        }
    }

    /// The fraction of games won.
    pub fn win_rate(&self) -> f64 {
        self.wins as f64 / self.games().max(1) as f64
    }

    /// The 95% Wilson interval of the win rate (sound at 0% and 100%).
    pub fn win_rate_interval(&self) -> (f64, f64) {
        wilson_interval(self.wins, self.games())
    }

    /// The 95% interval of the score (a draw is half a win), from the
    /// per-game variance, clamped to `[0, 1]`.
    pub fn score_interval(&self) -> (f64, f64) {
        let n = self.games() as f64;
        if n == 0.0 {
            return (0.0, 1.0);
        }
        let s = self.score();
        let var = (self.wins as f64 * (1.0 - s).powi(2)
            + self.draws as f64 * (0.5 - s).powi(2)
            + self.losses as f64 * s.powi(2))
            / n;
        let half = 1.96 * (var / n).sqrt();
        ((s - half).max(0.0), (s + half).min(1.0))
    }

    pub fn add(&mut self, outcome: Outcome, me: Side) {
        match outcome {
            Outcome::Draw => self.draws += 1,
            Outcome::Win(w) if w == me => self.wins += 1,
            Outcome::Win(_) => self.losses += 1,
        }
    }
}

/// The 95% Wilson score interval of `k` successes in `n` trials.
pub fn wilson_interval(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    wilson_at(k as f64 / n as f64, n as f64, 1.96)
}

/// The Wilson score interval of a proportion `p` over `n > 0` trials,
/// `z` standard errors wide on each side.
pub fn wilson_at(p: f64, n: f64, z: f64) -> (f64, f64) {
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// A match of A against B, from A's point of view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatchResult {
    pub a: String,
    pub b: String,
    pub seed: u64,
    pub total: Wdl,
    pub a_first: Wdl,
    pub a_second: Wdl,
    /// Games stopped at the ply limit; counted as draws above.
    pub unfinished: u64,
    pub mean_plies: f64,
    pub equity: f64,
    pub elo: Option<EloEstimate>,
}

impl MatchResult {
    pub fn new(a: String, b: String, seed: u64) -> Self {
        MatchResult {
            a,
            b,
            seed,
            total: Wdl::default(),
            a_first: Wdl::default(),
            a_second: Wdl::default(),
            unfinished: 0,
            mean_plies: 0.0,
            equity: 0.0,
            elo: None,
        }
    }

    /// Adds a game that may have been stopped unfinished (`None`), which
    /// counts as a draw.
    pub fn add_game(&mut self, a_first: bool, outcome: Option<Outcome>, plies: usize) {
        if outcome.is_none() {
            self.unfinished += 1;
        }
        self.add(a_first, outcome.unwrap_or(Outcome::Draw), plies);
    }

    /// A's points: a win 1, a draw 1/2.
    pub fn a_points(&self) -> f64 {
        self.total.wins as f64 + 0.5 * self.total.draws as f64
    }

    pub fn add(&mut self, a_first: bool, outcome: Outcome, plies: usize) {
        let me = if a_first { Side::First } else { Side::Second };
        self.total.add(outcome, me);
        if a_first {
            self.a_first.add(outcome, me);
        } else {
            self.a_second.add(outcome, me);
        }
        let n = self.total.games() as f64;
        self.mean_plies += (plies as f64 - self.mean_plies) / n;
        self.equity = self.total.equity();
        self.elo = EloEstimate::from_wdl(self.total.wins, self.total.draws, self.total.losses);
    }
}

/// An Elo value for people, rounded: `+191`, `-35`, `0`, `-inf`.
pub fn fmt_elo(x: f64) -> String {
    if x.is_infinite() {
        if x > 0.0 { "+inf" } else { "-inf" }.into()
    } else if x.round() == 0.0 {
        "0".into()
    } else {
        format!("{x:+.0}")
    }
}

impl fmt::Display for MatchResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} vs {} ({} games, seed {})",
            self.a,
            self.b,
            self.total.games(),
            self.seed
        )?;
        writeln!(
            f,
            "{:<14} {:>6} {:>6} {:>6} {:>7} {:>7}",
            "A played", "wins", "draws", "losses", "score", "equity"
        )?;
        for (label, w) in [
            ("first", self.a_first),
            ("second", self.a_second),
            ("all", self.total),
        ] {
            writeln!(
                f,
                "{:<14} {:>6} {:>6} {:>6} {:>7.3} {:>+7.3}",
                label,
                w.wins,
                w.draws,
                w.losses,
                w.score(),
                w.equity()
            )?;
        }
        if let Some(e) = self.elo {
            writeln!(
                f,
                "Elo difference (A - B): {} [95% {} .. {}]",
                fmt_elo(e.elo),
                fmt_elo(e.lo),
                fmt_elo(e.hi)
            )?;
        }
        if self.unfinished > 0 {
            writeln!(
                f,
                "unfinished at the ply limit (counted as draws): {}",
                self.unfinished
            )?;
        }
        write!(f, "mean game length: {:.2} plies", self.mean_plies)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_intervals_match_hand_computed_values() {
        // 96 of 100: centre (0.96 + 1.9208/100) / 1.038416 = 0.94299,
        // half 1.96 * sqrt(0.0384/100 + 3.8416/40000) / 1.038416 = 0.04138.
        let (lo, hi) = wilson_interval(96, 100);
        assert!(
            (lo - 0.90161).abs() < 1e-4 && (hi - 0.98437).abs() < 1e-4,
            "{lo} {hi}"
        );
        let (lo, hi) = wilson_interval(500, 500);
        assert!(hi > 0.99999 && (lo - 0.99238).abs() < 1e-4, "{lo}");
        let w = Wdl {
            wins: 60,
            draws: 0,
            losses: 40,
        };
        let (lo, hi) = w.score_interval();
        assert!(
            (lo - (0.6 - 1.96 * 0.04899)).abs() < 1e-4
                && (hi - (0.6 + 1.96 * 0.04899)).abs() < 1e-4
        );
        assert_eq!(w.win_rate(), 0.6);
    }
}
