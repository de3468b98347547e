//! Values from a plain-Rust MLP that is still learning (TD(lambda)'s
//! learners, between updates); a fixed network is valued through
//! [`mlp_evaluator`](super::mlp_evaluator).

use super::to_side_to_move;
use crate::encode::{encode_f32, Encoder};
use crate::game::Game;
use crate::model::NativeMlp;

/// Side-to-move values of `states` under `net`.
pub fn native_values<G: Game>(encoder: &dyn Encoder<G>, net: &NativeMlp, states: &[G]) -> Vec<f32> {
    side_to_move_values(encoder, states, |x| net.value(x))
}

/// Each state encoded and valued by `value`, turned to its side to move.
fn side_to_move_values<G: Game>(
    encoder: &dyn Encoder<G>,
    states: &[G],
    value: impl Fn(&[f32]) -> f32,
) -> Vec<f32> {
    let perspective = encoder.perspective();
    let mut x = Vec::new();
    states
        .iter()
        .map(|s| {
            encode_f32(encoder, s, &mut x);
            to_side_to_move(s, value(&x), perspective)
        })
        .collect()
}
