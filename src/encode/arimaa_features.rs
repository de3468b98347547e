//! `arimaa-features`: Zaffetti's six type planes, plus what an Arimaa
//! player judges a position by, as global features for linear and MLP
//! models.

use super::arimaa::type_planes;
use super::arimaa_rich::dominated;
use super::{ArimaaTypePlanes, Encoder, Perspective};
use crate::game::arimaa::bitboard::{neighbors, Bitboard, Squares, FILE_A, FILE_H, TRAPS};
use crate::game::arimaa::capture::best_capture;
use crate::game::arimaa::goal::goal_distance;
use crate::game::arimaa::{Arimaa, PieceType, Position};
use crate::game::Side;

/// The judgements, in order; each is also given weighted by the game's
/// phase (the share of the 32 pieces still on the board), so a linear
/// model can weigh it differently early and late. "Own" is the side to
/// move's, "opponent's" the other side's; a difference is own less
/// opponent's.
pub const BASE_FEATURES: [&str; 49] = [
    "rabbits (difference)",
    "cats (difference)",
    "dogs (difference)",
    "horses (difference)",
    "camels (difference)",
    "elephants (difference)",
    "HarLog material (difference)",
    "at most 1 rabbit (difference)",
    "at most 2 rabbits (difference)",
    "at most 3 rabbits (difference)",
    "no rabbit (difference)",
    "own frozen pieces, by strength",
    "own pieces next to a stronger enemy, by strength",
    "own pieces beside a trap with one guard and a stronger enemy, by strength",
    "own elephant in the centre",
    "own rabbits 1 rank from goal",
    "own rabbits 2 ranks from goal",
    "own rabbits 3 ranks from goal",
    "own goal in 1 step",
    "own goal in 2 steps",
    "own goal in 3 steps",
    "own goal in 4 steps",
    "own pieces in the opponent's half, by strength (rabbits aside)",
    "own pieces beside the opponent's traps, by strength (rabbits aside)",
    "own pieces on a trap, by strength",
    "own pieces free to step, by strength",
    "own elephant's empty neighbours, of 4",
    "own strongest capture this turn, by strength",
    "opponent's frozen pieces, by strength",
    "opponent's pieces next to a stronger enemy, by strength",
    "opponent's pieces beside a trap with one guard and a stronger enemy, by strength",
    "opponent's elephant in the centre",
    "opponent's rabbits 1 rank from goal",
    "opponent's rabbits 2 ranks from goal",
    "opponent's rabbits 3 ranks from goal",
    "opponent's goal in 1 step",
    "opponent's goal in 2 steps",
    "opponent's goal in 3 steps",
    "opponent's goal in 4 steps",
    "opponent's pieces in the own half, by strength (rabbits aside)",
    "opponent's pieces beside the own traps, by strength (rabbits aside)",
    "opponent's pieces on a trap, by strength",
    "opponent's pieces free to step, by strength",
    "opponent's elephant's empty neighbours, of 4",
    "opponent's strongest capture this turn, by strength",
    "control of own c-file trap",
    "control of own f-file trap",
    "control of opponent's c-file trap",
    "control of opponent's f-file trap",
];

const BASE: usize = BASE_FEATURES.len();

/// A piece's strength as the feature sums weigh it (rabbit to elephant),
/// over 8 so that a side's sum stays near 1.
const STRENGTH: [f32; 6] = [0.125, 0.1875, 0.25, 0.375, 0.625, 1.0];

/// HarLog's constants (a material formula from the Arimaa community: a
/// piece is worth less the more enemy pieces outrank it, and rabbits and
/// pieces in number on a log scale).
const HARLOG_Q: f32 = 1.447_530_1;
const HARLOG_G: f32 = 0.631_444_2;

/// `arimaa-features`: the six `arimaa-6x8x8` type planes and
/// `2 x BASE_FEATURES.len()` globals: [`BASE_FEATURES`], then the same
/// times the phase. Goal and capture threats come from exact searches of
/// the turn's steps (the opponent's as if it were to move), trap control is each trap's guards
/// of the side to move less the opponent's, clipped to +-2 and halved.
pub struct ArimaaFeatures;

impl ArimaaFeatures {
    pub const NAME: &'static str = "arimaa-features";
}

