//! The encoder of Arimaa played one step at a time ([`ArimaaSteps`]).

use super::arimaa::{row_for, type_planes};
use super::{Encoder, Perspective};
use crate::game::arimaa::ArimaaSteps;
use crate::game::Game;

/// `arimaa-steps-8x8x8`: `arimaa-6x8x8`'s six piece-type planes of the
/// board now (the mover's frame: row 0 its goal rank), then the turn in
/// progress: plane 6 holds the steps left in the turn (1 to 4) on every
/// square, plane 7 is +1 on the square a pushed piece left (the push must
/// be completed there) and -1 on the square our last-moved piece left (a
/// weaker enemy piece next to it may be pulled there). At the start of a
/// turn the last two planes say 4 and nothing.
pub struct ArimaaStepPlanes;

impl ArimaaStepPlanes {
    pub const NAME: &'static str = "arimaa-steps-8x8x8";
}

impl Encoder<ArimaaSteps> for ArimaaStepPlanes {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn shape(&self) -> [usize; 3] {
        [8, 8, 8]
    }

    fn perspective(&self) -> Perspective {
        Perspective::SideToMove
    }

    fn plane_names(&self) -> Vec<String> {
        [
            "rabbit",
            "cat",
            "dog",
            "horse",
            "camel",
            "elephant",
            "steps left",
            "push (+1) / pull (-1) square",
        ]
        .map(String::from)
        .to_vec()
    }

    fn axis_labels(&self) -> (Vec<String>, Vec<String>) {
        (
            "abcdefgh".chars().map(String::from).collect(),
            (1..=8).rev().map(|r| r.to_string()).collect(),
        )
    }

    fn encode(&self, state: &ArimaaSteps, planes: &mut [i8], _globals: &mut [f32]) {
        let pos = state.position();
        type_planes(pos, planes);
        let turn = state.turn_state().normalized(pos);
        planes[6 * 64..7 * 64].fill(turn.steps_left as i8);
        let special = &mut planes[7 * 64..8 * 64];
        special.fill(0);
        let me = state.side_to_move();
        let mut mark = |sq: u8, value: i8| special[row_for(me, sq) * 8 + (sq % 8) as usize] = value;
        if let Some((_, sq)) = turn.push {
            mark(sq, 1);
        }
        if let Some((_, sq)) = turn.last {
            mark(sq, -1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planes(g: &ArimaaSteps) -> Vec<i8> {
        let mut out = vec![9i8; 8 * 64];
        ArimaaStepPlanes.encode(g, &mut out, &mut []);
        out
    }

    #[test]
    fn the_turn_in_progress_is_drawn_beside_the_board() {
        let mut g = ArimaaSteps::new();
        let start = planes(&g);
        assert!(start[6 * 64..7 * 64].iter().all(|&v| v == 4));
        assert!(start[7 * 64..].iter().all(|&v| v == 0));
        // Gold's elephant e2 -> e3: 3 steps left; nothing can be pulled
        // into e2 (no silver piece next to it), so plane 7 stays empty.
        g.play_str("Ee2n").unwrap();
        let after = planes(&g);
        assert!(after[6 * 64..7 * 64].iter().all(|&v| v == 3));
        assert!(after[7 * 64..].iter().all(|&v| v == 0));
        // The elephant now on e3 (row 5, file 4) of the elephant plane.
        assert_eq!(after[5 * 64 + 5 * 8 + 4], 1);
        assert_eq!(after[5 * 64 + 6 * 8 + 4], 0);
        // Gold's elephant d4 beside a silver rabbit on d5.
        let board = format!(
            "g {}{}{}{}{}{}{}{}",
            ".......r",
            "........",
            "........",
            "...r....",
            "...E....",
            "........",
            "........",
            "R......."
        );
        let mut pull = ArimaaSteps::from_text(&board).unwrap();
        pull.play_str("Ed4w").unwrap();
        // d4 (rank 4: row 4 in gold's frame): the rabbit may be pulled there.
        assert_eq!(planes(&pull)[7 * 64 + 4 * 8 + 3], -1);
        let mut push = ArimaaSteps::from_text(&board).unwrap();
        push.play_str("rd5n").unwrap();
        // d5 (row 3): the push must be completed there.
        let pushed = planes(&push);
        assert_eq!(pushed[7 * 64 + 3 * 8 + 3], 1);
        assert_eq!(pushed[7 * 64..].iter().filter(|&&v| v != 0).count(), 1);
        assert!(pushed[6 * 64..7 * 64].iter().all(|&v| v == 3));
    }
}
