//! A candle model behind an encoder, evaluating a batch in one forward pass.

use super::{to_side_to_move, Evaluation, Evaluator, InferError};
use crate::encode::{Encoder, Perspective};
use crate::game::Game;
use crate::model::{OutputActivation, ValueNet};
use candle_core::{Device, Tensor};

/// Values on `[-1, 1]`: a sigmoid model's `v` in `[0, 1]` becomes `2v - 1`.
pub struct CandleEvaluator<G: Game> {
    encoder: Box<dyn Encoder<G>>,
    model: Box<dyn ValueNet>,
    device: Device,
    perspective: Perspective,
    shape: [usize; 3],
    globals: usize,
    output: OutputActivation,
    has_policy: bool,
    label: String,
}

impl<G: Game> CandleEvaluator<G> {
    pub fn new(
        encoder: Box<dyn Encoder<G>>,
        model: Box<dyn ValueNet>,
        device: Device,
        label: impl Into<String>,
    ) -> Self {
        let spec = encoder.spec();
        let output = model.output();
        let has_policy = model.has_policy();
        CandleEvaluator {
            encoder,
            model,
            device,
            perspective: spec.perspective,
            shape: spec.shape,
            globals: spec.globals,
            output,
            has_policy,
            label: label.into(),
        }
    }
}

impl<G: Game> CandleEvaluator<G> {
    /// Encodes `states` and runs the model once; `policy` asks for the
    /// policy head's logits too.
    fn run(&self, states: &[G], policy: bool) -> Result<Vec<Evaluation>, InferError> {
        if states.is_empty() {
            return Ok(Vec::new());
        }
        let n = states.len();
        let [c, h, w] = self.shape;
        let mut planes_i8 = vec![0i8; c * h * w];
        let mut planes = Vec::with_capacity(n * c * h * w);
        let mut row_globals = vec![0f32; self.globals];
        let mut globals = Vec::with_capacity(n * self.globals);
        for s in states {
            self.encoder.encode(s, &mut planes_i8, &mut row_globals);
            planes.extend(planes_i8.iter().map(|&v| v as f32));
            globals.extend_from_slice(&row_globals);
        }
        let x = Tensor::from_vec(planes, (n, c, h, w), &self.device)?;
        let g = (self.globals > 0)
            .then(|| Tensor::from_vec(globals, (n, self.globals), &self.device))
            .transpose()?;
        let out = self.model.forward(&x, g.as_ref(), false)?;
        let values = out.value.to_vec1::<f32>()?;
        let policies = match (policy, out.policy) {
            (true, Some(p)) => Some(p.to_vec2::<f32>()?),
            _ => None,
        };
        let mut policies = policies.map(|p| p.into_iter());
        Ok(states
            .iter()
            .zip(values)
            .map(|(s, v)| Evaluation {
                value: to_side_to_move(s, self.output.to_symmetric(v), self.perspective),
                policy: policies.as_mut().and_then(|p| p.next()),
            })
            .collect())
    }
}

impl<G: Game> Evaluator<G> for CandleEvaluator<G> {
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, InferError> {
        self.run(states, false).map(Evaluation::values)
    }

    fn evaluate_full(&self, states: &[G]) -> Result<Vec<Evaluation>, InferError> {
        self.run(states, self.has_policy)
    }

    fn has_policy(&self) -> bool {
        self.has_policy
    }

    fn name(&self) -> String {
        self.label.clone()
    }
}
