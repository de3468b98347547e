//! Pentago's support: the stone-grid encoder, the 35-feature hand
//! evaluator, OpenSpiel's `pentago`.

use super::{cell_action, piece_code, GameKind, GameSupport};
use crate::encode::{stones_encoder, EncodeError, Encoder, Stones2};
use crate::game::{Pentago, PentagoMove};
use crate::infer::hand::{FeatureSet, HandEval, LinearEval, PENTAGO_FEATURE_SET};

impl GameSupport for Pentago {
    const KIND: GameKind = GameKind::Pentago;

    /// A marble on one of 36 cells, then one of 4 quadrants turned either
    /// way.
    fn most_legal_moves(_size: usize) -> Option<u64> {
        Some(36 * 8)
    }

    const ENCODERS: &'static [&'static str] = &[Stones2::NAME];

    fn encoder(name: &str, size: usize) -> Result<Box<dyn Encoder<Self>>, EncodeError> {
        stones_encoder(name, size)
    }

    const HAND_EVALS: &'static [&'static str] = &[PENTAGO_FEATURE_SET.name];

    /// The hand-set weights; a won game scores 100 (x1000), five is a
    /// clear advantage.
    fn hand_eval(name: &str) -> Option<HandEval<Self>> {
        let set = Self::feature_set(name)?;
        Some(HandEval::from_formula(
            name,
            set.scale,
            LinearEval::default_for(set),
        ))
    }

    const FEATURE_SETS: &'static [&'static str] = &[PENTAGO_FEATURE_SET.name];

    fn feature_set(name: &str) -> Option<FeatureSet<Self>> {
        (name == PENTAGO_FEATURE_SET.name).then_some(PENTAGO_FEATURE_SET)
    }

    /// Quadrant by quadrant (top left, top right, bottom left, bottom
    /// right), each row by row: the paper's hash gives each quadrant its
    /// prime and each of its cells a power of it.
    fn piece_codes(&self, out: &mut Vec<u8>) -> bool {
        out.clear();
        for (qx, qy) in [(0, 0), (3, 0), (0, 3), (3, 3)] {
            for y in qy..qy + 3 {
                for x in qx..qx + 3 {
                    out.push(piece_code(self.cell(y * 6 + x)));
                }
            }
        }
        true
    }

    const SPIEL_NAME: Option<&'static str> = Some("pentago");

    fn to_spiel_actions(&self, mv: PentagoMove) -> Vec<i64> {
        vec![mv.0 as i64]
    }

    fn spiel_move(&self, actions: &[i64]) -> Option<PentagoMove> {
        cell_action(actions, 36 * 8).map(|a| PentagoMove(a as u16))
    }
}
