//! The Amazons' support: the UNITS / MOBILITY / BITS encoders, the
//! minimal-distance and Lieberum hand evaluators, OpenSpiel's `amazons`
//! (a move is three actions: from, to, arrow).

use super::{hand_score, GameKind, GameSupport, ScoreFn};
use crate::encode::{amazons_encoder, EncodeError, Encoder};
use crate::game::{Amazons, AmazonsMove, Game};
use crate::infer::hand::{AmazonsLieberum, AmazonsMinDist};

impl GameSupport for Amazons {
    const KIND: GameKind = GameKind::Amazons;
    const ENCODERS: &'static [&'static str] =
        &["amazons-units", "amazons-mobility", "amazons-bits"];

    fn encoder(name: &str, size: usize) -> Result<Box<dyn Encoder<Self>>, EncodeError> {
        amazons_encoder(name, size)
    }

    const HAND_EVALS: &'static [&'static str] = &["mindist", "lieberum"];

    fn hand_eval(name: &str) -> Option<ScoreFn<Self>> {
        match name {
            "mindist" => Some(hand_score(AmazonsMinDist)),
            "lieberum" => Some(hand_score(AmazonsLieberum)),
            _ => None,
        }
    }

    /// Both score territory-like differences in squares (x1000): ten
    /// squares is a clear advantage.
    fn hand_eval_scale(_name: &str) -> f32 {
        10_000.0
    }

    const SPIEL_NAME: Option<&'static str> = Some("amazons");
    const SPIEL_ACTIONS: usize = 3;

    fn spiel_params(size: usize) -> Vec<(&'static str, i64)> {
        vec![("board_size", size as i64)]
    }

    fn to_spiel_actions(&self, mv: AmazonsMove) -> Vec<i64> {
        vec![mv.from as i64, mv.to as i64, mv.arrow as i64]
    }

    fn spiel_move(&self, actions: &[i64]) -> Option<AmazonsMove> {
        let cells = (self.size() * self.size()) as i64;
        match *actions {
            [from, to, arrow] if [from, to, arrow].iter().all(|a| (0..cells).contains(a)) => {
                Some(AmazonsMove {
                    from: from as u8,
                    to: to as u8,
                    arrow: arrow as u8,
                })
            }
            _ => None,
        }
    }
}
