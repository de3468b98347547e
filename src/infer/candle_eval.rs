//! A candle model behind an encoder, evaluating a batch in one forward pass.

use super::{to_side_to_move, Evaluator, InferError};
use crate::encode::{encode_f32, Encoder, Perspective};
use crate::game::Game;
use crate::model::ValueNet;
use candle_core::{Device, Tensor};

pub struct CandleEvaluator<G: Game> {
    encoder: Box<dyn Encoder<G>>,
    model: Box<dyn ValueNet>,
    device: Device,
    perspective: Perspective,
    label: String,
}

impl<G: Game> CandleEvaluator<G> {
    pub fn new(
        encoder: Box<dyn Encoder<G>>,
        model: Box<dyn ValueNet>,
        device: Device,
        label: impl Into<String>,
    ) -> Self {
        let perspective = encoder.spec().perspective;
        CandleEvaluator {
            encoder,
            model,
            device,
            perspective,
            label: label.into(),
        }
    }
}

impl<G: Game> Evaluator<G> for CandleEvaluator<G> {
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, InferError> {
        if states.is_empty() {
            return Ok(Vec::new());
        }
        let mut row = Vec::new();
        let mut batch = Vec::new();
        for s in states {
            encode_f32(self.encoder.as_ref(), s, &mut row);
            batch.extend_from_slice(&row);
        }
        let x = Tensor::from_vec(batch, (states.len(), row.len()), &self.device)?;
        let out = self.model.forward(&x)?.to_vec1::<f32>()?;
        Ok(states
            .iter()
            .zip(out)
            .map(|(s, v)| to_side_to_move(s, v, self.perspective))
            .collect())
    }

    fn name(&self) -> String {
        self.label.clone()
    }
}
