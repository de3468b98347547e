//! `stones-2`: own and opponent stones, for the games played by placing
//! stones on an NxN grid (Tic-tac-toe, Pentago, Gomoku, Atari-Go) at any size.

use super::{Encoder, Perspective};
use crate::game::{AtariGo, Game, Gomoku, Pentago, Side, TicTacToe};

/// A game whose board is a grid of cells, each empty or holding one side's
/// stone. Cell `i` is row `i / N`, column `i % N`, row 0 at the top.
pub trait StoneGrid: Game {
    fn stone_at(&self, cell: usize) -> Option<Side>;
}

impl StoneGrid for TicTacToe {
    fn stone_at(&self, cell: usize) -> Option<Side> {
        self.cell(cell)
    }
}

impl StoneGrid for Gomoku {
    fn stone_at(&self, cell: usize) -> Option<Side> {
        self.cell(cell)
    }
}

impl StoneGrid for AtariGo {
    fn stone_at(&self, cell: usize) -> Option<Side> {
        self.cell(cell)
    }
}

impl StoneGrid for Pentago {
    fn stone_at(&self, cell: usize) -> Option<Side> {
        self.cell(cell)
    }
}

/// Plane 0: the side to move's stones (1), plane 1: the opponent's (1);
/// shape `[2, rows, columns]` for the board it was made for.
pub struct Stones2 {
    rows: usize,
    columns: usize,
}

impl Stones2 {
    pub const NAME: &'static str = "stones-2";

    /// For square boards of side `size`.
    pub fn new(size: usize) -> Stones2 {
        Stones2::rect(size, size)
    }

    /// For boards of `rows` x `columns` (Connect Four's 6 x 7).
    pub fn rect(rows: usize, columns: usize) -> Stones2 {
        Stones2 { rows, columns }
    }
}

impl<G: StoneGrid> Encoder<G> for Stones2 {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn shape(&self) -> [usize; 3] {
        [2, self.rows, self.columns]
    }

    fn perspective(&self) -> Perspective {
        Perspective::SideToMove
    }

    fn encode(&self, state: &G, planes: &mut [i8], _globals: &mut [f32]) {
        // A game's size is its board's width.
        debug_assert_eq!(
            state.size(),
            self.columns,
            "encoder made for another board size"
        );
        let cells = self.rows * self.columns;
        planes[..2 * cells].fill(0);
        let me = state.side_to_move();
        for i in 0..cells {
            match state.stone_at(i) {
                Some(s) if s == me => planes[i] = 1,
                Some(_) => planes[cells + i] = 1,
                None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_follow_the_side_to_move() {
        let mut g = Gomoku::with_size(9).unwrap();
        let enc = Stones2::new(9);
        let mut planes = vec![5i8; 2 * 81];
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let first = moves[40];
        g.play(first);
        Encoder::<Gomoku>::encode(&enc, &g, &mut planes, &mut []);
        // Second to move: the first player's stone is the opponent's.
        assert_eq!(planes[..81].iter().sum::<i8>(), 0);
        assert_eq!(planes[81..].iter().sum::<i8>(), 1);
        let cell = (0..81).find(|&i| g.stone_at(i).is_some()).unwrap();
        assert_eq!(planes[81 + cell], 1);
        g.legal_moves(&mut moves);
        g.play(moves[0]);
        Encoder::<Gomoku>::encode(&enc, &g, &mut planes, &mut []);
        assert_eq!(planes[81 + cell], 0);
        assert_eq!(planes[cell], 1);
        assert_eq!(planes.iter().map(|&v| v as i32).sum::<i32>(), 2);
    }

    #[test]
    fn shape_follows_the_size() {
        let spec = Encoder::<AtariGo>::spec(&Stones2::new(13));
        assert_eq!(spec.shape, [2, 13, 13]);
        assert_eq!(Encoder::<TicTacToe>::plane_len(&Stones2::new(3)), 18);
    }
}
