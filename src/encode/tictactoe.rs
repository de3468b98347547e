//! Tic-tac-toe encoders.

use super::{Encoder, Perspective};
use crate::game::{Side, TicTacToe};

/// `tictactoe-9`: the nine cells in reading order, +1 x (White), -1 o
/// (Black), 0 empty; values are from the first player's point of view.
/// This is the board vector of Patist & Wiering (2004) and Fugers (2017).
pub struct TttAbsolute;

impl TttAbsolute {
    pub const NAME: &'static str = "tictactoe-9";
}

impl Encoder<TicTacToe> for TttAbsolute {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn shape(&self) -> [usize; 3] {
        [1, 3, 3]
    }

    fn perspective(&self) -> Perspective {
        Perspective::FirstPlayer
    }

    fn encode(&self, state: &TicTacToe, planes: &mut [i8], _globals: &mut [f32]) {
        for (i, p) in planes.iter_mut().enumerate().take(9) {
            *p = match state.cell(i) {
                Some(Side::First) => 1,
                Some(Side::Second) => -1,
                None => 0,
            };
        }
    }
}

/// `tictactoe-2x3x3`: plane 0 the side to move's marks, plane 1 the
/// opponent's; values are from the side to move's point of view.
pub struct TttPlanes;

impl TttPlanes {
    pub const NAME: &'static str = "tictactoe-2x3x3";
}

impl Encoder<TicTacToe> for TttPlanes {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn shape(&self) -> [usize; 3] {
        [2, 3, 3]
    }

    fn perspective(&self) -> Perspective {
        Perspective::SideToMove
    }

    fn encode(&self, state: &TicTacToe, planes: &mut [i8], _globals: &mut [f32]) {
        use crate::game::Game;
        let me = state.side_to_move();
        for i in 0..9 {
            let c = state.cell(i);
            planes[i] = (c == Some(me)) as i8;
            planes[9 + i] = (c == Some(me.other())) as i8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;

    #[test]
    fn constant_sizes_match_the_spec() {
        for e in [&TttAbsolute as &dyn Encoder<TicTacToe>, &TttPlanes] {
            let s = e.spec();
            assert_eq!(e.plane_len(), s.shape.iter().product::<usize>());
            assert_eq!(e.globals_len(), s.globals);
            assert_eq!(e.perspective(), s.perspective);
        }
    }

    #[test]
    fn absolute_encoding_is_the_thesis_vector() {
        let g = TicTacToe::from_text("x.o/.x./...").unwrap();
        let mut p = [0i8; 9];
        TttAbsolute.encode(&g, &mut p, &mut []);
        assert_eq!(p, [1, 0, -1, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn planes_follow_the_side_to_move() {
        let g = TicTacToe::from_text("x.o/.x./...").unwrap(); // o to move
        let mut p = [0i8; 18];
        TttPlanes.encode(&g, &mut p, &mut []);
        assert_eq!(&p[..9], &[0, 0, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&p[9..], &[1, 0, 0, 0, 1, 0, 0, 0, 0]);
    }
}
