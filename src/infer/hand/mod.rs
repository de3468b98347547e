//! Hand-written evaluators: fixed formulas, no training.
//!
//! A [`HandEvaluator`] is a formula: the value of a position for its side
//! to move in its own units (positive is good for the mover). A game
//! offers its formulas by name as [`HandEval`]s
//! (`GameSupport::hand_eval` in `games`): an integer score for
//! alpha-beta, and an [`Evaluator`] like any model, its score squashed to
//! `[-1, 1]` here and nowhere else, so every player that takes an
//! evaluator (greedy, alpha-beta, MCTS) can use it.

use super::{Evaluator, InferError};
use crate::game::Game;
use std::sync::Arc;

/// A fixed evaluation formula for positions of `G`.
pub trait HandEvaluator<G: Game>: Send + Sync {
    /// A short name for reports.
    fn name(&self) -> &str;
    /// The value of `state` for its side to move.
    fn value(&self, state: &G) -> f32;
}

/// The largest hand score: half the search's win threshold, so no static
/// score reads as a won game.
pub const HAND_SCORE_CAP: i32 = 495_000;

/// A game's hand evaluator, served by name: an integer score for the side
/// to move (the formula's value in thousandths, capped at
/// [`HAND_SCORE_CAP`]) and, as an [`Evaluator`], that score squashed to
/// `tanh(score / scale)`, `scale` being a clear advantage.
#[derive(Clone)]
pub struct HandEval<G: Game> {
    name: String,
    scale: f32,
    score: Arc<dyn Fn(&G) -> i32 + Send + Sync>,
}

impl<G: Game> HandEval<G> {
    /// A hand evaluator scoring in integer units directly.
    pub fn new(
        name: &str,
        scale: f32,
        score: impl Fn(&G) -> i32 + Send + Sync + 'static,
    ) -> HandEval<G> {
        HandEval {
            name: name.to_string(),
            scale,
            score: Arc::new(score),
        }
    }

    /// A formula's value in thousandths, capped at [`HAND_SCORE_CAP`].
    pub fn from_formula(
        name: &str,
        scale: f32,
        formula: impl HandEvaluator<G> + 'static,
    ) -> HandEval<G> {
        let cap = HAND_SCORE_CAP as f32;
        HandEval::new(name, scale, move |g: &G| {
            (formula.value(g) * 1000.0).clamp(-cap, cap).round() as i32
        })
    }

    /// The integer score of `state` for its side to move.
    pub fn score(&self, state: &G) -> i32 {
        (self.score)(state)
    }

    /// The score of a clear advantage.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// The score on `[-1, 1]`: the one place hand scores are squashed.
    pub fn value(&self, state: &G) -> f32 {
        (self.score(state) as f32 / self.scale).tanh()
    }
}

impl<G: Game> Evaluator<G> for HandEval<G> {
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, InferError> {
        Ok(states.iter().map(|s| self.value(s)).collect())
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

pub mod amazons_eval;
pub mod arimaa_material;
pub use amazons_eval::{AmazonsLieberum, AmazonsMinDist};
pub mod gomoku_eval;
pub use gomoku_eval::{
    default_gomoku_eval, tuned_gomoku_eval, GOMOKU_FEATURES, GOMOKU_FEATURE_SET,
};
pub mod linear;
pub use linear::{FeatureSet, LinearEval};
pub mod pentago_eval;
pub use pentago_eval::{
    default_pentago_eval, pentago_features, PENTAGO_FEATURES, PENTAGO_FEATURE_SET,
};
pub mod weights_file;
pub use weights_file::{WeightsError, WeightsFile};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Side, TicTacToe};

    struct Constant(f32);

    impl HandEvaluator<TicTacToe> for Constant {
        fn name(&self) -> &str {
            "constant"
        }
        fn value(&self, _state: &TicTacToe) -> f32 {
            self.0
        }
    }

    #[test]
    fn formulas_score_in_thousandths_capped_and_squash_by_their_scale() {
        let g = TicTacToe::new();
        let e = HandEval::from_formula("c", 2000.0, Constant(1.5));
        assert_eq!(e.score(&g), 1500);
        assert!((e.value(&g) - 0.75f32.tanh()).abs() < 1e-6);
        assert_eq!(e.evaluate(&[g, g]).unwrap(), vec![e.value(&g); 2]);
        assert_eq!(Evaluator::name(&e), "c");
        let huge = HandEval::from_formula("h", 2000.0, Constant(1e9));
        assert_eq!(huge.score(&g), HAND_SCORE_CAP);
        let direct = HandEval::new("d", 10.0, |g: &TicTacToe| match g.side_to_move() {
            Side::First => 10,
            Side::Second => -10,
        });
        assert!((direct.value(&g) - 1f32.tanh()).abs() < 1e-6);
    }
}
