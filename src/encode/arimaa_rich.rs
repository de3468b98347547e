//! `arimaa-20x8x8`: the richer Arimaa encoder for deep nets.

use super::{Encoder, Perspective};
use crate::game::arimaa::bitboard::{neighbors, Bitboard, Squares, TRAPS};
use crate::game::arimaa::{Arimaa, PieceType};
use crate::game::{Game, Side};

/// Planes of [`ArimaaRichPlanes`], in order.
pub const RICH_PLANES: [&str; 20] = [
    "own rabbit",
    "own cat",
    "own dog",
    "own horse",
    "own camel",
    "own elephant",
    "opponent rabbit",
    "opponent cat",
    "opponent dog",
    "opponent horse",
    "opponent camel",
    "opponent elephant",
    "empty",
    "trap",
    "own frozen",
    "opponent frozen",
    "own piece next to a stronger opponent piece",
    "opponent piece next to a stronger own piece",
    "own pieces next to this trap (0-4, on trap squares)",
    "opponent pieces next to this trap (0-4, on trap squares)",
];

/// `arimaa-20x8x8`: separate 0/1 planes for the side to move's pieces and
/// the opponent's (one per type), empty squares, the traps, frozen pieces
/// of each side, pieces next to a stronger enemy (the ones that can be
/// pushed, pulled or frozen), and on each trap square the number of each
/// side's pieces guarding it. What a convolution would have to learn from
/// `arimaa-6x8x8` over several layers (freezing, dominance, trap safety) is
/// given directly. Same orientation as `arimaa-6x8x8`: row 0 is the side to
/// move's goal rank (the board is mirrored when silver is to move), column
/// 0 is file a. Plane names in [`RICH_PLANES`].
pub struct ArimaaRichPlanes;

impl ArimaaRichPlanes {
    pub const NAME: &'static str = "arimaa-20x8x8";
}

const PLANES: usize = RICH_PLANES.len();

/// Squares next to a piece of `them` stronger than the piece of `me` there.
pub(super) fn dominated(pieces: &[[Bitboard; 6]; 2], me: usize, them: usize) -> Bitboard {
    let mut stronger: Bitboard = 0;
    let mut out: Bitboard = 0;
    for k in (0..6).rev() {
        out |= pieces[me][k] & neighbors(stronger);
        stronger |= pieces[them][k];
    }
    out
}

impl Encoder<Arimaa> for ArimaaRichPlanes {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn shape(&self) -> [usize; 3] {
        [PLANES, 8, 8]
    }

    fn perspective(&self) -> Perspective {
        Perspective::SideToMove
    }

