//! Intervals by game: the rows of one game share its result, so their
//! errors are not independent, and an interval that treats every position
//! as a draw of its own is far too narrow. Resampling whole games (the
//! cluster bootstrap) keeps that dependence; comparing two evaluators on the
//! same resampled games (paired) cancels what the games themselves do to
//! both.

use super::MetricsAcc;
use crate::util::seeded_rng;
use rand::RngExt;
use serde::Serialize;
use std::collections::BTreeMap;

/// A difference between two evaluators with its percentile interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Difference {
    /// `a - b` on all the games.
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// Evaluator `a` against `b` on the same games.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PairedByGame {
    pub games: usize,
    pub resamples: usize,
    /// Confidence of the intervals (0.95).
    pub level: f64,
    /// Accuracy of `a` minus that of `b` (decisive rows).
    pub accuracy: Difference,
    /// MSE of `a` minus that of `b`.
    pub mse: Difference,
}

/// `a - b` in accuracy and MSE with 95% percentile intervals from
/// `resamples` draws of the games with replacement (seeded), both keyed by
/// game id. `None` unless both have the same games with the same number of
/// rows each, at least one, and a decisive row.
pub fn paired_by_game(
    a: &BTreeMap<String, MetricsAcc>,
    b: &BTreeMap<String, MetricsAcc>,
    resamples: usize,
    seed: u64,
) -> Option<PairedByGame> {
    let same_games = a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, x), (kb, y))| ka == kb && x.count == y.count);
    if a.is_empty() || !same_games || resamples == 0 {
        return None;
    }
    let a: Vec<MetricsAcc> = a.values().copied().collect();
    let b: Vec<MetricsAcc> = b.values().copied().collect();
    let diff = |idx: &mut dyn Iterator<Item = usize>| {
        let (mut sa, mut sb) = (MetricsAcc::default(), MetricsAcc::default());
        for i in idx {
            sa.merge(&a[i]);
            sb.merge(&b[i]);
        }
        let (ma, mb) = (sa.summary(), sb.summary());
        let acc = ma.accuracy.zip(mb.accuracy).map(|(x, y)| x - y);
        (acc, ma.mse - mb.mse)
    };
    let (acc, mse) = diff(&mut (0..a.len()));
    let acc = acc?;
    let mut rng = seeded_rng(seed, 0);
    let n = a.len();
    let (mut accs, mut mses) = (Vec::with_capacity(resamples), Vec::with_capacity(resamples));
    for _ in 0..resamples {
        let draws: Vec<usize> = (0..n).map(|_| rng.random_range(0..n)).collect();
        let (x, y) = diff(&mut draws.into_iter());
        // A resample of drawn games only: no decisive row, no accuracy.
        if let Some(x) = x {
            accs.push(x);
        }
        mses.push(y);
    }
    const LEVEL: f64 = 0.95;
    Some(PairedByGame {
        games: n,
        resamples,
        level: LEVEL,
        accuracy: interval(acc, &mut accs, LEVEL),
        mse: interval(mse, &mut mses, LEVEL),
    })
}

/// The percentile interval of `draws` around `value`.
fn interval(value: f64, draws: &mut [f64], level: f64) -> Difference {
    draws.sort_by(f64::total_cmp);
    // No draw (every resample without a decisive row): the point itself.
    let last = draws.len().saturating_sub(1);
    let at = |q: f64| {
        let i = (q * last as f64).round() as usize;
        draws.get(i).copied().unwrap_or(value)
    };
    let tail = (1.0 - level) / 2.0;
    Difference {
        value,
        low: at(tail),
        high: at(1.0 - tail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::GroupedMetrics;

    /// Games of `len` rows labelled by `won`, predicted by `p(game, row)`.
    fn games(won: &[bool], len: u32, p: impl Fn(usize, u32) -> f32) -> GroupedMetrics {
        let mut m = GroupedMetrics::default();
        for (g, &w) in won.iter().enumerate() {
            for r in 0..len {
                let id = format!("game {g:02}");
                m.push_in_game(&id, p(g, r), if w { 1.0 } else { 0.0 }, r, len - 1 - r);
            }
        }
        m
    }

    #[test]
    fn rows_count_under_their_games() {
        let m = games(&[true, false, true], 4, |_, _| 0.7);
        assert_eq!(m.by_game.len(), 3);
        assert!(m.by_game.values().all(|g| g.count == 4));
        assert_eq!(m.by_game["game 01"].correct, 0.0);
        assert_eq!(m.by_game["game 02"].correct, 4.0);
        assert_eq!(m.overall.count, 12);
    }

    /// An evaluator right on every game beats one right on half of them
    /// with an interval away from 0; two that differ on one game of 40
    /// are not told apart; the interval is the same for the same seed.
    #[test]
    fn the_interval_separates_a_real_gap_and_not_a_fluke() {
        let won: Vec<bool> = (0..40).map(|g| g % 3 != 0).collect();
        let right = |g: usize| if won[g] { 0.9 } else { 0.1 };
        let good = games(&won, 10, |g, _| right(g));
        let half = games(
            &won,
            10,
            |g, _| if g % 2 == 0 { right(g) } else { 1.0 - right(g) },
        );
        let d = paired_by_game(&good.by_game, &half.by_game, 1000, 1).unwrap();
        assert_eq!(d.games, 40);
        assert!((d.accuracy.value - 0.5).abs() < 1e-9, "{d:?}");
        assert!(d.accuracy.low > 0.3 && d.accuracy.high <= 0.7, "{d:?}");
        assert!(d.mse.high < 0.0, "{d:?}");
        let one_off = games(
            &won,
            10,
            |g, _| if g == 7 { 1.0 - right(g) } else { right(g) },
        );
        let d = paired_by_game(&good.by_game, &one_off.by_game, 1000, 1).unwrap();
        assert!(d.accuracy.low <= 0.0 && d.accuracy.high > 0.0, "{d:?}");
        assert_eq!(
            paired_by_game(&good.by_game, &one_off.by_game, 1000, 1),
            Some(d)
        );
        let mut fewer = good.by_game.clone();
        fewer.remove("game 03");
        assert!(paired_by_game(&good.by_game, &fewer, 10, 1).is_none());
        // No draws at all: the interval is the point.
        let d = interval(0.25, &mut [], 0.95);
        assert_eq!((d.low, d.value, d.high), (0.25, 0.25, 0.25));
    }
}
