//! Two hand-written Amazons evaluators.
//!
//! Both compute a score for White (`X`, the first player) that is
//! antisymmetric under swapping the colours, and return it signed for the
//! side to move. Neither has a tempo term: a square both sides reach equally
//! fast counts for nobody, so a position and its colour-swapped mirror get
//! opposite values.
//!
//! * [`AmazonsMinDist`], minimal distance: for every empty square, the
//!   fewest queen moves (through empty squares) each side needs to reach it;
//!   the square belongs to the nearer side (ties and squares neither side
//!   reaches belong to nobody). Value = own squares minus the opponent's.
//!
//! * [`AmazonsLieberum`], after J. Lieberum, "An evaluation function for the
//!   game of Amazons" (Theoretical Computer Science 349, 2005). With queen
//!   distances `Q` and king distances `K` of White (`w`) and Black (`b`)
//!   over the empty squares, `Δ(x, y)` = +1 if `x < y`, -1 if `x > y`, 0 if
//!   equal, and the phase `p = arrows / (n² - 8)` (0 at the start, 1 when
//!   the board is full; clamped to 1):
//!
//!   | feature | definition | weight |
//!   | --- | --- | --- |
//!   | `t1` queen territory | `Σ Δ(Qw, Qb)` | `0.3 + 0.7 p` |
//!   | `t2` king territory | `Σ Δ(Kw, Kb)` | `0.3 (1 - p)` |
//!   | `c1` queen closeness | `2 Σ (2^-Qw - 2^-Qb)` | `0.4 (1 - p)` |
//!   | `c2` king closeness | `Σ clamp((Kb - Kw) / 6, -1, 1)` | `0.4 (1 - p)` |
//!   | `m` mobility | `Σ_white φ(mob) - Σ_black φ(mob)` | `1 - 0.5 p` |
//!   | `d` distribution | `Σ_pairs cheb(a, a') / n`, White minus Black | `0.3 (1 - p)` |
//!
//!   `mob` is the number of empty squares an amazon reaches in one queen
//!   move; `φ(0) = -10` (a shut-in amazon is heavily penalised) and
//!   `φ(m) = √m` otherwise. `cheb` is the king distance between two amazons
//!   of one side: spread-out amazons claim more of the board. Territory
//!   (`t1`) grows in weight as the board fills, when it becomes the exact
//!   count of squares each side can still fill; the king-distance and
//!   closeness terms, which judge influence, matter most in the opening.

use super::HandEvaluator;
use crate::game::amazons::Reach;
use crate::game::amazons_features::{delta, empty_cells, LieberumFeatures};
use crate::game::{Amazons, Game, Side};

/// Minimal-distance (queen-move territory) evaluator.
#[derive(Clone, Copy, Debug, Default)]
pub struct AmazonsMinDist;

/// Lieberum-style evaluator: territory, closeness, mobility, distribution,
/// weighted by the phase of the game.
#[derive(Clone, Copy, Debug, Default)]
pub struct AmazonsLieberum;

impl AmazonsMinDist {
    /// White's territory minus Black's.
    pub fn score_first(&self, g: &Amazons) -> f32 {
        let w = g.distances(Side::First, Reach::Queen);
        let b = g.distances(Side::Second, Reach::Queen);
        empty_cells(g).map(|c| delta(w[c], b[c])).sum()
    }
}

impl HandEvaluator<Amazons> for AmazonsMinDist {
    fn name(&self) -> &str {
        "amazons-mindist"
    }

    fn value(&self, state: &Amazons) -> f32 {
        state.side_to_move().sign() * self.score_first(state)
    }
}

impl AmazonsLieberum {
    pub fn features(&self, g: &Amazons) -> LieberumFeatures {
        LieberumFeatures::of(g)
    }

    /// The weighted sum for White.
    pub fn score_first(&self, g: &Amazons) -> f32 {
        let f = self.features(g);
        let p = f.phase;
        let q = 1.0 - p;
        (0.3 + 0.7 * p) * f.t1
            + 0.3 * q * f.t2
            + 0.4 * q * f.c1
            + 0.4 * q * f.c2
            + (1.0 - 0.5 * p) * f.mobility
            + 0.3 * q * f.distribution
    }
}

impl HandEvaluator<Amazons> for AmazonsLieberum {
    fn name(&self) -> &str {
        "amazons-lieberum"
    }

    fn value(&self, state: &Amazons) -> f32 {
        state.side_to_move().sign() * self.score_first(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// X walled into the top-left corner with 5 squares, O owns the rest.
    const WALLED: &str = "X.#.../..#.../..#.../###.../....../.....O";

    #[test]
    fn mindist_hand_computed() {
        let g = Amazons::from_text(WALLED).unwrap();
        assert_eq!(g.side_to_move(), Side::First);
        // X: a6 region has 5 empty squares; O: 36 - 6 arrows - 6 - 1 = 23.
        assert_eq!(AmazonsMinDist.value(&g), 5.0 - 23.0);
        // One more arrow in O's region: O to move, 22 against 5.
        let g = Amazons::from_text("X.#..#/..#.../..#.../###.../....../.....O").unwrap();
        assert_eq!(g.side_to_move(), Side::Second);
        assert_eq!(AmazonsMinDist.value(&g), 17.0);
    }

    #[test]
    fn lieberum_hand_computed() {
        // One row left: X . . # . O, everything else burnt (31 arrows):
        // O to move, phase 1, t1 = 2 - 1, mobility sqrt(2) - sqrt(1).
        let g = Amazons::from_text("X..#.O/######/######/######/######/######").unwrap();
        assert_eq!(g.side_to_move(), Side::Second);
        assert_eq!(AmazonsMinDist.value(&g), -1.0);
        let want = -(1.0 + 0.5 * (2f32.sqrt() - 1.0));
        assert!((AmazonsLieberum.value(&g) - want).abs() < 1e-5);
    }
}
