//! `amazons-territory`: the representation Fugers' thesis leaves to future
//! work (section 6.2: "including useful features ... may be beneficial",
//! territory first among them, at the price of a flood fill per position).
//!
//! Planes (`[6, N, N]`, absolute like the thesis' three: White, the first
//! player, is positive):
//!
//! | plane | value |
//! | --- | --- |
//! | 0-3 | the BITS fields: black amazon, white amazon, arrow, empty |
//! | 4 | queen-move territory of an empty square: +1 White reaches it first, -1 Black, 0 tie or nobody |
//! | 5 | the same by king moves |
//!
//! Globals (9): the thesis' three (arrows, Black's and White's total
//! mobility, as in the other encoders), then Lieberum's six features from
//! White's point of view ([`LieberumFeatures`]: `t1`, `t2`, `c1`, `c2`,
//! mobility, distribution), the first four divided by
//! [`SQUARES_PER_UNIT`] so that a clear advantage of ten squares reads 1.
//! A network on these can learn its own weighting of what the hand
//! evaluator weighs by a fixed formula.

use super::{AmazonsEncoder, AmazonsRepr, Encoder, Perspective, Symmetries};
use crate::game::amazons::{Cell, Reach};
use crate::game::amazons_features::{AmazonsDistances, LieberumFeatures};
use crate::game::Amazons;

/// Squares that make one unit of the territory and closeness globals.
pub const SQUARES_PER_UNIT: f32 = 10.0;

const BITS_PLANES: usize = 4;
const THESIS_GLOBALS: usize = 3;

/// The territory encoder for one board size.
pub struct AmazonsTerritoryEncoder {
    bits: AmazonsEncoder,
    size: usize,
}

impl AmazonsTerritoryEncoder {
    pub const NAME: &'static str = "amazons-territory";

    pub fn new(size: usize) -> AmazonsTerritoryEncoder {
        AmazonsTerritoryEncoder {
            bits: AmazonsEncoder::new(AmazonsRepr::Bits, size),
            size,
        }
    }
}

/// The six Lieberum globals in the order the encoder writes them.
pub fn lieberum_globals(f: &LieberumFeatures) -> [f32; 6] {
    [
        f.t1 / SQUARES_PER_UNIT,
        f.t2 / SQUARES_PER_UNIT,
        f.c1 / SQUARES_PER_UNIT,
        f.c2 / SQUARES_PER_UNIT,
        f.mobility,
        f.distribution,
    ]
}

impl Encoder<Amazons> for AmazonsTerritoryEncoder {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn shape(&self) -> [usize; 3] {
        [BITS_PLANES + 2, self.size, self.size]
    }

    fn perspective(&self) -> Perspective {
        Perspective::FirstPlayer
    }

    fn globals_len(&self) -> usize {
        THESIS_GLOBALS + 6
    }

    /// Territory, closeness, mobility and the amazons' spread do not depend
    /// on the board's orientation.
    fn symmetries(&self) -> Symmetries {
        Symmetries::Dihedral
    }

    fn plane_names(&self) -> Vec<String> {
        [
            "black amazon",
            "white amazon",
            "arrow",
            "empty",
            "queen territory",
            "king territory",
        ]
        .map(String::from)
        .into()
    }

    fn encode(&self, state: &Amazons, planes: &mut [i8], globals: &mut [f32]) {
        let cells = self.size * self.size;
        self.bits.encode(
            state,
            &mut planes[..BITS_PLANES * cells],
            &mut globals[..THESIS_GLOBALS],
        );
        let d = AmazonsDistances::of(state);
        let (queen, king) = planes[BITS_PLANES * cells..].split_at_mut(cells);
        for c in 0..cells {
            let empty = state.cell(c) == Cell::Empty;
            queen[c] = if empty {
                d.owner(Reach::Queen, c) as i8
            } else {
                0
            };
            king[c] = if empty {
                d.owner(Reach::King, c) as i8
            } else {
                0
            };
        }
        let f = LieberumFeatures::from_distances(state, &d);
        globals[THESIS_GLOBALS..].copy_from_slice(&lieberum_globals(&f));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Game, Side};
    use crate::infer::hand::{AmazonsLieberum, AmazonsMinDist, HandEvaluator};
    use crate::util::SeededRng;
    use rand::SeedableRng;

