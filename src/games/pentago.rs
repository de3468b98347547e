//! Pentago's support: the stone-grid encoder, the 35-feature hand
//! evaluator, OpenSpiel's `pentago`.

use super::{cell_action, GameKind, GameSupport};
use crate::encode::{stones_encoder, EncodeError, Encoder, Stones2};
use crate::game::{Pentago, PentagoMove};
use crate::infer::hand::{HandEval, PentagoEval};

impl GameSupport for Pentago {
    const KIND: GameKind = GameKind::Pentago;
    const ENCODERS: &'static [&'static str] = &[Stones2::NAME];

    fn encoder(name: &str, size: usize) -> Result<Box<dyn Encoder<Self>>, EncodeError> {
        stones_encoder(name, size)
    }

    const HAND_EVALS: &'static [&'static str] = &["pentago-features"];

    /// A won game scores 100 (x1000); five is a clear advantage.
    fn hand_eval(name: &str) -> Option<HandEval<Self>> {
        (name == "pentago-features")
            .then(|| HandEval::from_formula(name, 5000.0, PentagoEval::default()))
    }

    const SPIEL_NAME: Option<&'static str> = Some("pentago");

    fn to_spiel_actions(&self, mv: PentagoMove) -> Vec<i64> {
        vec![mv.0 as i64]
    }

    fn spiel_move(&self, actions: &[i64]) -> Option<PentagoMove> {
        cell_action(actions, 36 * 8).map(|a| PentagoMove(a as u16))
    }
}
