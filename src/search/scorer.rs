//! The static score alpha-beta and greedy search with, from any evaluator
//! a spec can name, and the evaluator MCTS searches with: the one place
//! where players (matches, self-play, both engines) turn an `eval=` name
//! into something to search with.

use super::alphabeta::{PositionEval, WIN_THRESHOLD};
use super::evaluators::PlayerContext;
use super::evaluators::{evaluator_by_name, hand_eval_by_name};
use super::mcts::MctsConfig;
use super::{Score, SearchError};
use crate::game::Game;
use crate::games::GameSupport;
use crate::infer::batched::{BatchOptions, BatchedEvaluator};
use crate::infer::hand::HandEval;
use crate::infer::{Evaluator, InferError};
use std::sync::{Arc, Mutex};

/// A static score for the side to move: a hand evaluator's own integer
/// score, or any other evaluator's value in ten-thousandths. Evaluator
/// errors cannot cross the search's score function, so they are kept and
/// reported by the player after the search ([`Scorer::take_error`]).
pub struct Scorer<G: Game> {
    source: Source<G>,
    error: Mutex<Option<String>>,
}

enum Source<G: Game> {
    Hand(HandEval<G>),
    /// Positions go to a model in batches (one forward pass).
    Model(Arc<dyn Evaluator<G>>),
}

impl<G: GameSupport> Scorer<G> {
    /// The evaluator `name` of `G` (a hand evaluator, `random` or
    /// `ckpt:PATH`) for the boards and device of `ctx`; the error names the
    /// evaluator and what is wrong.
    pub fn by_name(name: &str, ctx: &PlayerContext) -> Result<Scorer<G>, SearchError> {
        let source = match hand_eval_by_name::<G>(name)? {
            Some(hand) => Source::Hand(hand),
            None => Source::Model(evaluator_by_name::<G>(name, ctx.size, &ctx.eval)?),
        };
        Ok(Scorer {
            source,
            error: Mutex::new(None),
        })
    }
}

impl<G: Game> Scorer<G> {
    /// A hand evaluator built in memory (`plies tune`'s candidates).
    pub fn from_hand(hand: HandEval<G>) -> Scorer<G> {
        Scorer {
            source: Source::Hand(hand),
            error: Mutex::new(None),
        }
    }

    /// The score of `state` for its side to move.
    pub fn score(&self, state: &G) -> i32 {
        match &self.source {
            Source::Hand(hand) => hand.score(state),
            Source::Model(model) => match model.evaluate(std::slice::from_ref(state)) {
                Ok(v) => value_score(v.first().copied().unwrap_or(0.0)),
                Err(e) => {
                    self.note_error(e.to_string());
                    0
                }
            },
        }
    }

    /// A score of this scorer's as a [`Score`]: a hand evaluator's own
    /// units, or a model's value on `[-1, 1]`; forced results stay as
    /// they are.
    pub fn score_of(&self, score: i32) -> Score {
        if self.model().is_some() && score.abs() < WIN_THRESHOLD {
            Score::Value(score as f64 / 10_000.0)
        } else {
            Score::Hand(score)
        }
    }

    /// A score of this scorer's as a value on `[-1, 1]` for the side to
    /// move: a hand evaluator's squashed by its scale, a model's as it
    /// was (clipped: a network with a linear output can step outside),
    /// forced results +-1.
    pub fn value_of(&self, score: i32) -> f32 {
        if score.abs() >= WIN_THRESHOLD {
            return score.signum() as f32;
        }
        match &self.source {
            Source::Hand(hand) => (score as f32 / hand.scale()).tanh(),
            Source::Model(_) => (score as f32 / 10_000.0).clamp(-1.0, 1.0),
        }
    }

    /// The score difference that a difference of `value` (on the scale of
    /// [`Scorer::value_of`]) makes around an even position: a change of
    /// mind in this scorer's units.
    pub fn score_span(&self, value: f32) -> i32 {
        let per_value = match &self.source {
            Source::Hand(hand) => hand.scale(),
            Source::Model(_) => 10_000.0,
        };
        (value * per_value).round().max(1.0) as i32
    }