/// The names of the globals, in order.
pub fn feature_names() -> Vec<String> {
    let base = BASE_FEATURES.iter().map(|f| f.to_string());
    let phased = BASE_FEATURES.iter().map(|f| format!("{f} x phase"));
    base.chain(phased).collect()
}

impl Encoder<Arimaa> for ArimaaFeatures {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn shape(&self) -> [usize; 3] {
        [6, 8, 8]
    }

    fn globals_len(&self) -> usize {
        2 * BASE
    }

    /// 2: the ten judgements of pressure and mobility added (94 globals);
    /// 3: each side's strongest capture this turn (98 globals).
    fn version(&self) -> u32 {
        3
    }

    fn perspective(&self) -> Perspective {
        Perspective::SideToMove
    }

    /// The planes are `arimaa-6x8x8`'s, named and drawn as there.
    fn plane_names(&self) -> Vec<String> {
        ArimaaTypePlanes.plane_names()
    }

    fn axis_labels(&self) -> (Vec<String>, Vec<String>) {
        ArimaaTypePlanes.axis_labels()
    }

    fn global_names(&self) -> Vec<String> {
        feature_names()
    }

    fn encode(&self, state: &Arimaa, planes: &mut [i8], globals: &mut [f32]) {
        let pos = state.position();
        type_planes(pos, planes);
        let base = features(pos);
        let phase = pos.occupied().count_ones() as f32 / 32.0;
        for (i, v) in base.iter().enumerate() {
            globals[i] = *v;
            globals[BASE + i] = v * phase;
        }
    }
}

/// [`BASE_FEATURES`] of `pos`, from its side to move's point of view.
fn features(pos: &Position) -> [f32; BASE] {
    let me = pos.side_to_move();
    let them = me.other();
    let mine = pos.material(me);
    let theirs = pos.material(them);
    let mut f = [0f32; BASE];
    for k in 0..6 {
        f[k] = f32::from(mine[k]) - f32::from(theirs[k]);
    }
    f[6] = harlog(&mine, &theirs) - harlog(&theirs, &mine);
    for (i, most) in [1u8, 2, 3].into_iter().enumerate() {
        f[7 + i] = f32::from(mine[0] <= most) - f32::from(theirs[0] <= most);
    }
    f[10] = f32::from(mine[0] == 0) - f32::from(theirs[0] == 0);
    let own = side_features(pos, me);
    let opp = side_features(pos, them);
    f[11..11 + SIDE].copy_from_slice(&own);
    f[11 + SIDE..11 + 2 * SIDE].copy_from_slice(&opp);
    // Own traps are on the side to move's half: c3 and f3 for gold.
    let (own_traps, opp_traps): ([u8; 2], [u8; 2]) = match me {
        Side::First => ([18, 21], [42, 45]),
        Side::Second => ([42, 45], [18, 21]),
    };
    for (i, trap) in own_traps.into_iter().chain(opp_traps).enumerate() {
        let around = neighbors(1 << trap);
        let lead = (around & pos.side_bits(me)).count_ones() as f32
            - (around & pos.side_bits(them)).count_ones() as f32;
        f[11 + 2 * SIDE + i] = lead.clamp(-2.0, 2.0) / 2.0;
    }
    f
}

/// HarLog's share of one side: each non-rabbit piece is worth
/// 1 / (Q + the enemy pieces that outrank it), plus G x ln(rabbits x
/// pieces) (a side with none of either counted as a thousandth).
fn harlog(mine: &[u8; 6], theirs: &[u8; 6]) -> f32 {
    let mut value = 0f32;
    for k in 1..6 {
        let stronger: u8 = theirs[k + 1..].iter().sum();
        value += f32::from(mine[k]) / (HARLOG_Q + f32::from(stronger));
    }
    let rabbits = f32::from(mine[0]).max(1e-3);
    let pieces = f32::from(mine.iter().sum::<u8>()).max(1e-3);
    value + HARLOG_G * (rabbits * pieces).ln()
}

/// The judgements of each side (own, then the opponent's).
const SIDE: usize = 17;

