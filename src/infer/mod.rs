//! Evaluators: positions in, values out.
//!
//! A network is valued by a [`ModelEvaluator`] over a [`Backend`] that
//! runs it; [`weights_evaluator_on`] is the one place that picks the
//! backend for a model and device.
//!
//! An [`Evaluator`] returns one value per position from the point of view of
//! that position's side to move (positive is good for the mover), whatever
//! perspective its encoder was trained in. Evaluators are `Send + Sync`:
//! search threads share one behind an `Arc`.

pub mod backend;
pub mod batched;
mod error;
mod from_weights;
pub mod hand;
mod model_evaluator;
mod native_eval;
pub mod plan;
mod priors;
mod split;

pub use backend::{Backend, BackendChoice};
pub use batched::{BatchOptions, BatchSplit, BatchStats, BatchedEvaluator};
pub use error::InferError;
pub use from_weights::{
    flat_from_tensors, mlp_evaluator, tensors_from_flat, weights_backend, weights_evaluator,
    weights_evaluator_on,
};
pub use model_evaluator::ModelEvaluator;
pub use native_eval::native_values;
pub use priors::priors;
pub use split::EvalSplit;

use crate::encode::Perspective;
use crate::game::Game;

/// What an evaluator says about one position.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// On `[-1, 1]`, for the side to move.
    pub value: f32,
    /// Move preferences (logits) per board point `row * size + col`, from
    /// models with a policy head; [`priors`] turns them into move priors.
    pub policy: Option<Vec<f32>>,
}

impl Evaluation {
    /// The values of `evals`, for evaluators whose values come with their
    /// full evaluations.
    pub fn values(evals: Vec<Evaluation>) -> Vec<f32> {
        evals.into_iter().map(|e| e.value).collect()
    }
}

/// Values of positions for their side to move.
pub trait Evaluator<G: Game>: Send + Sync {
    /// One value on `[-1, 1]` per position, for its side to move.
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, InferError>;

    /// Values and, for models with a policy head, policy logits. The
    /// default has no policy.
    fn evaluate_full(&self, states: &[G]) -> Result<Vec<Evaluation>, InferError> {
        Ok(self
            .evaluate(states)?
            .into_iter()
            .map(|value| Evaluation {
                value,
                policy: None,
            })
            .collect())
    }

    /// [`Evaluator::evaluate_full`], with where its time went added to
    /// `split`. By default the whole call counts as the network's.
    fn evaluate_full_split(
        &self,
        states: &[G],
        split: &mut EvalSplit,
    ) -> Result<Vec<Evaluation>, InferError> {
        split.time(|s| &mut s.network, || self.evaluate_full(states))
    }

    /// Whether [`Evaluator::evaluate_full`] gives policies.
    fn has_policy(&self) -> bool {
        false
    }

    /// Whether many positions in one call cost much less each than one at
    /// a time (a candle model: yes; a plain-Rust network or formula: no,
    /// and a search does better pruning than valuing whole frontiers).
    fn prefers_batches(&self) -> bool {
        true
    }

    /// A short name for reports.
    fn name(&self) -> String;
}

/// Converts a model output in `perspective` to the side to move's value.
#[inline]
pub fn to_side_to_move<G: Game>(state: &G, value: f32, perspective: Perspective) -> f32 {
    match perspective {
        Perspective::SideToMove => value,
        Perspective::FirstPlayer => state.side_to_move().sign() * value,
    }
}
