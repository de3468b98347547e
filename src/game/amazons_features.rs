//! The territory features of an Amazons position, after J. Lieberum, "An
//! evaluation function for the game of Amazons" (Theoretical Computer
//! Science 349, 2005): what the Lieberum evaluator weighs
//! (`infer::hand::AmazonsLieberum`) and the territory encoder's globals
//! (`encode::amazons_territory`) read, computed here beside the rules
//! they count with.
//!
//! With queen distances `Q` and king distances `K` of White (`w`) and Black
//! (`b`) over the empty squares, `Δ(x, y)` = +1 if `x < y`, -1 if `x > y`,
//! 0 if equal, and the phase `p = arrows / (n² - 8)` (clamped to 1):
//! `t1 = Σ Δ(Qw, Qb)`, `t2 = Σ Δ(Kw, Kb)`, `c1 = 2 Σ (2^-Qw - 2^-Qb)`,
//! `c2 = Σ clamp((Kb - Kw) / 6, -1, 1)`, mobility `Σ_white φ(mob) -
//! Σ_black φ(mob)` (`φ(0) = -10`, else `√mob`, `mob` the empty squares an
//! amazon reaches in one queen move) and distribution `Σ_pairs cheb(a, a')
//! / n`, White minus Black.

use super::amazons::{Amazons, Cell, Reach, UNREACHABLE};
use super::{Game, Side};

/// The empty squares of `g`.
pub(crate) fn empty_cells(g: &Amazons) -> impl Iterator<Item = usize> + '_ {
    let n = g.size();
    (0..n * n).filter(move |&c| g.cell(c) == Cell::Empty)
}

/// +1 if `own < opp`, -1 if `own > opp`, 0 if equal.
pub(crate) fn delta(own: u8, opp: u8) -> f32 {
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

/// The features of the Lieberum evaluator, from White's point of view.
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

impl LieberumFeatures {
    /// The features of `g`.
    pub fn of(g: &Amazons) -> LieberumFeatures {
        Self::from_distances(g, &AmazonsDistances::of(g))
    }

    /// [`Self::of`] from distances already computed.
    pub fn from_distances(g: &Amazons, d: &AmazonsDistances) -> LieberumFeatures {
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
}
