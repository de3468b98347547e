//! The three Amazons board representations of Fugers (2017, table 2), each
//! with its three global features: the number of plies (= arrows on the
//! board), Black's total mobility and White's total mobility.
//!
//! | field | `amazons-units` | `amazons-mobility` | `amazons-bits` |
//! | --- | --- | --- | --- |
//! | black amazon | (-1, 1) | (-m, 1) | (1, 0, 0, 0) |
//! | white amazon | (1, 1) | (m, 1) | (0, 1, 0, 0) |
//! | arrow (barricade) | (0, 1) | (0, 1) | (0, 0, 1, 0) |
//! | empty | (0, 0) | (0, 0) | (0, 0, 0, 1) |
//!
//! `m` is the amazon's mobility (squares it reaches in one queen move). The
//! integers of a field go to consecutive planes (`[2 or 4, N, N]`). As in the
//! thesis the encoding is absolute: White (the first player) is positive,
//! so values are from White's point of view.

use super::{Encoder, Perspective, Symmetries};
use crate::game::amazons::Cell;
use crate::game::{Amazons, Game, Side};

/// Which of the thesis' representations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AmazonsRepr {
    Units,
    Mobility,
    Bits,
}

impl AmazonsRepr {
    pub fn name(self) -> &'static str {
        match self {
            AmazonsRepr::Units => "amazons-units",
            AmazonsRepr::Mobility => "amazons-mobility",
            AmazonsRepr::Bits => "amazons-bits",
        }
    }

    fn planes(self) -> usize {
        match self {
            AmazonsRepr::Bits => 4,
            _ => 2,
        }
    }
}

/// An Amazons encoder for one board size.
pub struct AmazonsEncoder {
    repr: AmazonsRepr,
    size: usize,
}

impl AmazonsEncoder {
    pub fn new(repr: AmazonsRepr, size: usize) -> AmazonsEncoder {
        AmazonsEncoder { repr, size }
    }
}

impl Encoder<Amazons> for AmazonsEncoder {
    fn name(&self) -> &'static str {
        self.repr.name()
    }

    fn shape(&self) -> [usize; 3] {
        [self.repr.planes(), self.size, self.size]
    }

    fn perspective(&self) -> Perspective {
        Perspective::FirstPlayer
    }

    fn globals_len(&self) -> usize {
        3
    }

    /// Amazons' moves are the same in every direction, and the globals
    /// are counts.
    fn symmetries(&self) -> Symmetries {
        Symmetries::Dihedral
    }

    fn encode(&self, state: &Amazons, planes: &mut [i8], globals: &mut [f32]) {
        debug_assert_eq!(
            state.size(),
            self.size,
            "encoder made for another board size"
        );
        let cells = self.size * self.size;
        planes[..self.repr.planes() * cells].fill(0);
        let mut mobility = [0u32; 2];
        let mut arrows = 0u32;
        for i in 0..cells {
            let cell = state.cell(i);
            let m = match cell {
                Cell::Amazon(side) => {
                    let m = state.mobility(i as u8);
                    mobility[side.index()] += m;
                    m
                }
                Cell::Arrow => {
                    arrows += 1;
                    0
                }
                Cell::Empty => 0,
            };
            let sign = |side: Side| if side == Side::First { 1i8 } else { -1 };
            match self.repr {
                AmazonsRepr::Units | AmazonsRepr::Mobility => {
                    if let Cell::Amazon(side) = cell {
                        let v = if self.repr == AmazonsRepr::Units {
                            1
                        } else {
                            m.min(i8::MAX as u32) as i8
                        };
                        planes[i] = sign(side) * v;
                    }
                    planes[cells + i] = (cell != Cell::Empty) as i8;
                }
                AmazonsRepr::Bits => {
                    let plane = match cell {
                        Cell::Amazon(Side::Second) => 0,
                        Cell::Amazon(Side::First) => 1,
                        Cell::Arrow => 2,
                        Cell::Empty => 3,
                    };
                    planes[plane * cells + i] = 1;
                }
            }
        }
        globals[0] = arrows as f32;
        globals[1] = mobility[Side::Second.index()] as f32;
        globals[2] = mobility[Side::First.index()] as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(repr: AmazonsRepr, g: &Amazons) -> (Vec<i8>, Vec<f32>) {
        let enc = AmazonsEncoder::new(repr, g.size());
        let mut p = vec![9i8; enc.plane_len()];
        let mut gl = vec![0f32; 3];
        enc.encode(g, &mut p, &mut gl);
        (p, gl)
    }

    #[test]
    fn the_opening_matches_table_2() {
        let g = Amazons::new();
        let (units, gl) = encode(AmazonsRepr::Units, &g);
        assert_eq!(units.len(), 200);
        // Four white (+1) and four black (-1) amazons, eight barricade flags.
        assert_eq!(units[..100].iter().filter(|&&v| v == 1).count(), 4);
        assert_eq!(units[..100].iter().filter(|&&v| v == -1).count(), 4);
        assert_eq!(units[100..].iter().map(|&v| v as i32).sum::<i32>(), 8);
        // The thesis: mobility 20 per amazon in the opening; no arrows yet.
        assert_eq!(gl, vec![0.0, 80.0, 80.0]);
        let (mob, _) = encode(AmazonsRepr::Mobility, &g);
        assert_eq!(mob[..100].iter().filter(|&&v| v == 20).count(), 4);
        assert_eq!(mob[..100].iter().filter(|&&v| v == -20).count(), 4);
        let (bits, _) = encode(AmazonsRepr::Bits, &g);
        assert_eq!(bits.len(), 400);
        let per_plane: Vec<i32> = (0..4)
            .map(|p| bits[p * 100..(p + 1) * 100].iter().map(|&v| v as i32).sum())
            .collect();
        assert_eq!(per_plane, vec![4, 4, 0, 92]);
    }

    #[test]
    fn arrows_count_as_plies_and_barricades() {
        let mut g = Amazons::with_size(6).unwrap();
        let mut moves = Vec::new();
        for k in 0..3 {
            g.legal_moves(&mut moves);
            g.play(moves[k * 7 % moves.len()]);
        }
        let (units, gl) = encode(AmazonsRepr::Units, &g);
        assert_eq!(gl[0], 3.0);
        assert_eq!(units[36..].iter().map(|&v| v as i32).sum::<i32>(), 8 + 3);
        let (bits, _) = encode(AmazonsRepr::Bits, &g);
        assert_eq!(bits[72..108].iter().map(|&v| v as i32).sum::<i32>(), 3);
        // Every field is exactly one of the four.
        for i in 0..36 {
            assert_eq!((0..4).map(|p| bits[p * 36 + i] as i32).sum::<i32>(), 1);
        }
    }
}
