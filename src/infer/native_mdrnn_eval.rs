//! The plain-Rust MDRNN behind an encoder: values and per-point policies.

use super::{to_side_to_move, Evaluation, Evaluator, InferError};
use crate::encode::{encode_f32, Encoder};
use crate::game::Game;
use crate::model::NativeMdrnn;

pub struct NativeMdrnnEvaluator<G: Game> {
    encoder: Box<dyn Encoder<G>>,
    net: NativeMdrnn,
    label: String,
}

impl<G: Game> NativeMdrnnEvaluator<G> {
    pub fn new(encoder: Box<dyn Encoder<G>>, net: NativeMdrnn, label: impl Into<String>) -> Self {
        NativeMdrnnEvaluator {
            encoder,
            net,
            label: label.into(),
        }
    }
}

impl<G: Game> Evaluator<G> for NativeMdrnnEvaluator<G> {
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, InferError> {
        self.evaluate_full(states).map(Evaluation::values)
    }

    fn evaluate_full(&self, states: &[G]) -> Result<Vec<Evaluation>, InferError> {
        let [_, rows, columns] = self.encoder.shape();
        let perspective = self.encoder.perspective();
        let (mut x, mut scratch) = (Vec::new(), Vec::new());
        Ok(states
            .iter()
            .map(|s| {
                encode_f32(self.encoder.as_ref(), s, &mut x);
                let mut policy = Vec::new();
                self.net
                    .point_outputs(&x, rows, columns, &mut policy, &mut scratch);
                let value = self.net.output().to_symmetric(self.net.value_of(&policy));
                Evaluation {
                    value: to_side_to_move(s, value, perspective),
                    policy: Some(policy),
                }
            })
            .collect())
    }

    fn has_policy(&self) -> bool {
        true
    }

    fn name(&self) -> String {
        self.label.clone()
    }
}