    fn encode(g: &Amazons) -> (Vec<i8>, Vec<f32>) {
        let enc = AmazonsTerritoryEncoder::new(g.size());
        let mut p = vec![9i8; enc.plane_len()];
        let mut gl = vec![f32::NAN; enc.globals_len()];
        enc.encode(g, &mut p, &mut gl);
        (p, gl)
    }

    /// Every fifth position of 20 random 6x6 games.
    fn positions() -> Vec<Amazons> {
        let mut rng = SeededRng::seed_from_u64(7);
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        for _ in 0..20 {
            let mut g = Amazons::with_size(6).unwrap();
            for ply in 0.. {
                if ply % 5 == 0 {
                    out.push(g);
                }
                match g.random_move(&mut rng, &mut scratch) {
                    Some(m) => g.play(m),
                    None => break,
                }
            }
        }
        out
    }

    #[test]
    fn the_queen_plane_is_the_minimal_distance_territory() {
        for g in positions() {
            let (p, gl) = encode(&g);
            let queen: i32 = p[4 * 36..5 * 36].iter().map(|&v| v as i32).sum();
            let mindist = g.side_to_move().sign() * AmazonsMinDist.value(&g);
            assert_eq!(queen as f32, mindist, "{}", g.to_text());
            assert!((gl[3] * SQUARES_PER_UNIT - mindist).abs() < 1e-4);
            // The BITS fields and the thesis' globals are those of BITS.
            let mut bits = vec![0i8; 4 * 36];
            let mut bits_gl = vec![0f32; 3];
            AmazonsEncoder::new(AmazonsRepr::Bits, 6).encode(&g, &mut bits, &mut bits_gl);
            assert_eq!(&p[..4 * 36], &bits[..]);
            assert_eq!(&gl[..3], &bits_gl[..]);
            // Only empty squares carry territory.
            for c in 0..36 {
                if p[3 * 36 + c] == 0 {
                    assert_eq!((p[4 * 36 + c], p[5 * 36 + c]), (0, 0));
                }
            }
        }
    }

    #[test]
    fn lieberum_reads_back_from_the_globals() {
        for g in positions() {
            let (_, gl) = encode(&g);
            let f = AmazonsLieberum.features(&g);
            assert_eq!(&gl[3..], &lieberum_globals(&f)[..]);
            let p = f.phase;
            let q = 1.0 - p;
            let s = SQUARES_PER_UNIT;
            let from_globals = (0.3 + 0.7 * p) * gl[3] * s
                + 0.3 * q * gl[4] * s
                + 0.4 * q * gl[5] * s
                + 0.4 * q * gl[6] * s
                + (1.0 - 0.5 * p) * gl[7]
                + 0.3 * q * gl[8];
            let want = AmazonsLieberum.score_first(&g);
            assert!((from_globals - want).abs() < 1e-3 * want.abs().max(1.0));
        }
    }

    #[test]
    fn swapping_the_colours_negates_the_territory() {
        // White walled into the top-left corner; the mirror image has Black
        // there (the same arrows, the amazons' colours swapped, Black to
        // move after the same number of plies is not needed: the planes
        // are absolute).
        let g = Amazons::from_text("X.#.../..#.../..#.../###.../....../.....O").unwrap();
        let h = Amazons::from_text("O.#.../..#.../..#.../###.../....../.....X").unwrap();
        let (pg, gg) = encode(&g);
        let (ph, gh) = encode(&h);
        for c in 4 * 36..6 * 36 {
            assert_eq!(pg[c], -ph[c]);
        }
        assert_eq!(gg[3], -gh[3]);
        assert_eq!(g.side_to_move(), Side::First);
        // X owns its 5 squares, O the other 23 of the empty ones.
        assert_eq!(pg[4 * 36..5 * 36].iter().filter(|&&v| v == 1).count(), 5);
        assert_eq!(pg[4 * 36..5 * 36].iter().filter(|&&v| v == -1).count(), 23);
    }
}
