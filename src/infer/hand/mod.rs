//! Hand-written evaluators: fixed formulas, no training.
//!
//! A [`HandEvaluator`] values a position for its side to move (positive is
//! good for the mover). [`HandAsEvaluator`] turns one into an
//! [`crate::infer::Evaluator`], so every player that takes an evaluator
//! (greedy, alpha-beta, MCTS) can use it.

use super::{Evaluator, InferError};
use crate::game::Game;

/// A fixed evaluation formula for positions of `G`.
pub trait HandEvaluator<G: Game>: Send + Sync {
    /// A short name for reports.
    fn name(&self) -> &str;
    /// The value of `state` for its side to move.
    fn value(&self, state: &G) -> f32;
}

/// Serves a [`HandEvaluator`] as an [`Evaluator`].
pub struct HandAsEvaluator<E>(pub E);

impl<G: Game, E: HandEvaluator<G>> Evaluator<G> for HandAsEvaluator<E> {
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, InferError> {
        Ok(states.iter().map(|s| self.0.value(s)).collect())
    }

    fn name(&self) -> String {
        self.0.name().to_string()
    }
}

pub mod amazons_eval;
pub mod arimaa_material;
pub use amazons_eval::{AmazonsLieberum, AmazonsMinDist};
pub mod pentago_eval;
pub use pentago_eval::{pentago_features, PentagoEval, PENTAGO_FEATURES};
