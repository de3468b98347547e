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
}
