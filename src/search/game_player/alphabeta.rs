//! `alphabeta[:depth=D,time=SECS,nodes=N,eval=NAME]`: iterative-deepening
//! negamax alpha-beta with an evaluator, to `depth` moves
//! ([`DEFAULT_DEPTH`] unless the budget sets one), for at most `time` and
//! `nodes` a move; ties broken at random.

use super::build::resolve_eval;
use super::grammar::{SearchOptions, SEARCH_KEYS};
use super::{Options, PlayerKind};
use crate::game::Game;
use crate::games::GameSupport;
use crate::search::alphabeta::{search_with_progress, Extension, SearchLimits, SearchResult};
use crate::search::evaluators::PlayerContext;
use crate::search::scorer::Scorer;
use crate::search::SearchError;
use crate::search::{legal_or_none, Chosen};
use crate::search::{tighter, Budget, Found, Player, SearchInfo, Searched, Watch};
use crate::util::SeededRng;
use rand::seq::SliceRandom;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The deepest `alphabeta` search a spec may ask for.
const MAX_DEPTH: u32 = 64;

/// The deepest `alphabeta` iteration when neither the spec nor the budget
/// sets a depth.
pub const DEFAULT_DEPTH: u32 = 3;

/// The fall in value (on `[-1, 1]`) of the previous best move that makes
/// a position critical, so that a clock's extra time goes to it.
const CRITICAL_DROP: f32 = 0.1;

/// An `alphabeta` spec.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AlphaBetaSpec(pub SearchOptions);

impl fmt::Display for AlphaBetaSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write(f, "alphabeta")
    }
}

impl PlayerKind for AlphaBetaSpec {
    const NAMES: &'static [&'static str] = &["alphabeta"];

    fn parse(text: &str, name: &str, args: Option<&str>) -> Result<Self, SearchError> {
        let opts = Options::parse(text, name, args, &SEARCH_KEYS)?;
        SearchOptions::read(&opts, 1, MAX_DEPTH).map(AlphaBetaSpec)
    }

    fn build<G: GameSupport>(
        &self,
        ctx: &PlayerContext,
    ) -> Result<Arc<dyn crate::search::Player<G>>, SearchError> {
        let limits = &self.0;
        let (name, eval) = resolve_eval::<G>(self, limits.eval.as_deref(), ctx)?;
        Ok(Arc::new(AlphaBetaPlayer {
            depth: limits.depth,
            time: limits.time,
            nodes: limits.nodes,
            eval,
            label: AlphaBetaSpec(SearchOptions {
                eval: Some(name),
                ..limits.clone()
            })
            .to_string(),
        }))
    }
}

/// `alphabeta`: iterative deepening negamax; the root moves are shuffled
/// first so that equal scores are broken at random.
pub struct AlphaBetaPlayer<G: Game> {
    depth: Option<u32>,
    time: Option<Duration>,
    nodes: Option<u64>,
    eval: Scorer<G>,
    label: String,
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
        let now = Instant::now();
        let deadline = tighter(self.time.map(|t| now + t), budget.deadline(now));
        let limits = SearchLimits {
            max_depth: tighter(self.depth, budget.depth).unwrap_or(DEFAULT_DEPTH),
            deadline,
            max_nodes: tighter(self.nodes, budget.nodes),
            stop: budget.stop_flag(),
            // The clock's time for critical positions, unless the spec's
            // own time limit rules.
            extend: match (self.time, budget.critical_deadline, deadline) {
                (None, Some(until), Some(due)) if until > due => Some(Extension {
                    until,
                    drop: self.eval.score_span(CRITICAL_DROP),
                }),
                _ => None,
            },
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
