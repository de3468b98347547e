//! The `steps:` player: [`step_search`] behind the [`Player`] trait, for
//! matches, arenas and the AEI engine.
//!
//! `steps[:depth=S,time=SECS,nodes=N,eval=NAME]`: iterative deepening over
//! steps up to `depth` steps (at least 4, one turn; default
//! [`DEFAULT_STEPS`]), for at most `time` and `nodes` a move. `eval` is
//! `material` (the default), `ckpt:PATH` (a `linear` table over
//! `arimaa-6x8x8` is updated per step; any other checkpoint is called on
//! each leaf's position) or `random`. A budget's depth is in turns: four
//! steps each.

use super::psq_eval::{PieceSquareEval, StepScorer};
use super::search::{step_search, StepLimits, StepSearchResult};
use crate::game::arimaa::Arimaa;
use crate::game::Game;
use crate::search::evaluators::PlayerContext;
use crate::search::game_player::SearchOptions;
use crate::search::scorer::Scorer;
use crate::search::{
    legal_or_none, pick, tighter, Budget, Chosen, Found, Player, SearchError, SearchInfo, Searched,
    Watch,
};
use crate::util::SeededRng;
use rand::RngExt;
use std::fmt;
use std::time::Instant;

/// The deepest iteration when neither the spec nor the budget sets one:
/// two turns.
pub const DEFAULT_STEPS: u32 = 8;

/// The fewest steps a `steps` search may be limited to: one turn.
pub const MIN_STEPS: u32 = 4;

/// The most steps a spec may ask for.
pub const MAX_STEPS: u32 = 64;

/// The options of a `steps:` spec (its `depth` in steps).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepsSpec(pub SearchOptions);

impl std::ops::Deref for StepsSpec {
    type Target = SearchOptions;

    fn deref(&self) -> &SearchOptions {
        &self.0
    }
}

impl fmt::Display for StepsSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write(f, "steps")
    }
}

/// `steps`: see the module docs.
pub struct StepSearchPlayer {
    spec: StepsSpec,
    scorer: StepScorer,
    label: String,
}

/// The `steps:` player as a player of `G`: `None` unless `G` is Arimaa,
/// the one game whose turns are made of steps. The search layer builds it,
/// so the game list names no search type.
pub fn step_search_player_for<G: Game + 'static>(
    spec: &StepsSpec,
    ctx: &PlayerContext,
) -> Option<Result<std::sync::Arc<dyn Player<G>>, SearchError>> {
    use std::any::{Any, TypeId};
    if TypeId::of::<G>() != TypeId::of::<Arimaa>() {
        return None;
    }
    let player = match StepSearchPlayer::new(spec, ctx) {
        Ok(p) => std::sync::Arc::new(p) as std::sync::Arc<dyn Player<Arimaa>>,
        Err(e) => return Some(Err(e)),
    };
    // G is Arimaa: the same type, so the downcast holds.
    let any: Box<dyn Any> = Box::new(player);
    any.downcast::<std::sync::Arc<dyn Player<G>>>()
        .ok()
        .map(|p| Ok(*p))
}

impl StepSearchPlayer {
    /// The player `spec` describes, its evaluator loaded for `ctx`.
    pub fn new(spec: &StepsSpec, ctx: &PlayerContext) -> Result<StepSearchPlayer, SearchError> {
        let name = spec.eval.clone().unwrap_or_else(|| "material".to_string());
        let scorer = if name == "material" {
            StepScorer::Incremental(PieceSquareEval::material())
        } else {
            let table = if name.starts_with("ckpt:") {
                PieceSquareEval::linear(&name)?
            } else {
                None
            };
            match table {
                Some(table) => StepScorer::Incremental(table),
                None => StepScorer::Position(Scorer::by_name(&name, ctx)?),
            }
        };
        let label = StepsSpec(SearchOptions {
            eval: Some(name),
            ..spec.0.clone()
        })
        .to_string();
        Ok(StepSearchPlayer {
            spec: spec.clone(),
            scorer,
            label,
        })
    }

    /// The limits of one search within `budget`.
    fn limits<'a>(&self, budget: &'a Budget, tie_seed: u64) -> StepLimits<'a> {
        let budget_steps = budget.depth.map(|turns| turns.saturating_mul(4));
        StepLimits {
            max_steps: tighter(self.spec.depth, budget_steps)
                .unwrap_or(DEFAULT_STEPS)
                .max(MIN_STEPS),
            deadline: {
                let now = Instant::now();
                tighter(self.spec.time.map(|t| now + t), budget.deadline(now))
            },
            max_nodes: tighter(self.spec.nodes, budget.nodes),
            stop: budget.stop_flag(),
            goal_threats: true,
            table: true,
            tie_seed: Some(tie_seed),
        }
    }
}

fn info(scorer: &StepScorer, r: &StepSearchResult) -> SearchInfo {
    let score = match scorer {
        StepScorer::Position(s) => s.score_of(r.score),
        StepScorer::Incremental(e) => e.score_of(r.score),
    };
    SearchInfo {
        depth: Some(r.depth),
        nodes: Some(r.nodes),
        score: Some(score),
        ..SearchInfo::default()
    }
}

impl Player<Arimaa> for StepSearchPlayer {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn choose_within(
        &self,
        state: &Arimaa,
        budget: &Budget,
        rng: &mut SeededRng,
    ) -> Chosen<Arimaa> {
        self.search(state, budget, rng, &mut |_| {}).map(|s| s.mv)
    }

    /// The deepest finished iteration's turn; a random legal turn when not
    /// even one turn's depth finished in the budget.
    fn search(
        &self,
        state: &Arimaa,
        budget: &Budget,
        rng: &mut SeededRng,
        watch: Watch,
    ) -> Found<Arimaa> {
        if state.outcome().is_some() {
            return Err(SearchError::NoMoves);
        }
        let limits = self.limits(budget, rng.random());
        let r = step_search(state, &self.scorer, &limits, |r| {
            watch(&info(&self.scorer, r))
        });
        self.scorer.take_error()?;
        let mv = match r.best {
            Some(mv) => mv,
            None => pick(&legal_or_none(state)?, rng),
        };
        Ok(Searched {
            mv,
            info: info(&self.scorer, &r),
        })
    }
}