    /// The evaluator behind the scores, when it is not a hand formula.
    pub fn model(&self) -> Option<&Arc<dyn Evaluator<G>>> {
        match &self.source {
            Source::Hand(_) => None,
            Source::Model(model) => Some(model),
        }
    }

    /// The first evaluator error since the last call, if any.
    pub fn take_error(&self) -> Result<(), SearchError> {
        match self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(SearchError::Infer(InferError::Other(e))),
            None => Ok(()),
        }
    }

    /// Keeps `why` for [`Scorer::take_error`] (the first one wins).
    pub fn note_error(&self, why: String) {
        self.error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(why);
    }
}

/// A model's positions go to it in batches (unless it is as cheap one at a
/// time); hand formulas one at a time.
impl<G: Game> PositionEval<G> for Scorer<G> {
    fn eval(&self, state: &G) -> i32 {
        self.score(state)
    }

    fn prefers_batches(&self) -> bool {
        self.model().is_some_and(|m| m.prefers_batches())
    }

    fn eval_batch(&self, states: &[G]) -> Vec<i32> {
        let Some(model) = self.model() else {
            return states.iter().map(|s| self.score(s)).collect();
        };
        model_scores(model.as_ref(), states).unwrap_or_else(|why| {
            self.note_error(why.to_string());
            vec![0; states.len()]
        })
    }
}

/// An evaluator's value in the scorer's integer units (ten-thousandths);
/// NaN scores 0.
pub fn value_score(v: f32) -> i32 {
    let cap = (WIN_THRESHOLD / 2) as f32;
    if v.is_nan() {
        return 0;
    }
    (v * 10_000.0).clamp(-cap, cap).round() as i32
}

/// A model's values of `states` in one call, as scores; an evaluator that
/// answers the wrong number of values is an error too.
pub fn model_scores<G: Game>(
    model: &dyn Evaluator<G>,
    states: &[G],
) -> Result<Vec<i32>, InferError> {
    let values = model.evaluate(states)?;
    if values.len() != states.len() {
        return Err(InferError::Other(format!(
            "evaluator {} answered {} values for {} positions",
            model.name(),
            values.len(),
            states.len()
        )));
    }
    Ok(values.into_iter().map(value_score).collect())
}

/// The evaluator an MCTS config names (`None`: random playouts). The
/// threads of one search share a batched service in front of a model;
/// hand evaluators are cheaper called directly.
pub fn mcts_evaluator<G: GameSupport>(
    cfg: &MctsConfig,
    ctx: &PlayerContext,
) -> Result<Option<Arc<dyn Evaluator<G>>>, SearchError> {
    let Some(name) = cfg.eval.as_deref() else {
        return Ok(None);
    };
    let eval = evaluator_by_name::<G>(name, ctx.size, &ctx.eval)?;
    let gpu = !ctx.eval.device.is_cpu();
    Ok(Some(match cfg.service_batch_on(gpu) {
        Some(max_batch) if name.starts_with("ckpt:") => {
            let opts = BatchOptions {
                max_batch,
                workers: BatchOptions::workers_on(gpu),
                ..BatchOptions::default()
            };
            let service =
                BatchedEvaluator::new(eval, opts).map_err(|why| SearchError::BadSpec {
                    spec: cfg.to_string(),
                    why: why.to_string(),
                })?;
            Arc::new(service)
        }
        _ => eval,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;

    /// A model whose linear output overshoots the value range.
    struct Overshooting(f32);

    impl Evaluator<TicTacToe> for Overshooting {
        fn evaluate(&self, states: &[TicTacToe]) -> Result<Vec<f32>, InferError> {
            Ok(vec![self.0; states.len()])
        }

        fn name(&self) -> String {
            "overshooting".into()
        }
    }

    fn model(v: f32) -> Scorer<TicTacToe> {
        Scorer {
            source: Source::Model(Arc::new(Overshooting(v))),
            error: Mutex::new(None),
        }
    }

    #[test]
    fn a_models_value_stays_in_range_when_its_output_does_not() {
        let state = TicTacToe::new();
        for (out, value) in [(1.7, 1.0), (-1.02, -1.0), (0.25, 0.25)] {
            let scorer = model(out);
            assert_eq!(scorer.value_of(scorer.score(&state)), value, "{out}");
        }
    }
}
