//! The plain-Rust MLP behind an encoder.

use super::{to_side_to_move, Evaluator, InferError};
use crate::encode::{encode_f32, Encoder};
use crate::game::Game;
use crate::model::NativeMlp;
use std::sync::Arc;

pub struct NativeEvaluator<G: Game> {
    encoder: Arc<dyn Encoder<G>>,
    net: NativeMlp,
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
            net,
            label: label.into(),
        }
    }
}

/// Side-to-move values of `states` under `net`.
pub fn native_values<G: Game>(encoder: &dyn Encoder<G>, net: &NativeMlp, states: &[G]) -> Vec<f32> {
    let perspective = encoder.perspective();
    let mut x = Vec::new();
    states
        .iter()
        .map(|s| {
            encode_f32(encoder, s, &mut x);
            to_side_to_move(s, net.value(&x), perspective)
        })
        .collect()
}

impl<G: Game> Evaluator<G> for NativeEvaluator<G> {
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, InferError> {
        Ok(native_values(self.encoder.as_ref(), &self.net, states))
    }

    fn prefers_batches(&self) -> bool {
        false
    }

    fn name(&self) -> String {
        self.label.clone()
    }
}
