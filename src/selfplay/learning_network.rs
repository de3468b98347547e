//! NETWORK that learns while it plays: greedy on its current weights, and
//! after every game a TD(lambda) pass over that game's positions.

use crate::encode::Encoder;
use crate::game::{Game, Outcome};
use crate::infer::{mlp_evaluator, Evaluator, ModelEvaluator};
use crate::model::NativeMlp;
use crate::search::{greedy_choice, Player, SearchError};
use crate::train::{TdConfig, TdGame, TdLearner};
use crate::util::SeededRng;
use std::sync::Arc;

/// A finished game: every state (the final one included), the moves, the result.
pub type PlayedGame<G> = (Vec<G>, Vec<<G as Game>::Move>, Outcome);

pub struct LearningNetwork<G: Game> {
    pub net: NativeMlp,
    pub encoder: Arc<dyn Encoder<G>>,
    learner: TdLearner,
    pub exact_terminal: bool,
    pub games_learned: u64,
}

impl<G: Game> LearningNetwork<G> {
    pub fn new(
        net: NativeMlp,
        encoder: Arc<dyn Encoder<G>>,
        td: TdConfig,
        exact_terminal: bool,
    ) -> Self {
        let learner = TdLearner::new(td, &net);
        LearningNetwork {
            net,
            encoder,
            learner,
            exact_terminal,
            games_learned: 0,
        }
    }

    /// An evaluator on a snapshot of the current weights.
    pub fn evaluator(&self) -> ModelEvaluator<G> {
        mlp_evaluator(self.encoder.clone(), &self.net)
    }

    /// Plays one game against `opponent` (the network moves first if
    /// `network_first`), learns from it, and returns the states, moves and
    /// outcome.
    pub fn play_and_learn(
        &mut self,
        opponent: &dyn Player<G>,
        network_first: bool,
        rng: &mut SeededRng,
    ) -> Result<PlayedGame<G>, SearchError> {
        let mut state = G::new();
        let mut states = vec![state.clone()];
        let mut moves = Vec::new();
        let outcome = loop {
            if let Some(o) = state.outcome() {
                break o;
            }
            let network_to_move =
                (state.side_to_move() == crate::game::Side::First) == network_first;
            let mv = if network_to_move {
                let eval = NativeEvaluatorRef {
                    encoder: self.encoder.as_ref(),
                    net: &self.net,
                };
                greedy_choice(&eval, self.exact_terminal, &state, rng)?
            } else {
                opponent.choose(&state, rng)?
            };
            state.play(mv);
            moves.push(mv);
            states.push(state.clone());
        };
        if let Some(game) = TdGame::from_states(&states, self.encoder.as_ref()) {
            self.learner.learn_game(&mut self.net, &game);
            self.games_learned += 1;
        }
        Ok((states, moves, outcome))
    }
}

/// A borrowed evaluator, so move choice needs no copy of the weights.
struct NativeEvaluatorRef<'a, G: Game> {
    encoder: &'a dyn Encoder<G>,
    net: &'a NativeMlp,
}

impl<G: Game> Evaluator<G> for NativeEvaluatorRef<'_, G> {
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, crate::infer::InferError> {
        Ok(crate::infer::native_values(self.encoder, self.net, states))
    }

    fn name(&self) -> String {
        "learning-network".into()
    }
}
