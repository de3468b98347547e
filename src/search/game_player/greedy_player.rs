//! The `greedy` player: the move whose position the evaluator values best.

use crate::game::Game;
use crate::search::alphabeta::terminal_score;
use crate::search::scorer::{value_score, Scorer};
use crate::search::{legal_or_none, Chosen};
use crate::search::{pick, Budget, Found, Player, SearchError, SearchInfo, Searched, Watch};
use crate::util::SeededRng;
use std::time::Instant;

/// Positions `greedy` values per evaluator call under a time budget or a
/// stop flag: between two calls it looks at both.
const GREEDY_CHUNK: usize = 256;

/// `greedy`: the best evaluated successor, finished games scored exactly;
/// ties broken at random.
pub struct EvalGreedyPlayer<G: Game> {
    pub(super) eval: Scorer<G>,
    pub(super) label: String,
}

impl<G: Game> Player<G> for EvalGreedyPlayer<G> {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn choose_within(&self, state: &G, budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        self.search(state, budget, rng, &mut |_| {}).map(|s| s.mv)
    }

    /// Values every successor, a model's in one call; under a time budget
    /// or a stop flag in chunks of [`GREEDY_CHUNK`], answering with the
    /// best of those valued when either runs out (at least one chunk).
    fn search(&self, state: &G, budget: &Budget, rng: &mut SeededRng, _: Watch) -> Found<G> {
        let moves = legal_or_none(state)?;
        let deadline = budget.deadline(Instant::now());
        let bounded = deadline.is_some() || budget.stop.is_some();
        let chunk = if bounded { GREEDY_CHUNK } else { moves.len() };
        let mut best = i32::MIN;
        let mut ties = Vec::new();
        let mut seen = 0;
        for part in moves.chunks(chunk) {
            let out_of_time = deadline.is_some_and(|d| Instant::now() >= d);
            if seen > 0 && (budget.stopped() || out_of_time) {
                break;
            }
            for (mv, v) in part.iter().zip(self.successor_scores(state, part)?) {
                if v > best {
                    best = v;
                    ties.clear();
                }
                if v == best {
                    ties.push(*mv);
                }
            }
            seen += part.len();
        }
        self.eval.take_error()?;
        Ok(Searched {
            mv: pick(&ties, rng),
            info: SearchInfo {
                nodes: Some(seen as u64),
                planned: Some(moves.len() as u64),
                score: Some(self.eval.score_of(best)),
                ..SearchInfo::default()
            },
        })
    }
}

impl<G: Game> EvalGreedyPlayer<G> {
    /// `greedy` on a scorer built in memory, named `label`.
    pub fn new(eval: Scorer<G>, label: impl Into<String>) -> Self {
        EvalGreedyPlayer {
            eval,
            label: label.into(),
        }
    }

    /// The scores of the positions `moves` lead to, for the side to move
    /// in `state`; a model values the unfinished ones in one call.
    fn successor_scores(&self, state: &G, moves: &[G::Move]) -> Result<Vec<i32>, SearchError> {
        let children: Vec<G> = moves
            .iter()
            .map(|&mv| {
                let mut child = state.clone();
                child.play(mv);
                child
            })
            .collect();
        let batched: Option<Vec<f32>> = match self.eval.model() {
            Some(e) => {
                let open: Vec<G> = children
                    .iter()
                    .filter(|c| c.outcome().is_none())
                    .cloned()
                    .collect();
                Some(e.evaluate(&open)?)
            }
            None => None,
        };
        let mut open_values = batched.iter().flatten();
        // A child's value is for the opponent, who moves there.
        Ok(children
            .iter()
            .map(|child| match child.outcome() {
                Some(o) => -terminal_score(o, child.side_to_move(), 1),
                None => match open_values.next() {
                    Some(&value) => -value_score(value),
                    None => -self.eval.score(child),
                },
            })
            .collect())
    }
}
