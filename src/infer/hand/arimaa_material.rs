//! A material evaluation for Arimaa: piece values in the style of the
//! Bonanza engine (elephant 20000, camel 5000, horse 3000, dog 1800, cat
//! 1500, rabbit 1000), rabbits worth more as fewer remain (losing the last
//! ones loses the game), and a small bonus for advanced rabbits. Values are
//! in millirabbits: the first rabbit lost costs 1000.
//!
//! ```
//! use plies::game::{Game, arimaa::Arimaa};
//! use plies::infer::hand::arimaa_material::evaluate;
//! assert_eq!(evaluate(&Arimaa::new()), 0); // the opening is level
//! ```

use crate::game::arimaa::{Arimaa, PieceType, Position};
use crate::game::Side;

/// The score of a clear advantage: 4000 millirabbits, a camel less 1000.
/// Material's value on `[-1, 1]` is `tanh(score / CLEAR_ADVANTAGE)`.
pub const CLEAR_ADVANTAGE: f32 = 4000.0;

/// Values by piece type, rabbit first (rabbits are counted together by
/// [`RABBITS_TOTAL`]; 1000 is the first one lost).
pub const PIECE_VALUES: [i32; 6] = [1000, 1500, 1800, 3000, 5000, 20000];

/// The value of `n` rabbits together (n = 0..=8): each rabbit of the first
/// four lost costs 1000, then 1200, 1500, 2000 and 3000 for the last.
pub const RABBITS_TOTAL: [i32; 9] = [0, 3000, 5000, 6500, 7700, 8700, 9700, 10700, 11700];

/// Bonus per rabbit by how many ranks it has advanced from its home rank
/// (the goal rank itself ends the game).
pub const RABBIT_ADVANCE: [i32; 8] = [0, 0, 5, 15, 30, 60, 100, 0];

/// Material and rabbit advancement of `side` alone.
pub fn side_value(pos: &Position, side: Side) -> i32 {
    let counts = pos.material(side);
    let mut v = RABBITS_TOTAL[(counts[0] as usize).min(8)];
    for kind in 1..6 {
        v += PIECE_VALUES[kind] * counts[kind] as i32;
    }
    let mut rabbits = pos.piece_bits(side, PieceType::Rabbit);
    while rabbits != 0 {
        let sq = rabbits.trailing_zeros() as usize;
        rabbits &= rabbits - 1;
        let rank = sq / 8;
        let advance = match side {
            Side::First => rank,
            Side::Second => 7 - rank,
        };
        v += RABBIT_ADVANCE[advance];
    }
    v
}

/// `side`'s value minus the opponent's.
pub fn material_balance(pos: &Position, side: Side) -> i32 {
    side_value(pos, side) - side_value(pos, side.other())
}

/// The evaluation for the side to move (finished games are the search's
/// business).
pub fn evaluate(game: &Arimaa) -> i32 {
    let pos = game.position();
    material_balance(pos, pos.side_to_move())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::arimaa::notation::parse_position_line;

    fn pos(line: &str) -> Position {
        parse_position_line(line).unwrap().0
    }

    #[test]
    fn full_sides_are_worth_the_same_and_the_sign_follows_the_mover() {
        let opening = "g rrrrrrrrdhcemchd................................DHCMECHDRRRRRRRR";
        let p = pos(opening);
        assert_eq!(
            side_value(&p, Side::First),
            11700 + 2 * 1500 + 2 * 1800 + 2 * 3000 + 5000 + 20000
        );
        assert_eq!(material_balance(&p, Side::First), 0);
        // Gold without its camel, silver to move: silver is ahead by 5000.
        let p = pos("s rrrrrrrrdhcemchd................................DHC.ECHDRRRRRRRR");
        assert_eq!(material_balance(&p, Side::Second), 5000);
        assert_eq!(material_balance(&p, Side::First), -5000);
    }

    #[test]
    fn the_last_rabbits_are_dearer_and_advanced_rabbits_count() {
        for n in 1..9 {
            assert!(RABBITS_TOTAL[n] > RABBITS_TOTAL[n - 1]);
            if n > 1 {
                let lost_now = RABBITS_TOTAL[n] - RABBITS_TOTAL[n - 1];
                let lost_next = RABBITS_TOTAL[n - 1] - RABBITS_TOTAL[n - 2];
                assert!(lost_next >= lost_now);
            }
        }
        let home = pos("g ...............................................................R");
        let up = pos("g .......................R........................................");
        let down = pos("s .......r........................................................");
        assert_eq!(side_value(&home, Side::First), 3000);
        assert_eq!(side_value(&up, Side::First), 3000 + RABBIT_ADVANCE[5]);
        // A silver rabbit on h8 has not moved; on h6 it has advanced two ranks.
        assert_eq!(side_value(&down, Side::Second), 3000);
        let down2 = pos(&format!("s {}r{}", ".".repeat(23), ".".repeat(40)));
        assert_eq!(side_value(&down2, Side::Second), 3000 + RABBIT_ADVANCE[2]);
    }
}
