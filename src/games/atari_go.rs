//! Atari-Go's support: the stone-grid encoder. OpenSpiel has only `go`, so
//! Atari-Go has no OpenSpiel name for `spiel-mcts`.

use super::{GameKind, GameSupport};
use crate::encode::{stones_encoder, EncodeError, Encoder, Stones2};
use crate::game::AtariGo;

impl GameSupport for AtariGo {
    const KIND: GameKind = GameKind::AtariGo;
    const ENCODERS: &'static [&'static str] = &[Stones2::NAME];

    fn encoder(name: &str, size: usize) -> Result<Box<dyn Encoder<Self>>, EncodeError> {
        stones_encoder(name, size)
    }

    /// Black b1, White a1 (one liberty left), Black a2 captures: 3 moves;
    /// at most a full board (every move adds a stone until the capture).
    fn game_length_bounds(size: usize) -> Option<(u32, u32)> {
        Some((3, (size * size) as u32))
    }
}
