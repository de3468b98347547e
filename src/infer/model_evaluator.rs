//! The one evaluator of networks: encoding, perspective and the output
//! activation, once, over any [`Backend`].

use super::backend::{Backend, Encoded};
use super::{to_side_to_move, EvalSplit, Evaluation, Evaluator, InferError};
use crate::encode::{Encoder, Perspective};
use crate::game::Game;
use std::sync::Arc;

/// Values on `[-1, 1]` for the side to move from a network's raw outputs
/// (a sigmoid model's `v` in `[0, 1]` becomes `2v - 1`).
pub struct ModelEvaluator<G: Game> {
    encoder: Arc<dyn Encoder<G>>,
    backend: Box<dyn Backend>,
    perspective: Perspective,
    label: String,
}

impl<G: Game> ModelEvaluator<G> {
    pub fn new(
        encoder: impl Into<Arc<dyn Encoder<G>>>,
        backend: Box<dyn Backend>,
        label: impl Into<String>,
    ) -> Self {
        let encoder = encoder.into();
        ModelEvaluator {
            perspective: encoder.perspective(),
            encoder,
            backend,
            label: label.into(),
        }
    }

    /// The backend's name (`candle-cpu`, `native-mlp`, ...).
    pub fn backend_name(&self) -> String {
        self.backend.name()
    }

    fn run(
        &self,
        states: &[G],
        policy: bool,
        mut split: Option<&mut EvalSplit>,
    ) -> Result<Vec<Evaluation>, InferError> {
        if states.is_empty() {
            return Ok(Vec::new());
        }
        let batch = EvalSplit::time_into(
            split.as_deref_mut(),
            |s| &mut s.encode,
            || Encoded::new(self.encoder.as_ref(), states),
        );
        let out = EvalSplit::time_into(
            split.as_deref_mut(),
            |s| &mut s.network,
            || self.backend.run(&batch, policy),
        )?;
        if out.values.len() != states.len() {
            return Err(InferError::Other(format!(
                "{} returned {} values for {} positions",
                self.backend.name(),
                out.values.len(),
                states.len()
            )));
        }
        let output = self.backend.output();
        EvalSplit::time_into(
            split,
            |s| &mut s.finish,
            || {
                let mut policies = out.policy.map(Vec::into_iter);
                Ok(states
                    .iter()
                    .zip(out.values)
                    .map(|(s, v)| Evaluation {
                        value: to_side_to_move(s, output.to_symmetric(v), self.perspective),
                        policy: policies.as_mut().and_then(Iterator::next),
                    })
                    .collect())
            },
        )
    }
}

impl<G: Game> Evaluator<G> for ModelEvaluator<G> {
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, InferError> {
        self.run(states, false, None).map(Evaluation::values)
    }

    fn evaluate_full(&self, states: &[G]) -> Result<Vec<Evaluation>, InferError> {
        self.run(states, self.backend.has_policy(), None)
    }

    fn evaluate_full_split(
        &self,
        states: &[G],
        split: &mut EvalSplit,
    ) -> Result<Vec<Evaluation>, InferError> {
        self.run(states, self.backend.has_policy(), Some(split))
    }

    fn has_policy(&self) -> bool {
        self.backend.has_policy()
    }

    fn prefers_batches(&self) -> bool {
        self.backend.prefers_batches()
    }

    fn name(&self) -> String {
        self.label.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::tictactoe_encoder;
    use crate::game::{Game, TicTacToe};
    use crate::infer::backend::Outputs;
    use crate::model::OutputActivation;

    /// A network whose output for a row is a fixed affine map of its
    /// planes' sum, `rows_out` values per batch, and a policy of the
    /// row's planes.
    struct Probe {
        output: OutputActivation,
        short_by: usize,
    }

    impl Backend for Probe {
        fn run(&self, batch: &Encoded, policy: bool) -> Result<Outputs, InferError> {
            let p = batch.plane_len();
            let rows = batch.rows - self.short_by;
            let sum = |i: usize| {
                batch.planes[i * p..(i + 1) * p]
                    .iter()
                    .map(|&v| f32::from(v))
                    .sum::<f32>()
            };
            Ok(Outputs {
                values: (0..rows).map(|i| 0.5 + 0.1 * sum(i)).collect(),
                policy: policy.then(|| {
                    (0..rows)
                        .map(|i| {
                            batch.planes[i * p..(i + 1) * p]
                                .iter()
                                .map(|&v| f32::from(v))
                                .collect()
                        })
                        .collect()
                }),
            })
        }
        fn output(&self) -> OutputActivation {
            self.output
        }
        fn has_policy(&self) -> bool {
            true
        }
        fn name(&self) -> String {
            "probe".into()
        }
    }

    fn positions() -> Vec<TicTacToe> {
        [".../.../...", "x../.../...", "x../.o./...", "xo./.x./..o"]
            .iter()
            .map(|t| TicTacToe::from_text(t).expect("a position"))
            .collect()
    }

    #[test]
    fn maps_outputs_to_the_side_to_move_once_per_position() {
        for (name, output) in [
            ("tictactoe-9", OutputActivation::Sigmoid),
            ("tictactoe-9", OutputActivation::Identity),
            ("tictactoe-2x3x3", OutputActivation::Sigmoid),
        ] {
            let Ok(enc) = tictactoe_encoder(name) else {
                panic!("no encoder {name}");
            };
            let perspective = enc.perspective();
            let probe = Probe {
                output,
                short_by: 0,
            };
            let states = positions();
            let batch = Encoded::new(enc.as_ref(), &states);
            let raw = probe.run(&batch, true).expect("outputs");
            let eval = ModelEvaluator::new(enc, Box::new(probe), "probe");
            let full = eval.evaluate_full(&states).expect("evaluations");
            for ((s, e), (v, p)) in states
                .iter()
                .zip(&full)
                .zip(raw.values.iter().zip(raw.policy.expect("policy")))
            {
                let want = to_side_to_move(s, output.to_symmetric(*v), perspective);
                assert_eq!(e.value, want, "{name} {}", s.to_text());
                assert_eq!(e.policy.as_ref(), Some(&p));
            }
            // The values alone are the same values.
            assert_eq!(
                eval.evaluate(&states).expect("values"),
                Evaluation::values(full)
            );
            assert!(eval.evaluate(&[]).expect("no positions").is_empty());
        }
    }

    #[test]
    fn a_backend_that_loses_positions_is_an_error_naming_it() {
        let enc = tictactoe_encoder("tictactoe-9").expect("encoder");
        let probe = Probe {
            output: OutputActivation::Sigmoid,
            short_by: 1,
        };
        let eval = ModelEvaluator::new(enc, Box::new(probe), "probe");
        let err = eval.evaluate(&positions()).expect_err("a count mismatch");
        assert!(
            err.to_string()
                .contains("probe returned 3 values for 4 positions"),
            "{err}"
        );
    }
}
