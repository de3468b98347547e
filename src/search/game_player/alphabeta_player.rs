//! The `alphabeta` player.

use super::spec::DEFAULT_DEPTH;
use crate::game::Game;
use crate::search::alphabeta::{search_with_progress, SearchLimits, SearchResult};
use crate::search::scorer::Scorer;
use crate::search::{legal_or_none, Chosen};
use crate::search::{tighter, Budget, Found, Player, SearchInfo, Searched, Watch};
use crate::util::SeededRng;
use rand::seq::SliceRandom;
use std::time::{Duration, Instant};

/// `alphabeta`: iterative deepening negamax; the root moves are shuffled
/// first so that equal scores are broken at random.
pub struct AlphaBetaPlayer<G: Game> {
    pub(super) depth: Option<u32>,
    pub(super) time: Option<Duration>,
    pub(super) nodes: Option<u64>,
    pub(super) eval: Scorer<G>,
    pub(super) label: String,
}

impl<G: Game> Player<G> for AlphaBetaPlayer<G> {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn choose_within(&self, state: &G, budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        self.search(state, budget, rng, &mut |_| {}).map(|s| s.mv)
    }

    /// Iterative deepening to the tighter of the spec's and the budget's
    /// depth, stopped by the tighter time and nodes or the stop flag (the
    /// deepest finished iteration's move; a random legal one when none
    /// finished).
    fn search(&self, state: &G, budget: &Budget, rng: &mut SeededRng, watch: Watch) -> Found<G> {
        let mut moves = legal_or_none(state)?;
        moves.shuffle(rng);
        let limits = SearchLimits {
            max_depth: tighter(self.depth, budget.depth).unwrap_or(DEFAULT_DEPTH),
            deadline: {
                let now = Instant::now();
                tighter(self.time.map(|t| now + t), budget.deadline(now))
            },
            max_nodes: tighter(self.nodes, budget.nodes),
            stop: budget.stop_flag(),
        };
        let info = |r: &SearchResult<G::Move>| SearchInfo {
            depth: Some(r.depth),
            nodes: Some(r.nodes),
            score: Some(self.eval.score_of(r.score)),
            ..SearchInfo::default()
        };
        let r = search_with_progress(state, Some(&moves), &self.eval, &limits, |r| {
            watch(&info(r))
        });
        self.eval.take_error()?;
        Ok(Searched {
            mv: r.best.unwrap_or(moves[0]),
            info: info(&r),
        })
    }
}
