//! Elo ratings for many players from all their games: the maximum
//! likelihood fit of the Bradley-Terry (logistic Elo) model, with 95%
//! intervals from the Fisher information.
//!
//! Player `i` scores against `j` with probability
//! `1 / (1 + 10^((r_j - r_i) / 400))`; a draw counts as half a win and half
//! a loss. The log-likelihood is concave, so Newton's method finds its
//! maximum when one exists: when every split of the players into two groups
//! has each group scoring some points against the other. A prior of
//! `prior_draws` virtual draws added to every pair that played (as
//! BayesElo does) keeps the fit finite when a player won or lost every game,
//! and pulls the ratings a little towards each other; 0 gives the plain
//! maximum likelihood fit.
//!
//! Ratings are only defined up to a common shift: the [`Anchor`] puts the
//! first player at 0, or the mean of all players. Intervals are the ratings
//! plus or minus 1.96 standard errors, from the inverse of the observed
//! information matrix; they treat draws as half-wins, which overstates the
//! variance a little when draws are common.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Natural log units per Elo point: `ln(10) / 400`.
const NATS_PER_ELO: f64 = std::f64::consts::LN_10 / 400.0;
/// 95% two-sided normal quantile.
const Z95: f64 = 1.959_963_984_540_054;

/// Where the ratings are put on the Elo scale.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Anchor {
    /// The first player is rated 0 (its interval is then a point).
    #[default]
    First,
    /// The ratings average 0.
    Mean,
}

impl FromStr for Anchor {
    type Err = RatingFitError;
    fn from_str(s: &str) -> Result<Self, RatingFitError> {
        match s {
            "first" => Ok(Anchor::First),
            "mean" => Ok(Anchor::Mean),
            other => Err(RatingFitError::UnknownAnchor(other.to_string())),
        }
    }
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Anchor::First => "first",
            Anchor::Mean => "mean",
        })
    }
}

/// How [`fit_ratings`] fits.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FitOptions {
    /// Virtual draws added to every pair of players that met (0: none).
    pub prior_draws: f64,
    pub anchor: Anchor,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            prior_draws: 1.0,
            anchor: Anchor::First,
        }
    }
}

/// The games between two players: `points_a` is what `a` scored (a win 1,
/// a draw 1/2) in `games` games against `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairScore {
    pub a: usize,
    pub b: usize,
    pub games: f64,
    pub points_a: f64,
}

/// One player's fitted rating.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FittedRating {
    pub elo: f64,
    /// Standard error, in Elo.
    pub se: f64,
    /// The 95% interval.
    pub lo: f64,
    pub hi: f64,
}

#[derive(Debug, Error, PartialEq)]
pub enum RatingFitError {
    #[error("no players to rate")]
    NoPlayers,
    #[error("pair ({a}, {b}): {why}")]
    BadPair { a: usize, b: usize, why: String },
    #[error("player {player} played nobody connected to player 0: ratings are not comparable")]
    Disconnected { player: usize },
    #[error(
        "no finite ratings: player {player} and the players it never scored against \
         (or never conceded to) are separated by perfect scores; add a prior (virtual draws)"
    )]
    NoFiniteMaximum { player: usize },
    #[error("the fit did not converge")]
    NoConvergence,
    #[error("anchor '{0}': expected first or mean")]
    UnknownAnchor(String),
}