/// One side's frozen, dominated and endangered pieces (by strength), its
/// elephant in the centre, its rabbits 1-3 ranks from goal, its goal
/// threats in 1-4 steps (cumulative: a goal in 2 is also one in 3 and 4),
/// then how far it presses and how freely it moves: pieces in the enemy
/// half and beside the enemy's traps, pieces on a trap, pieces free to
/// step (unfrozen, with an empty square they may step to) and the
/// elephant's empty neighbours; last, the strongest enemy piece it could
/// capture this turn, by strength (0 for none).
fn side_features(pos: &Position, side: Side) -> [f32; SIDE] {
    let other = side.other();
    let by_type = |s: Side| PieceType::ALL.map(|k| pos.piece_bits(s, k));
    let pieces = [by_type(side), by_type(other)];
    let strength = |bits: Bitboard| -> f32 {
        PieceType::ALL
            .iter()
            .map(|&k| (bits & pieces[0][k as usize]).count_ones() as f32 * STRENGTH[k as usize])
            .sum()
    };
    let weak = dominated(&pieces, 0, 1);
    let mine = pos.side_bits(side);
    let mut endangered: Bitboard = 0;
    for trap in Squares(TRAPS) {
        let around = neighbors(1 << trap);
        if (around & mine).count_ones() <= 1 {
            endangered |= around & mine & weak;
        }
    }
    const CENTRE: Bitboard = 0x0000_3c3c_3c3c_0000;
    let mut out = [0f32; SIDE];
    out[0] = strength(pos.frozen(side));
    out[1] = strength(weak);
    out[2] = strength(endangered);
    out[3] = f32::from(pieces[0][PieceType::Elephant as usize] & CENTRE != 0);
    let rabbits = pieces[0][PieceType::Rabbit as usize];
    for d in 1..=3u8 {
        let rank = match side {
            Side::First => 7 - d,
            Side::Second => d,
        };
        out[3 + d as usize] = (rabbits & (0xffu64 << (8 * rank))).count_ones() as f32;
    }
    let mut as_mover = *pos;
    as_mover.set_side_to_move(side);
    if let Some(steps) = goal_distance(&as_mover) {
        for (i, slot) in out[7..11].iter_mut().enumerate() {
            *slot = f32::from(steps <= i as u8 + 1);
        }
    }
    let (enemy_half, enemy_traps): (Bitboard, Bitboard) = match side {
        Side::First => (0xffff_ffff_0000_0000, (1 << 42) | (1 << 45)),
        Side::Second => (0x0000_0000_ffff_ffff, (1 << 18) | (1 << 21)),
    };
    let officers = mine & !rabbits;
    out[11] = strength(officers & enemy_half);
    out[12] = strength(officers & neighbors(enemy_traps));
    out[13] = strength(mine & TRAPS);
    let empty = pos.empty_squares();
    // A rabbit may not step back: only its forward and sideways squares.
    let forward = match side {
        Side::First => empty >> 8,
        Side::Second => empty << 8,
    };
    let sideways = ((empty & !FILE_A) >> 1) | ((empty & !FILE_H) << 1);
    let free = (officers & neighbors(empty)) | (rabbits & (forward | sideways));
    out[14] = strength(free & !pos.frozen(side));
    let elephant = pieces[0][PieceType::Elephant as usize];
    out[15] = (neighbors(elephant) & empty).count_ones() as f32 / 4.0;
    out[16] = best_capture(&as_mover).map_or(0.0, |k| STRENGTH[k as usize]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::arimaa::notation::parse_position_line;
    use crate::game::arimaa::Piece;
    use crate::game::Game;
    use crate::util::seeded_rng;

    fn encode(pos: Position) -> (Vec<i8>, Vec<f32>) {
        let g = Arimaa::from_position(pos, 2);
        let mut planes = vec![9i8; 6 * 64];
        let mut globals = vec![f32::NAN; 2 * BASE];
        ArimaaFeatures.encode(&g, &mut planes, &mut globals);
        (planes, globals)
    }

    fn line(text: &str) -> Position {
        parse_position_line(text).unwrap().0
    }

    fn named(globals: &[f32], name: &str) -> f32 {
        let i = BASE_FEATURES.iter().position(|f| *f == name).unwrap();
        globals[i]
    }

    /// The board flipped top to bottom with colours and the side to move
    /// swapped: the same position for the other side.
    fn mirrored(pos: &Position) -> Position {
        let mut out = Position::empty(pos.side_to_move().other());
        for (sq, piece) in pos.pieces() {
            let flipped = (7 - sq / 8) * 8 + sq % 8;
            out.place(flipped, Piece::new(piece.side.other(), piece.kind));
        }
        out
    }

    #[test]
    fn the_opening_is_level_and_quiet() {
        let opening = line("g rrrrrrrrdhcemchd................................DHCMECHDRRRRRRRR");
        let (planes, globals) = encode(opening);
        let mut want = vec![0i8; 6 * 64];
        type_planes(&opening, &mut want);
        assert_eq!(planes, want);
        assert_eq!(feature_names().len(), globals.len());
        for (name, v) in BASE_FEATURES.iter().zip(&globals) {
            let expected = if name.starts_with("control of own") {
                0.5
            } else {
                0.0
            };
            let expected = if name.starts_with("control of opponent") {
                -0.5
            } else {
                expected
            };
            // The eight pieces of the second rank can step forward (2 cats,
            // 2 dogs, 2 horses, camel, elephant); the elephant to e3 alone.
            let expected = if name.contains("free to step") {
                3.25
            } else if name.contains("empty neighbours") {
                0.25
            } else {
                expected
            };
            assert_eq!(*v, expected, "{name}");
        }
        // Every piece is on the board: the phase weights are the features.
        assert_eq!(&globals[..BASE], &globals[BASE..]);
    }

    #[test]
    fn goal_threats_come_from_the_goal_search_for_both_sides() {
        // Gold rabbit b7 under an empty b8: gold reaches goal in 1 step.
        // Silver rabbit g3 with g2 and g1 empty: silver reaches it in 2.
        let board = concat!(
            "........", // 8
            ".R......", // 7
            "........", // 6
            "...e....", // 5
            "....E...", // 4
            "......r.", // 3
            "........", // 2
            "........", // 1
        );
        let (_, g) = encode(line(&format!("g {board}")));
        assert_eq!(named(&g, "own goal in 1 step"), 1.0);
        assert_eq!(named(&g, "opponent's goal in 1 step"), 0.0);
        assert_eq!(named(&g, "opponent's goal in 2 steps"), 1.0);
        assert_eq!(named(&g, "opponent's goal in 4 steps"), 1.0);
        assert_eq!(named(&g, "own rabbits 1 rank from goal"), 1.0);
        assert_eq!(named(&g, "opponent's rabbits 2 ranks from goal"), 1.0);
        assert_eq!(named(&g, "own elephant in the centre"), 1.0);
        assert_eq!(named(&g, "rabbits (difference)"), 0.0);
        // Both rabbits are the last: the scarcity terms cancel, HarLog too.
        assert_eq!(named(&g, "at most 1 rabbit (difference)"), 0.0);
        assert!(named(&g, "HarLog material (difference)").abs() < 1e-6);
    }

    #[test]
    fn frozen_and_endangered_pieces_are_counted_by_strength() {
        // The gold cat d6, beside the silver elephant d7 with no gold
        // friend, is frozen and dominated, and the only gold piece by trap
        // c6. The silver dog c4, beside the gold horse b4 with no silver
        // friend, is frozen and dominated, and the only silver piece by
        // trap c3.
        let board = concat!(
            "........", // 8
            "...e....", // 7
            "...C....", // 6
            "........", // 5
            ".Hd.....", // 4
            "........", // 3
            "........", // 2
            "........", // 1
        );
        let (_, g) = encode(line(&format!("g {board}")));
        assert_eq!(named(&g, "own frozen pieces, by strength"), 0.1875);
        assert_eq!(
            named(&g, "own pieces next to a stronger enemy, by strength"),
            0.1875
        );
        assert_eq!(
            named(
                &g,
                "opponent's pieces next to a stronger enemy, by strength"
            ),
            0.25
        );
        assert_eq!(
            named(
                &g,
                "opponent's pieces beside a trap with one guard and a stronger enemy, by strength"
            ),
            0.25
        );
        assert_eq!(named(&g, "opponent's frozen pieces, by strength"), 0.25);
        assert_eq!(
            named(
                &g,
                "own pieces beside a trap with one guard and a stronger enemy, by strength"
            ),
            0.1875
        );
        // The elephant outranks everything: never dominated, never frozen.
        assert_eq!(named(&g, "elephants (difference)"), -1.0);
    }

    #[test]
    fn pressure_and_mobility_by_hand() {
        // Gold, to move: horse c7 (silver's half, beside trap c6), dog d5
        // and elephant e5 (silver's half; e6, e4 and f5 empty), camel f3
        // on a trap, dog f2, cat h2, rabbit a1 (a2 empty) and rabbit h1
        // (h2 and g1 taken: not free). Silver: elephant a8, rabbit g1
        // (free to step west). Nothing is frozen.
        let board = concat!(
            "e.......", // 8
            "..H.....", // 7
            "........", // 6
            "...DE...", // 5
            "........", // 4
            ".....M..", // 3
            ".....D.C", // 2
            "R.....rR", // 1
        );
        let (_, g) = encode(line(&format!("g {board}")));
        let own = |name: &str| named(&g, &format!("own {name}"));
        let opp = |name: &str| named(&g, &format!("opponent's {name}"));
        assert_eq!(
            own("pieces in the opponent's half, by strength (rabbits aside)"),
            1.625
        );
        assert_eq!(
            own("pieces beside the opponent's traps, by strength (rabbits aside)"),
            0.375
        );
        assert_eq!(own("pieces on a trap, by strength"), 0.625);
        assert_eq!(own("pieces free to step, by strength"), 2.8125);
        assert_eq!(own("elephant's empty neighbours, of 4"), 0.75);
        assert_eq!(
            opp("pieces in the own half, by strength (rabbits aside)"),
            0.0
        );
        assert_eq!(opp("pieces on a trap, by strength"), 0.0);
        assert_eq!(opp("pieces free to step, by strength"), 1.125);
        assert_eq!(opp("elephant's empty neighbours, of 4"), 0.5);
    }

    #[test]
    fn capture_threats_for_both_sides() {
        // Gold to move. The silver cat c4 beside the empty c3 trap, with
        // the gold dog c5 above it: gold captures a cat. The gold horse f5
        // below the empty f6 trap, beside the silver camel e5: silver,
        // were it to move, pushes it in (or the gold dog onto c6, a
        // weaker prize). The elephants a8 and h1 are too far to matter.
        let board = concat!(
            "e.......", // 8
            "........", // 7
            "........", // 6
            "..D.mH..", // 5
            "..c.....", // 4
            "........", // 3
            "........", // 2
            ".......E", // 1
        );
        let (_, g) = encode(line(&format!("g {board}")));
        assert_eq!(
            named(&g, "own strongest capture this turn, by strength"),
            STRENGTH[PieceType::Cat as usize]
        );
        assert_eq!(
            named(&g, "opponent's strongest capture this turn, by strength"),
            STRENGTH[PieceType::Horse as usize]
        );
    }

    /// Over random games: the planes are `arimaa-6x8x8`'s, and a position
    /// and its mirror image for the other side have the same features.
    #[test]
    fn features_take_the_side_to_moves_view_over_random_games() {
        let mut rng = seeded_rng(11, 0);
        let mut scratch = Vec::new();
        let mut basic = vec![0i8; 6 * 64];
        let mut checked = 0;
        let (mut threats, mut captures) = (0, 0);
        for _game in 0..6 {
            let mut g = Arimaa::new();
            while let Some(mv) = g.random_move(&mut rng, &mut scratch) {
                let (planes, globals) = encode(*g.position());
                ArimaaTypePlanes.encode(&g, &mut basic, &mut []);
                assert_eq!(planes, basic);
                let (_, flipped) = encode(mirrored(g.position()));
                assert_eq!(globals, flipped, "ply {}", g.ply());
                assert!(globals.iter().all(|v| v.is_finite()));
                threats += (named(&globals, "own goal in 4 steps") > 0.0) as u32;
                captures +=
                    (named(&globals, "own strongest capture this turn, by strength") > 0.0) as u32;
                checked += 1;
                g.play(mv);
                if g.ply() > 120 {
                    break;
                }
            }
        }
        assert!(checked > 200, "{checked}");
        assert!(threats > 0, "no goal threat in {checked} positions");
        assert!(captures > 0, "no capture threat in {checked} positions");
    }
}
