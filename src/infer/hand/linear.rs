//! Weighted hand evaluators: a game's feature vector and a weight vector,
//! scored `w · f`. The features are fixed code ([`FeatureSet`]); the
//! weights are data, hand-set by default and tuned by `plies tune`, saved
//! in a weights file ([`super::weights_file`]).

use super::HandEvaluator;
use crate::game::{Game, Outcome};

/// A game's features for a weighted evaluator: what the weights multiply.
pub struct FeatureSet<G: Game> {
    /// The evaluator's name (`pentago-features`), as `eval=` names it.
    pub name: &'static str,
    /// One name per feature, in order (weights files list them).
    pub feature_names: fn() -> Vec<String>,
    /// Writes the features of an unfinished position, for its side to
    /// move, into a slice of `feature_names().len()` zeros.
    pub features: fn(&G, &mut [f32]),
    /// The hand-set weights.
    pub default_weights: fn() -> Vec<f32>,
    /// The value of a won finished game (a lost one is its negation).
    pub terminal: f32,
    /// A clear advantage in the [`super::HandEval`] score (thousandths).
    pub scale: f32,
}

impl<G: Game> Clone for FeatureSet<G> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<G: Game> Copy for FeatureSet<G> {}

impl<G: Game> FeatureSet<G> {
    /// The number of features (and weights).
    pub fn len(&self) -> usize {
        (self.default_weights)().len()
    }

    /// Whether the set has no features.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The features of `state` for its side to move.
    pub fn of(&self, state: &G) -> Vec<f32> {
        let mut f = vec![0.0; self.len()];
        (self.features)(state, &mut f);
        f
    }
}

/// `w · f` over a [`FeatureSet`]; a finished game scores
/// `±terminal` (0 for a draw).
#[derive(Clone)]
pub struct LinearEval<G: Game> {
    set: FeatureSet<G>,
    weights: Vec<f32>,
}

impl<G: Game> LinearEval<G> {
    /// `weights` must have one entry per feature (weights files are
    /// checked when they are read).
    pub fn new(set: FeatureSet<G>, weights: Vec<f32>) -> Self {
        assert_eq!(
            weights.len(),
            set.len(),
            "{}: one weight per feature",
            set.name
        );
        LinearEval { set, weights }
    }

    /// The set's hand-set weights.
    pub fn default_for(set: FeatureSet<G>) -> Self {
        LinearEval::new(set, (set.default_weights)())
    }

    pub fn weights(&self) -> &[f32] {
        &self.weights
    }
}

impl<G: Game> HandEvaluator<G> for LinearEval<G> {
    fn name(&self) -> &str {
        self.set.name
    }

    fn value(&self, state: &G) -> f32 {
        match state.outcome() {
            Some(Outcome::Draw) => return 0.0,
            Some(o) => return self.set.terminal * o.value_for(state.side_to_move()),
            None => {}
        }
        let mut f = [0.0f32; 64];
        let n = self.weights.len();
        let mut heap;
        let f: &mut [f32] = if n <= f.len() {
            &mut f[..n]
        } else {
            heap = vec![0.0; n];
            &mut heap
        };
        (self.set.features)(state, f);
        f.iter().zip(&self.weights).map(|(f, w)| f * w).sum()
    }
}
