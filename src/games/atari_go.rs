//! Atari-Go's support: the stone-grid encoder, and OpenSpiel's actions for
//! `spiel-mcts`. OpenSpiel has only `go`: `scripts/spiel_mcts_bot.py`
//! defines `atari_go` on it in Python (no passes, the first capture wins),
//! with go's actions, `(rank - 1) * size + file`, rank 1 at the bottom.

use super::{cell_action, GameKind, GameSupport};
use crate::encode::{stones_encoder, EncodeError, Encoder, Stones2};
use crate::game::{AtariGo, AtariGoMove, Game};

impl GameSupport for AtariGo {
    const KIND: GameKind = GameKind::AtariGo;

    /// One stone on any empty point, or a pass.
    fn most_legal_moves(size: usize) -> Option<u64> {
        Some((size * size) as u64 + 1)
    }

    const ENCODERS: &'static [&'static str] = &[Stones2::NAME];

    fn encoder(name: &str, size: usize) -> Result<Box<dyn Encoder<Self>>, EncodeError> {
        stones_encoder(name, size)
    }

    /// Black b1, White a1 (one liberty left), Black a2 captures: 3 moves;
    /// at most a full board (every move adds a stone until the capture).
    fn game_length_bounds(size: usize) -> Option<(u32, u32)> {
        Some((3, (size * size) as u32))
    }

    const SPIEL_NAME: Option<&'static str> = Some("atari_go");
    const SPIEL_PYTHON_GAME: bool = true;

    fn spiel_params(size: usize) -> Vec<(&'static str, i64)> {
        vec![("board_size", size as i64)]
    }

    fn to_spiel_actions(&self, mv: AtariGoMove) -> Vec<i64> {
        vec![flip_rows(mv.0 as usize, self.size()) as i64]
    }

    fn spiel_move(&self, actions: &[i64]) -> Option<AtariGoMove> {
        let n = self.size();
        cell_action(actions, n * n).map(|a| AtariGoMove(flip_rows(a, n) as u16))
    }
}

/// Between plies' points (row 0 at the top) and go's actions (rank 1, row
/// 0 of the action, at the bottom): the same map both ways.
fn flip_rows(index: usize, size: usize) -> usize {
    (size - 1 - index / size) * size + index % size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spiel_actions_are_go_actions() {
        let g = AtariGo::with_size(9).unwrap();
        // go's action (rank - 1) * 9 + file, the file letters skipping i.
        for (name, action) in [
            ("a1", 0),
            ("j1", 8),
            ("a2", 9),
            ("c3", 20),
            ("j9", 80),
            ("e5", 40),
        ] {
            let mv = g.parse_move(name).unwrap();
            assert_eq!(g.to_spiel_actions(mv), vec![action], "{name}");
            assert_eq!(g.spiel_move(&[action]), Some(mv), "{name}");
        }
        assert_eq!(g.spiel_move(&[81]), None, "go's pass is no Atari-Go move");
        assert_eq!(g.spiel_move(&[3, 4]), None);
    }
}
