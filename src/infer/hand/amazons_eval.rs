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
use crate::game::amazons::{Cell, Reach, UNREACHABLE};
use crate::game::{Amazons, Game, Side};

/// Minimal-distance (queen-move territory) evaluator.
#[derive(Clone, Copy, Debug, Default)]
pub struct AmazonsMinDist;

/// Lieberum-style evaluator: territory, closeness, mobility, distribution,
/// weighted by the phase of the game.
#[derive(Clone, Copy, Debug, Default)]
pub struct AmazonsLieberum;

fn empty_cells(g: &Amazons) -> impl Iterator<Item = usize> + '_ {
    let n = g.size();
    (0..n * n).filter(move |&c| g.cell(c) == Cell::Empty)
}

fn delta(own: u8, opp: u8) -> f32 {
    match own.cmp(&opp) {
        std::cmp::Ordering::Less => 1.0,
        std::cmp::Ordering::Greater => -1.0,
        std::cmp::Ordering::Equal => 0.0,
    }
}

fn pow2neg(d: u8) -> f32 {
    if d == UNREACHABLE {
        0.0
    } else {
        (-(d as f32)).exp2()
    }
}

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

/// The features of [`AmazonsLieberum`], from White's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LieberumFeatures {
    pub phase: f32,
    pub t1: f32,
    pub t2: f32,
    pub c1: f32,
    pub c2: f32,
    pub mobility: f32,
    pub distribution: f32,
}

/// Penalty for an amazon that cannot move.
pub const IMMOBILE_PENALTY: f32 = 10.0;

/// Queen and king distances of both sides to every square (see
/// [`Amazons::distances`]), computed once for whoever needs several of them.
pub struct AmazonsDistances {
    pub queen: [Vec<u8>; 2],
    pub king: [Vec<u8>; 2],
}

impl AmazonsDistances {
    pub fn of(g: &Amazons) -> AmazonsDistances {
        let both = |reach| {
            [
                g.distances(Side::First, reach),
                g.distances(Side::Second, reach),
            ]
        };
        AmazonsDistances {
            queen: both(Reach::Queen),
            king: both(Reach::King),
        }
    }

    /// +1 where White reaches the square first by `reach` moves, -1 where
    /// Black does, 0 on a tie or where neither does.
    pub fn owner(&self, reach: Reach, cell: usize) -> f32 {
        let [w, b] = match reach {
            Reach::Queen => &self.queen,
            Reach::King => &self.king,
        };
        delta(w[cell], b[cell])
    }
}

impl AmazonsLieberum {
    pub fn features(&self, g: &Amazons) -> LieberumFeatures {
        self.features_from(g, &AmazonsDistances::of(g))
    }

    /// [`Self::features`] from distances already computed.
    pub fn features_from(&self, g: &Amazons, d: &AmazonsDistances) -> LieberumFeatures {
        let n = g.size();
        let [qw, qb] = &d.queen;
        let [kw, kb] = &d.king;
        let mut f = LieberumFeatures {
            phase: (g.arrow_count() as f32 / (n * n - 8) as f32).min(1.0),
            ..Default::default()
        };
        for c in empty_cells(g) {
            f.t1 += delta(qw[c], qb[c]);
            f.t2 += delta(kw[c], kb[c]);
            f.c1 += 2.0 * (pow2neg(qw[c]) - pow2neg(qb[c]));
            f.c2 += ((kb[c] as f32 - kw[c] as f32) / 6.0).clamp(-1.0, 1.0);
        }
        let phi = |m: u32| {
            if m == 0 {
                -IMMOBILE_PENALTY
            } else {
                (m as f32).sqrt()
            }
        };
        for side in [Side::First, Side::Second] {
            let cells = g.amazon_cells(side);
            let mob: f32 = cells.iter().map(|&c| phi(g.mobility(c))).sum();
            let mut spread = 0.0;
            for (i, &a) in cells.iter().enumerate() {
                for &b in &cells[i + 1..] {
                    let (ra, ca) = (a as usize / n, a as usize % n);
                    let (rb, cb) = (b as usize / n, b as usize % n);
                    spread += ra.abs_diff(rb).max(ca.abs_diff(cb)) as f32 / n as f32;
                }
            }
            let s = side.sign();
            f.mobility += s * mob;
            f.distribution += s * spread;
        }
        f
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