/// Fits the ratings of `players` players from their pair results (pairs
/// may repeat; they are added up). See the module docs.
pub fn fit_ratings(
    players: usize,
    pairs: &[PairScore],
    opts: &FitOptions,
) -> Result<Vec<FittedRating>, RatingFitError> {
    if players == 0 {
        return Err(RatingFitError::NoPlayers);
    }
    let n = players;
    // games[i][j] and points[i][j]: i's points against j.
    let mut games = vec![vec![0.0f64; n]; n];
    let mut points = vec![vec![0.0f64; n]; n];
    for p in pairs {
        let bad = |why: &str| RatingFitError::BadPair {
            a: p.a,
            b: p.b,
            why: why.to_string(),
        };
        if p.a >= n || p.b >= n {
            return Err(bad("no such player"));
        }
        if p.a == p.b {
            return Err(bad("a player cannot play itself"));
        }
        if !(p.games >= 0.0 && p.points_a >= 0.0 && p.points_a <= p.games) {
            return Err(bad("points must lie in 0..=games"));
        }
        games[p.a][p.b] += p.games;
        games[p.b][p.a] += p.games;
        points[p.a][p.b] += p.points_a;
        points[p.b][p.a] += p.games - p.points_a;
    }
    if opts.prior_draws > 0.0 {
        for i in 0..n {
            for j in 0..n {
                if games[i][j] > 0.0 {
                    games[i][j] += opts.prior_draws;
                    points[i][j] += opts.prior_draws / 2.0;
                }
            }
        }
    }
    // Player 0 must reach everyone and everyone player 0 through games
    // (ratings comparable), and through points scored in both directions
    // (a finite maximum).
    if let Some(player) = unreached(n, |i, j| games[i][j] > 0.0) {
        return Err(RatingFitError::Disconnected { player });
    }
    let scored = |i: usize, j: usize| points[i][j] > 0.0;
    let conceded = |i: usize, j: usize| points[j][i] > 0.0;
    if let Some(player) = unreached(n, scored).or_else(|| unreached(n, conceded)) {
        return Err(RatingFitError::NoFiniteMaximum { player });
    }

    // Newton's method on x (natural units), x[0] = 0.
    let mut x = vec![0.0f64; n];
    let mut converged = n == 1;
    for _ in 0..200 {
        if converged {
            break;
        }
        let (grad, info) = gradient_and_information(&x, &games, &points);
        let step = solve(&reduce(&info), &grad[1..]).ok_or(RatingFitError::NoConvergence)?;
        // A long step is cut to 2 nats (about 350 Elo) to stay safe far from the maximum.
        let longest = step.iter().fold(0.0f64, |m, s| m.max(s.abs()));
        let scale = if longest > 2.0 { 2.0 / longest } else { 1.0 };
        for (xi, s) in x[1..].iter_mut().zip(&step) {
            *xi += scale * s;
        }
        converged = longest < 1e-12;
    }
    if !converged {
        return Err(RatingFitError::NoConvergence);
    }

    // Covariance of (x_1..x_n-1) with x_0 fixed; player 0's row and
    // column are zero.
    let (_, info) = gradient_and_information(&x, &games, &points);
    let mut cov = vec![vec![0.0f64; n]; n];
    if n > 1 {
        let reduced = reduce(&info);
        for k in 0..n - 1 {
            let mut e = vec![0.0; n - 1];
            e[k] = 1.0;
            let col = solve(&reduced, &e).ok_or(RatingFitError::NoConvergence)?;
            for (i, v) in col.into_iter().enumerate() {
                cov[i + 1][k + 1] = v;
            }
        }
    }
    let (shift, var): (f64, Vec<f64>) = match opts.anchor {
        Anchor::First => (0.0, (0..n).map(|i| cov[i][i]).collect()),
        Anchor::Mean => {
            // Var(x_i - mean x) = S_ii - 2/n sum_k S_ik + 1/n^2 sum_kl S_kl.
            let nf = n as f64;
            let row: Vec<f64> = cov.iter().map(|r| r.iter().sum()).collect();
            let total: f64 = row.iter().sum();
            let var = (0..n)
                .map(|i| cov[i][i] - 2.0 * row[i] / nf + total / (nf * nf))
                .collect();
            (x.iter().sum::<f64>() / nf, var)
        }
    };
    Ok(x.iter()
        .zip(var)
        .map(|(&xi, v)| {
            let elo = (xi - shift) / NATS_PER_ELO;
            let se = v.max(0.0).sqrt() / NATS_PER_ELO;
            FittedRating {
                elo,
                se,
                lo: elo - Z95 * se,
                hi: elo + Z95 * se,
            }
        })
        .collect())
}

/// The first player that player 0 does not reach along `edge(i, j)`, if any.
fn unreached(n: usize, edge: impl Fn(usize, usize) -> bool) -> Option<usize> {
    let mut seen = vec![false; n];
    seen[0] = true;
    let mut stack = vec![0];
    while let Some(i) = stack.pop() {
        for (j, s) in seen.iter_mut().enumerate() {
            if !*s && edge(i, j) {
                *s = true;
                stack.push(j);
            }
        }
    }
    seen.iter().position(|&s| !s)
}

