//! Goal detection: can the side to move end this turn with one of its
//! rabbits on the far rank, and in how few steps?

use super::position::Position;
use super::step::TurnState;

/// The fewest steps (1 to 4) after which the side to move can end its turn
/// with a rabbit on its goal rank, or `None` if it cannot this turn.
pub fn goal_distance(pos: &Position) -> Option<u8> {
    // Only the side's own steps move its rabbits: none within four ranks,
    // no goal this turn (the common case, decided without a search).
    if !rabbit_within(pos, 4) {
        return None;
    }
    (1..=4).find(|&limit| reaches_goal(pos, &TurnState::START, limit))
}

/// Whether the side to move can end this turn with a rabbit on goal (one
/// search of 4 steps, where [`goal_distance`] tries each length).
pub fn can_reach_goal(pos: &Position) -> bool {
    rabbit_within(pos, 4) && reaches_goal(pos, &TurnState::START, 4)
}

/// Whether some sequence of at most `budget` steps ends the turn on goal.
fn reaches_goal(pos: &Position, state: &TurnState, budget: u8) -> bool {
    if budget == 0 || state.steps_left == 0 {
        return false;
    }
    let side = pos.side_to_move();
    let mut found = false;
    for &(step, kind) in pos.step_list(state).iter() {
        let mut child = *pos;
        let (next, _) = child.apply_step(state, step, kind);
        if next.can_end() && child.rabbits_on_goal(side) != 0 {
            return true;
        }
        // A rabbit can only reach goal by its own steps; prune when no own
        // rabbit is close enough for the steps that remain.
        if budget > 1 && rabbit_within(&child, budget - 1) {
            found = reaches_goal(&child, &next, budget - 1);
            if found {
                break;
            }
        }
    }
    found
}

/// Whether one of the side to move's rabbits is within `steps` ranks of goal.
fn rabbit_within(pos: &Position, steps: u8) -> bool {
    use super::piece::PieceType;
    use crate::game::Side;
    let side = pos.side_to_move();
    let rabbits = pos.piece_bits(side, PieceType::Rabbit);
    let ranks = steps.min(7) as u32;
    let zone = match side {
        Side::First => !0u64 << (8 * (7 - ranks)),
        Side::Second => !0u64 >> (8 * (7 - ranks)),
    };
    rabbits & zone != 0
}
