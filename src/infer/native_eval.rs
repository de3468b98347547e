//! The plain-Rust MLP behind an encoder. The evaluator's weights are
//! fixed, so it values positions with the input-major [`FrozenMlp`];
//! [`native_values`] serves a network that is still learning.

use super::{to_side_to_move, Evaluator, InferError};
use crate::encode::{encode_f32, Encoder};
use crate::game::Game;
use crate::model::{FrozenMlp, NativeMlp};
use std::sync::Arc;

pub struct NativeEvaluator<G: Game> {
    encoder: Arc<dyn Encoder<G>>,
    net: FrozenMlp,
    label: String,
}

impl<G: Game> NativeEvaluator<G> {
    pub fn new(encoder: Arc<dyn Encoder<G>>, net: NativeMlp) -> Self {
        Self::labelled(encoder, net, "native-mlp")
    }

    /// The same, named `label` in reports (a checkpoint's source).
    pub fn labelled(
        encoder: Arc<dyn Encoder<G>>,
        net: NativeMlp,
        label: impl Into<String>,
    ) -> Self {
        NativeEvaluator {
            encoder,
            net: FrozenMlp::from(&net),
            label: label.into(),
        }
    }
}

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

impl<G: Game> Evaluator<G> for NativeEvaluator<G> {
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, InferError> {
        Ok(side_to_move_values(self.encoder.as_ref(), states, |x| {
            self.net.value(x)
        }))
    }

    fn prefers_batches(&self) -> bool {
        false
    }

    fn name(&self) -> String {
        self.label.clone()
    }
}
