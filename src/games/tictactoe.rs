//! Tic-tac-toe's support: its encoders, EXPERT's immediate wins, OpenSpiel's
//! `tic_tac_toe`.

use super::{cell_action, piece_code, GameKind, GameSupport};
use crate::encode::{stones_encoder, tictactoe_encoder, EncodeError, Encoder, Stones2};
use crate::encode::{TttAbsolute, TttPlanes};
use crate::game::{Game, Side, TicTacToe, TttMove};

impl GameSupport for TicTacToe {
    const KIND: GameKind = GameKind::TicTacToe;

    /// Nine empty cells at the start.
    fn most_legal_moves(_size: usize) -> Option<u64> {
        Some(9)
    }

    const SIDE_NAMES: [&'static str; 2] = ["x", "o"];
    const ENCODERS: &'static [&'static str] = &[TttPlanes::NAME, TttAbsolute::NAME, Stones2::NAME];

    fn encoder(name: &str, size: usize) -> Result<Box<dyn Encoder<Self>>, EncodeError> {
        tictactoe_encoder(name)
            .or_else(|_| stones_encoder(name, size))
            .map_err(|_| EncodeError::Unknown {
                game: Self::NAME.into(),
                name: name.into(),
                known: Self::ENCODERS.to_vec(),
            })
    }

    fn piece_codes(&self, out: &mut Vec<u8>) -> bool {
        out.clear();
        out.extend((0..9).map(|i| piece_code(self.cell(i))));
        true
    }

    fn immediate_wins(&self, side: Side) -> Option<Vec<TttMove>> {
        Some(self.winning_cells(side))
    }

    const SPIEL_NAME: Option<&'static str> = Some("tic_tac_toe");

    fn to_spiel_actions(&self, mv: TttMove) -> Vec<i64> {
        vec![mv.0 as i64]
    }

    fn spiel_move(&self, actions: &[i64]) -> Option<TttMove> {
        cell_action(actions, 9).map(|c| TttMove(c as u8))
    }
}
