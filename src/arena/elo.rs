//! Elo difference from a match score, with a 95% interval from the
//! per-game score variance (normal approximation).

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct EloEstimate {
    /// Elo difference of A over B; infinite when A won or lost every game.
    pub elo: f64,
    pub lo: f64,
    pub hi: f64,
}

/// Elo difference for an expected score `s` in [0, 1].
pub fn elo_from_score(s: f64) -> f64 {
    if s <= 0.0 {
        f64::NEG_INFINITY
    } else if s >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / s - 1.0).log10()
    }
}

impl EloEstimate {
    pub fn from_wdl(wins: u64, draws: u64, losses: u64) -> Option<EloEstimate> {
        let n = (wins + draws + losses) as f64;
        if n == 0.0 {
            return None;
        }
        let s = (wins as f64 + 0.5 * draws as f64) / n;
        let var = (wins as f64 * (1.0 - s).powi(2)
            + draws as f64 * (0.5 - s).powi(2)
            + losses as f64 * s.powi(2))
            / n;
        let se = (var / n).sqrt();
        Some(EloEstimate {
            elo: elo_from_score(s),
            lo: elo_from_score(s - 1.96 * se),
            hi: elo_from_score(s + 1.96 * se),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_points() {
        assert_eq!(elo_from_score(0.5), 0.0);
        assert!((elo_from_score(0.75) - 190.85).abs() < 0.01);
        assert!((elo_from_score(0.25) + 190.85).abs() < 0.01);
        let e = EloEstimate::from_wdl(60, 0, 40).unwrap();
        assert!(e.lo < e.elo && e.elo < e.hi);
        // 100 games at 60%: se = sqrt(.24/100) = .049 -> score interval .504..0.696
        assert!((e.lo - elo_from_score(0.6 - 1.96 * 0.04899)).abs() < 0.1);
        let all = EloEstimate::from_wdl(10, 0, 0).unwrap();
        assert!(all.elo.is_infinite() && all.lo.is_infinite());
    }

    #[test]
    fn interval_narrows_with_more_games() {
        let a = EloEstimate::from_wdl(60, 20, 20).unwrap();
        let b = EloEstimate::from_wdl(600, 200, 200).unwrap();
        assert!((b.hi - b.lo) < (a.hi - a.lo) / 3.0);
        assert!((a.elo - b.elo).abs() < 1e-9);
    }
}