/// The log-likelihood's gradient and the observed information (its
/// negated Hessian) at `x`.
fn gradient_and_information(
    x: &[f64],
    games: &[Vec<f64>],
    points: &[Vec<f64>],
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = x.len();
    let mut grad = vec![0.0; n];
    let mut info = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..n {
            if i == j || games[i][j] == 0.0 {
                continue;
            }
            let p = 1.0 / (1.0 + (x[j] - x[i]).exp());
            grad[i] += points[i][j] - games[i][j] * p;
            let w = games[i][j] * p * (1.0 - p);
            info[i][i] += w;
            info[i][j] -= w;
        }
    }
    (grad, info)
}

/// The matrix without player 0's row and column.
fn reduce(m: &[Vec<f64>]) -> Vec<Vec<f64>> {
    m[1..].iter().map(|r| r[1..].to_vec()).collect()
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting; `None`
/// when `a` is singular.
fn solve(a: &[Vec<f64>], b: &[f64]) -> Option<Vec<f64>> {
    let n = b.len();
    let mut m: Vec<Vec<f64>> = a
        .iter()
        .zip(b)
        .map(|(row, &bi)| {
            let mut r = row.clone();
            r.push(bi);
            r
        })
        .collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&p, &q| m[p][col].abs().total_cmp(&m[q][col].abs()))?;
        if m[pivot][col].abs() < 1e-300 {
            return None;
        }
        m.swap(col, pivot);
        let (top, rest) = m.split_at_mut(col + 1);
        let pivot_row = &top[col];
        for row in rest {
            let f = row[col] / pivot_row[col];
            if f != 0.0 {
                for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                    *x -= f * p;
                }
            }
        }
    }
    let mut out = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|c| m[r][c] * out[c]).sum();
        out[r] = (m[r][n] - s) / m[r][r];
    }
    out.iter().all(|v| v.is_finite()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::{elo_from_score, EloEstimate};

    fn plain(anchor: Anchor) -> FitOptions {
        FitOptions {
            prior_draws: 0.0,
            anchor,
        }
    }

    fn pair(a: usize, b: usize, games: f64, points_a: f64) -> PairScore {
        PairScore {
            a,
            b,
            games,
            points_a,
        }
    }

    /// Three players, each pair playing `games` games; `points_a` are the
    /// first player's points in pairs (0, 1), (0, 2) and (1, 2).
    fn three_players(games: f64, points_a: [f64; 3]) -> [PairScore; 3] {
        let [p01, p02, p12] = points_a;
        [
            pair(0, 1, games, p01),
            pair(0, 2, games, p02),
            pair(1, 2, games, p12),
        ]
    }

    #[test]
    fn a_75_percent_score_is_191_elo() {
        let r = fit_ratings(2, &[pair(0, 1, 400.0, 300.0)], &plain(Anchor::First)).unwrap();
        assert_eq!(r[0].elo, 0.0);
        assert_eq!(r[0].se, 0.0);
        assert!((r[1].elo + 190.85).abs() < 0.01, "{r:?}");
        // The same score from draws.
        let r = fit_ratings(2, &[pair(1, 0, 100.0, 75.0)], &plain(Anchor::First)).unwrap();
        assert!((r[1].elo - 190.85).abs() < 0.01, "{r:?}");
    }

    #[test]
    fn two_players_agree_with_the_match_estimate() {
        // 60 wins, 40 losses: the Fisher interval is the delta-method one.
        let r = fit_ratings(2, &[pair(0, 1, 100.0, 60.0)], &plain(Anchor::First)).unwrap();
        let e = EloEstimate::from_wdl(40, 0, 60).unwrap();
        assert!((r[1].elo - e.elo).abs() < 1e-6);
        // se = 1 / (c sqrt(n p (1 - p))) in Elo.
        let se = 1.0 / (NATS_PER_ELO * (100.0f64 * 0.24).sqrt());
        assert!((r[1].se - se).abs() < 1e-6, "{} vs {se}", r[1].se);
        assert!((r[1].hi - r[1].lo - 2.0 * Z95 * se).abs() < 1e-6);
    }

    #[test]
    fn expected_scores_give_back_the_true_ratings() {
        let truth = [0.0, 100.0, 300.0, -50.0];
        let expect = |a: usize, b: usize| 1.0 / (1.0 + 10f64.powf((truth[b] - truth[a]) / 400.0));
        let mut pairs = Vec::new();
        for a in 0..4 {
            for b in a + 1..4 {
                pairs.push(pair(a, b, 50.0, 50.0 * expect(a, b)));
            }
        }
        let r = fit_ratings(4, &pairs, &plain(Anchor::First)).unwrap();
        for (got, want) in r.iter().zip(truth) {
            assert!((got.elo - want).abs() < 1e-6, "{r:?}");
        }
        let m = fit_ratings(4, &pairs, &plain(Anchor::Mean)).unwrap();
        let mean = truth.iter().sum::<f64>() / 4.0;
        for (got, want) in m.iter().zip(truth) {
            assert!((got.elo - (want - mean)).abs() < 1e-6, "{m:?}");
        }
        assert!(m.iter().map(|x| x.elo).sum::<f64>().abs() < 1e-6);
        // Anchored at the mean, every rating is uncertain, player 0's too.
        assert!(m.iter().all(|x| x.se > 0.0));
        // A chain: 0-1 and 1-2 only, 2 is still rated through 1.
        let chain = [pair(0, 1, 100.0, 50.0), pair(1, 2, 100.0, 75.0)];
        let c = fit_ratings(3, &chain, &plain(Anchor::First)).unwrap();
        assert!((c[2].elo - elo_from_score(0.25)).abs() < 1e-6, "{c:?}");
        assert!(c[2].se > c[1].se);
    }

    #[test]
    fn perfect_scores_need_a_prior() {
        let pairs = three_players(10.0, [10.0, 10.0, 6.0]);
        let e = fit_ratings(3, &pairs, &plain(Anchor::First)).unwrap_err();
        assert!(matches!(e, RatingFitError::NoFiniteMaximum { .. }), "{e}");
        let opts = FitOptions {
            prior_draws: 1.0,
            anchor: Anchor::First,
        };
        let r = fit_ratings(3, &pairs, &opts).unwrap();
        assert!(r[1].elo < -200.0 && r[2].elo < r[1].elo, "{r:?}");
        assert!(r.iter().all(|x| x.lo.is_finite() && x.hi.is_finite()));
        // The prior shrinks a 75% score a little: (75 + .5) / 101.
        let r = fit_ratings(2, &[pair(0, 1, 100.0, 75.0)], &opts).unwrap();
        assert!(
            (r[1].elo + elo_from_score(75.5 / 101.0)).abs() < 1e-6,
            "{r:?}"
        );
    }

    #[test]
    fn bad_input_is_refused() {
        let o = FitOptions::default();
        assert_eq!(
            fit_ratings(0, &[], &o).unwrap_err(),
            RatingFitError::NoPlayers
        );
        let e = fit_ratings(3, &[pair(0, 1, 4.0, 2.0)], &o).unwrap_err();
        assert_eq!(e, RatingFitError::Disconnected { player: 2 });
        assert!(fit_ratings(2, &[pair(0, 2, 4.0, 2.0)], &o).is_err());
        assert!(fit_ratings(2, &[pair(0, 1, 4.0, 5.0)], &o).is_err());
        assert!(fit_ratings(2, &[pair(1, 1, 4.0, 2.0)], &o).is_err());
        let one = fit_ratings(1, &[], &o).unwrap();
        assert_eq!(one[0].elo, 0.0);
    }

    #[test]
    fn even_scores_rate_everyone_equal() {
        let pairs = three_players(20.0, [10.0; 3]);
        for anchor in [Anchor::First, Anchor::Mean] {
            let r = fit_ratings(3, &pairs, &plain(anchor)).unwrap();
            assert!(r.iter().all(|x| x.elo.abs() < 1e-9), "{r:?}");
        }
    }
}
