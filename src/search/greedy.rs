//! NETWORK / greedy: no lookahead; plays the move whose resulting position
//! the evaluator values best for the mover. Ties are broken at random.

use super::{pick, Budget, Player, SearchError};
use crate::game::{Game, Outcome};
use crate::infer::Evaluator;
use crate::search::Chosen;
use crate::util::SeededRng;
use std::sync::Arc;

pub struct GreedyPlayer<G: Game> {
    evaluator: Arc<dyn Evaluator<G>>,
    /// Score finished games by their result instead of by the evaluator.
    exact_terminal: bool,
}

impl<G: Game> GreedyPlayer<G> {
    /// `exact_terminal = false` is the published NETWORK player: the
    /// evaluator alone judges every resulting position, even a finished one.
    pub fn new(evaluator: Arc<dyn Evaluator<G>>, exact_terminal: bool) -> Self {
        GreedyPlayer {
            evaluator,
            exact_terminal,
        }
    }
}

/// The move of `state` that `evaluator` likes best for the side to move.
pub fn greedy_choice<G: Game>(
    evaluator: &dyn Evaluator<G>,
    exact_terminal: bool,
    state: &G,
    rng: &mut SeededRng,
) -> Result<G::Move, SearchError> {
    let mut moves = Vec::new();
    state.legal_moves(&mut moves);
    if moves.is_empty() {
        return Err(SearchError::NoMoves);
    }
    let me = state.side_to_move();
    let children: Vec<G> = moves
        .iter()
        .map(|&m| {
            let mut c = state.clone();
            c.play(m);
            c
        })
        .collect();
    let mut scores = vec![0f32; moves.len()];
    let mut to_eval = Vec::new();
    let mut idx = Vec::new();
    for (i, c) in children.iter().enumerate() {
        match c.outcome() {
            Some(o) if exact_terminal => {
                scores[i] = match o {
                    Outcome::Draw => 0.0,
                    _ => o.value_for(me) * 1e6,
                }
            }
            _ => {
                to_eval.push(c.clone());
                idx.push(i);
            }
        }
    }
    let values = evaluator.evaluate(&to_eval)?;
    for (i, v) in idx.into_iter().zip(values) {
        // The child's value is for its side to move: the opponent, or the
        // same side where one side moves again (Arimaa's steps).
        let c = &children[i];
        scores[i] = if c.side_to_move() == me { v } else { -v };
    }
    let best = scores.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let ties: Vec<G::Move> = moves
        .iter()
        .zip(&scores)
        .filter(|(_, &s)| s == best)
        .map(|(&m, _)| m)
        .collect();
    Ok(if ties.is_empty() {
        pick(&moves, rng) // all NaN: the evaluator gave nothing usable
    } else {
        pick(&ties, rng)
    })
}

impl<G: Game> Player<G> for GreedyPlayer<G> {
    fn name(&self) -> String {
        format!("greedy({})", self.evaluator.name())
    }

    fn choose_within(&self, state: &G, _budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        greedy_choice(self.evaluator.as_ref(), self.exact_terminal, state, rng)
    }
}