    fn encode(&self, state: &Arimaa, planes: &mut [i8], _globals: &mut [f32]) {
        let planes = &mut planes[..PLANES * 64];
        planes.fill(0);
        let pos = state.position();
        let me = state.side_to_move();
        let them = me.other();
        // Gold's goal is rank 8, silver's rank 1: row 0 is the mover's goal.
        let cell = |sq: u8| -> usize {
            let (rank, file) = ((sq / 8) as usize, (sq % 8) as usize);
            let row = match me {
                Side::First => 7 - rank,
                Side::Second => rank,
            };
            row * 8 + file
        };
        let mut set = |plane: usize, bits: Bitboard, value: i8| {
            for sq in Squares(bits) {
                planes[plane * 64 + cell(sq)] = value;
            }
        };
        let mut by_type = [[0 as Bitboard; 6]; 2];
        for kind in PieceType::ALL {
            let k = kind as usize;
            by_type[0][k] = pos.piece_bits(me, kind);
            by_type[1][k] = pos.piece_bits(them, kind);
            set(k, by_type[0][k], 1);
            set(6 + k, by_type[1][k], 1);
        }
        set(12, pos.empty_squares(), 1);
        set(13, TRAPS, 1);
        set(14, pos.frozen(me), 1);
        set(15, pos.frozen(them), 1);
        set(16, dominated(&by_type, 0, 1), 1);
        set(17, dominated(&by_type, 1, 0), 1);
        for trap in Squares(TRAPS) {
            let around = neighbors(1 << trap);
            let own = (around & pos.side_bits(me)).count_ones() as i8;
            let opp = (around & pos.side_bits(them)).count_ones() as i8;
            set(18, 1 << trap, own);
            set(19, 1 << trap, opp);
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
        let mut planes = vec![7i8; PLANES * 64];
        ArimaaRichPlanes.encode(&g, &mut planes, &mut []);
        planes
    }

    fn at(p: &[i8], plane: usize, row: usize, file: usize) -> i8 {
        p[plane * 64 + row * 8 + file]
    }

    const OPENING: &str = "g rrrrrrrrdhcemchd................................DHCMECHDRRRRRRRR";

    #[test]
    fn the_opening_has_every_piece_once_and_no_frozen_piece() {
        let p = encode(OPENING);
        let plane_sum = |k: usize| {
            p[k * 64..(k + 1) * 64]
                .iter()
                .map(|&v| v as i32)
                .sum::<i32>()
        };
        // 8 rabbits, 2 cats, 2 dogs, 2 horses, 1 camel, 1 elephant each.
        let counts = [8, 2, 2, 2, 1, 1];
        for (k, &n) in counts.iter().enumerate() {
            assert_eq!(plane_sum(k), n, "own plane {k}");
            assert_eq!(plane_sum(6 + k), n, "opponent plane {k}");
        }
        assert_eq!(plane_sum(12), 32);
        assert_eq!(plane_sum(13), 4);
        assert_eq!(
            plane_sum(14) + plane_sum(15) + plane_sum(16) + plane_sum(17),
            0
        );
        // Gold's rabbits (rank 1) are row 7; the elephant e2 is row 6, file e.
        assert!((0..8).all(|f| at(&p, 0, 7, f) == 1));
        assert_eq!(at(&p, 5, 6, 4), 1);
        // Trap c3 (row 5 for gold) is guarded by gold's c2 piece only.
        assert_eq!(at(&p, 18, 5, 2), 1);
        assert_eq!(at(&p, 19, 5, 2), 0);
        assert!(p.iter().all(|&v| (0..=4).contains(&v)));
    }

    #[test]
    fn frozen_and_dominated_pieces_are_marked_for_each_side() {
        // Gold rabbit d4 next to silver cat d5 with no gold friend: frozen.
        // Gold elephant g7 next to silver dog g6 (alone): the dog is frozen.
        // Board rows from rank 8 down.
        let board = concat!(
            "........", // 8
            "......E.", // 7
            "......d.", // 6
            "...c....", // 5
            "...R....", // 4
            "........", // 3
            "........", // 2
            "........", // 1
        );
        let p = encode(&format!("g {board}"));
        // d4 is row 4 (gold to move), file d.
        assert_eq!(at(&p, 14, 4, 3), 1, "own rabbit frozen");
        assert_eq!(at(&p, 16, 4, 3), 1, "own rabbit dominated");
        // g6 is row 2, file g: the silver dog is frozen and dominated.
        assert_eq!(at(&p, 15, 2, 6), 1);
        assert_eq!(at(&p, 17, 2, 6), 1);
        // The silver cat d5 is next to a weaker rabbit only: not dominated.
        assert_eq!(at(&p, 17, 3, 3), 0);
        // Trap f6 (row 2, file f) has the silver dog g6 beside it.
        assert_eq!(at(&p, 19, 2, 5), 1);
        assert_eq!(at(&p, 18, 2, 5), 0);
        // Silver to move sees the same board mirrored, own and opponent swapped.
        let q = encode(&format!("s {board}"));
        assert_eq!(at(&q, 15, 7 - 4, 3), 1);
        assert_eq!(at(&q, 14, 7 - 2, 6), 1);
        assert_eq!(
            at(&q, PieceType::Dog as usize, 7 - 2, 6),
            1,
            "silver's own dog"
        );
    }

    #[test]
    fn piece_planes_agree_with_arimaa_6x8x8_over_random_games() {
        use crate::encode::ArimaaTypePlanes;
        use crate::util::seeded_rng;
        let mut rng = seeded_rng(5, 0);
        let mut scratch = Vec::new();
        let (mut rich, mut basic) = (vec![0i8; PLANES * 64], vec![0i8; 6 * 64]);
        let mut checked = 0;
        for _game in 0..4 {
            let mut g = Arimaa::new();
            while let Some(mv) = g.random_move(&mut rng, &mut scratch) {
                ArimaaRichPlanes.encode(&g, &mut rich, &mut []);
                ArimaaTypePlanes.encode(&g, &mut basic, &mut []);
                for (i, &b) in basic.iter().enumerate() {
                    assert_eq!(rich[i], (b == 1) as i8);
                    assert_eq!(rich[6 * 64 + i], (b == -1) as i8);
                }
                let empty = (0..64).filter(|&c| (0..6).all(|k| basic[k * 64 + c] == 0));
                assert!(empty.clone().all(|c| rich[12 * 64 + c] == 1));
                assert_eq!(
                    empty.count(),
                    rich[12 * 64..13 * 64].iter().filter(|&&v| v == 1).count()
                );
                checked += 1;
                g.play(mv);
                if g.ply() > 60 {
                    break;
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }
}
