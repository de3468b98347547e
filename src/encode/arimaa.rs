//! Arimaa encoders.

use super::{Encoder, Perspective};
use crate::game::arimaa::{bitboard::Squares, Arimaa, PieceType, Position};
use crate::game::Side;

/// `arimaa-6x8x8`: one plane per piece type (rabbit, cat, dog, horse, camel,
/// elephant), +1 where the side to move has that piece, -1 where the
/// opponent has it, 0 elsewhere (Zaffetti's input). Row 0 is the side to
/// move's goal rank, so the board is mirrored top to bottom when silver is
/// to move: the side to move always plays "up" and gold and silver
/// positions that are mirror images encode the same. Column 0 is file a.
pub struct ArimaaTypePlanes;

impl ArimaaTypePlanes {
    pub const NAME: &'static str = "arimaa-6x8x8";
}

impl Encoder<Arimaa> for ArimaaTypePlanes {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn shape(&self) -> [usize; 3] {
        [6, 8, 8]
    }

    fn perspective(&self) -> Perspective {
        Perspective::SideToMove
    }

    fn plane_names(&self) -> Vec<String> {
        ["rabbit", "cat", "dog", "horse", "camel", "elephant"]
            .map(String::from)
            .to_vec()
    }

    /// Files a-h; ranks from the side to move's view, its goal rank (8 for
    /// gold) in row 0.
    fn axis_labels(&self) -> (Vec<String>, Vec<String>) {
        (
            "abcdefgh".chars().map(String::from).collect(),
            (1..=8).rev().map(|r| r.to_string()).collect(),
        )
    }

    fn encode(&self, state: &Arimaa, planes: &mut [i8], _globals: &mut [f32]) {
        type_planes(state.position(), planes);
    }
}

/// The row of `sq` in the frame of the side to move `me`: row 0 is its
/// goal rank (rank 8 for gold, rank 1 for silver).
pub(crate) fn row_for(me: Side, sq: u8) -> usize {
    let rank = (sq / 8) as usize;
    match me {
        Side::First => 7 - rank,
        Side::Second => rank,
    }
}

/// `arimaa-6x8x8`'s planes of `pos` (its side to move's frame) into the
/// first `6 * 64` values of `planes`.
pub(crate) fn type_planes(pos: &Position, planes: &mut [i8]) {
    planes[..6 * 64].fill(0);
    let me = pos.side_to_move();
    for side in [Side::First, Side::Second] {
        let value = if side == me { 1 } else { -1 };
        for kind in PieceType::ALL {
            for sq in Squares(pos.piece_bits(side, kind)) {
                let file = (sq % 8) as usize;
                planes[kind as usize * 64 + row_for(me, sq) * 8 + file] = value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::arimaa::notation::parse_position_line;

    fn encode(line: &str) -> Vec<i8> {
        let (pos, _) = parse_position_line(line).unwrap();
        let g = Arimaa::from_position(pos, 2);
        let mut planes = vec![7i8; 6 * 64];
        ArimaaTypePlanes.encode(&g, &mut planes, &mut []);
        planes
    }

    const OPENING: &str = "g rrrrrrrrdhcemchd................................DHCMECHDRRRRRRRR";

    #[test]
    fn own_pieces_are_plus_one_and_the_goal_is_row_zero() {
        let p = encode(OPENING);
        // Gold's rabbits on rank 1 are row 7 for gold to move.
        assert!((0..8).all(|f| p[7 * 8 + f] == 1));
        // Silver's rabbits on rank 8 are row 0, negative.
        assert!((0..8).all(|f| p[f] == -1));
        // Gold elephant e2 -> plane 5, row 6, column 4.
        assert_eq!(p[5 * 64 + 6 * 8 + 4], 1);
        assert_eq!(p.iter().filter(|&&v| v == 1).count(), 16);
        assert_eq!(p.iter().filter(|&&v| v == -1).count(), 16);
        assert!(p.iter().all(|&v| (-1..=1).contains(&v)));
    }

    #[test]
    fn mirrored_positions_with_colours_swapped_encode_the_same() {
        // A position, and the same one flipped top to bottom with colours swapped.
        let board = "r.r.e..rdh.c.m.h........D..R..x....M....x.....HCE....RRRd..R...R";
        let line = format!("g {board}");
        let rows: Vec<String> = (0..8)
            .rev()
            .map(|r| board[r * 8..r * 8 + 8].to_string())
            .collect();
        let swapped: String = rows
            .concat()
            .chars()
            .map(|c| match c {
                'x' => '.',
                c if c.is_ascii_uppercase() => c.to_ascii_lowercase(),
                c => c.to_ascii_uppercase(),
            })
            .collect();
        let mirror = format!("s {swapped}");
        assert_eq!(encode(&line), encode(&mirror));
        assert_ne!(encode(&line), encode(&format!("s {board}")));
    }
}
