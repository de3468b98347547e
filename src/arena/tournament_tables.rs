//! A round robin as tables: the cross table of scores, the pair results
//! and the rating list, each for people (aligned text) and for files (CSV
//! with plain numbers), and the games file.

use super::{fmt_elo, RoundRobin};
use crate::report::Table;

/// `7`, `7.5`.
fn fmt_points(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// A number for CSV: fixed decimals; `inf` and `-inf` for perfect scores.
fn num(x: f64, decimals: usize) -> String {
    format!("{x:.decimals$}")
}

impl RoundRobin {
    /// Row player's points against each column player (out of the games
    /// the two played), then the row's total points and score.
    pub fn cross_table(&self) -> Table {
        let n = self.players.len();
        let mut headers = vec!["#".to_string(), "player".to_string()];
        headers.extend((1..=n).map(|j| j.to_string()));
        headers.extend(["points".to_string(), "score".to_string()]);
        let mut t = Table::new(headers);
        for i in 0..n {
            let mut row = vec![(i + 1).to_string(), self.players[i].clone()];
            let (mut total, mut games) = (0.0, 0.0);
            for j in 0..n {
                match self.points(i, j) {
                    Some(p) if i != j => {
                        total += p;
                        games += self.games_between(i, j) as f64;
                        row.push(fmt_points(p));
                    }
                    _ => row.push(String::new()),
                }
            }
            row.push(format!("{}/{}", fmt_points(total), games));
            row.push(format!("{:.1}%", 100.0 * total / games));
            t.push_row(row);
        }
        t
    }

    /// The pairs for people: results, equity and Elo difference.
    pub fn pairs_table(&self) -> Table {
        let mut t = Table::with_headers([
            "a",
            "b",
            "W-D-L (a)",
            "score",
            "equity",
            "Elo a-b",
            "95% interval",
        ]);
        for p in &self.pairs {
            let r = &p.result;
            let (elo, interval) = match r.elo {
                Some(e) => (
                    fmt_elo(e.elo),
                    format!("[{}, {}]", fmt_elo(e.lo), fmt_elo(e.hi)),
                ),
                None => (String::new(), String::new()),
            };
            t.push_row([
                r.a.clone(),
                r.b.clone(),
                format!("{}-{}-{}", r.total.wins, r.total.draws, r.total.losses),
                format!("{:.3}", r.total.score()),
                format!("{:+.3}", r.equity),
                elo,
                interval,
            ]);
        }
        t
    }

    /// `results.csv`: one row per pair, from `a`'s point of view.
    pub fn results_csv(&self) -> Table {
        let mut t = Table::with_headers([
            "a",
            "b",
            "games",
            "wins",
            "draws",
            "losses",
            "unfinished",
            "a_first_wins",
            "a_first_draws",
            "a_first_losses",
            "score",
            "equity",
            "elo",
            "elo_lo",
            "elo_hi",
            "mean_plies",
        ]);
        for p in &self.pairs {
            let r = &p.result;
            let e = r.elo.map_or([f64::NAN; 3], |e| [e.elo, e.lo, e.hi]);
            t.push_row([
                r.a.clone(),
                r.b.clone(),
                r.total.games().to_string(),
                r.total.wins.to_string(),
                r.total.draws.to_string(),
                r.total.losses.to_string(),
                r.unfinished.to_string(),
                r.a_first.wins.to_string(),
                r.a_first.draws.to_string(),
                r.a_first.losses.to_string(),
                num(r.total.score(), 4),
                num(r.equity, 4),
                num(e[0], 1),
                num(e[1], 1),
                num(e[2], 1),
                num(r.mean_plies, 2),
            ]);
        }
        t
    }

    /// The rating list for people, best first.
    pub fn ratings_table(&self) -> Table {
        let mut t = Table::with_headers([
            "rank",
            "player",
            "Elo",
            "95% interval",
            "games",
            "W-D-L",
            "score",
        ]);
        for r in &self.ratings {
            t.push_row([
                r.rank.to_string(),
                r.player.clone(),
                fmt_elo(r.elo),
                format!("[{}, {}]", fmt_elo(r.lo), fmt_elo(r.hi)),
                r.games.to_string(),
                format!("{}-{}-{}", r.wdl.wins, r.wdl.draws, r.wdl.losses),
                format!("{:.1}%", 100.0 * r.score),
            ]);
        }
        t
    }

    /// `ratings.csv`: one row per player, best first.
    pub fn ratings_csv(&self) -> Table {
        let mut t = Table::with_headers([
            "rank", "player", "elo", "elo_lo", "elo_hi", "se", "games", "wins", "draws", "losses",
            "score",
        ]);
        for r in &self.ratings {
            t.push_row([
                r.rank.to_string(),
                r.player.clone(),
                num(r.elo, 1),
                num(r.lo, 1),
                num(r.hi, 1),
                num(r.se, 1),
                r.games.to_string(),
                r.wdl.wins.to_string(),
                r.wdl.draws.to_string(),
                r.wdl.losses.to_string(),
                num(r.score, 4),
            ]);
        }
        t
    }

    /// `games.txt`: a header, then one tab-separated line per game: its
    /// number, the first and second player, the result, the number of
    /// moves, the start position and the moves separated by `;`.
    pub fn games_text(&self) -> String {
        let mut out = String::from("game\tfirst\tsecond\tresult\tplies\tstart\tmoves\n");
        for g in &self.game_log {
            out.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                g.index,
                self.players[g.first],
                self.players[g.second],
                g.result,
                g.moves.len(),
                g.start,
                g.moves.join(";")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_and_numbers_print_plainly() {
        assert_eq!(fmt_points(7.0), "7");
        assert_eq!(fmt_points(7.5), "7.5");
        assert_eq!(num(f64::INFINITY, 1), "inf");
        assert_eq!(num(-12.345, 1), "-12.3");
        assert_eq!(fmt_elo(-0.3), "0");
        assert_eq!(fmt_elo(190.85), "+191");
        assert_eq!(fmt_elo(f64::NEG_INFINITY), "-inf");
    }
}
