//! `greedy[:eval=NAME]`: the move whose position the evaluator values
//! best (one ply); and the published NETWORK player, `greedy:CHECKPOINT_DIR`
//! (`greedy+:CHECKPOINT_DIR` scores finished games by their result).

use super::build::resolve_eval;
use super::grammar::in_spec;
use super::{bad, Options, PlayerKind};
use crate::checkpoint::CheckpointSource;
use crate::game::Game;
use crate::games::GameSupport;
use crate::search::alphabeta::terminal_score;
use crate::search::evaluators::{checkpoint_evaluator, PlayerContext};
use crate::search::scorer::{value_score, Scorer};
use crate::search::GreedyPlayer;
use crate::search::{legal_or_none, Chosen};
use crate::search::{pick, Budget, Found, Player, SearchError, SearchInfo, Searched, Watch};
use crate::util::SeededRng;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// A `greedy` or `greedy+` spec.
#[derive(Clone, Debug, PartialEq)]
pub enum GreedySpec {
    /// `greedy[:eval=NAME]` ([`EvalGreedyPlayer`]); the game's first hand
    /// evaluator when `eval` is `None`.
    Eval { eval: Option<String> },
    /// The published NETWORK player ([`GreedyPlayer`]): `greedy:DIR` picks
    /// the successor the checkpoint values best; `greedy+:DIR` scores
    /// finished games by their result.
    Network {
        checkpoint: PathBuf,
        exact_terminal: bool,
    },
}

impl fmt::Display for GreedySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GreedySpec::Eval { eval: Some(e) } => write!(f, "greedy:eval={e}"),
            GreedySpec::Eval { eval: None } => f.write_str("greedy"),
            GreedySpec::Network {
                checkpoint,
                exact_terminal,
            } => {
                let plus = if *exact_terminal { "+" } else { "" };
                write!(f, "greedy{plus}:{}", checkpoint.display())
            }
        }
    }
}

impl PlayerKind for GreedySpec {
    const NAMES: &'static [&'static str] = &["greedy", "greedy+"];

    fn parse(text: &str, name: &str, args: Option<&str>) -> Result<Self, SearchError> {
        let plus = name == "greedy+";
        match args {
            // `greedy:DIR` names a checkpoint directory, not key=value
            // options (`greedy:eval` is an option missing its value).
            Some(dir) if !dir.contains('=') && !dir.is_empty() && dir.trim() != "eval" => {
                Ok(GreedySpec::Network {
                    checkpoint: dir.into(),
                    exact_terminal: plus,
                })
            }
            _ if plus => Err(bad(text, "expected greedy+:CHECKPOINT_DIR")),
            _ => {
                let opts = Options::parse(text, name, args, &["eval"])?;
                Ok(GreedySpec::Eval { eval: opts.eval()? })
            }
        }
    }

    fn build<G: GameSupport>(
        &self,
        ctx: &PlayerContext,
    ) -> Result<Arc<dyn Player<G>>, SearchError> {
        match self {
            GreedySpec::Eval { eval } => {
                let (name, eval) = resolve_eval::<G>(self, eval.as_deref(), ctx)?;
                Ok(Arc::new(EvalGreedyPlayer {
                    eval,
                    label: GreedySpec::Eval { eval: Some(name) }.to_string(),
                }))
            }
            GreedySpec::Network {
                checkpoint,
                exact_terminal,
            } => {
                let source = CheckpointSource::parse(&checkpoint.to_string_lossy())
                    .map_err(|e| in_spec(self)(e.into()))?;
                let eval = checkpoint_evaluator::<G>(&source, ctx.size, &ctx.eval)
                    .map_err(in_spec(self))?;
                Ok(Arc::new(GreedyPlayer::new(eval, *exact_terminal)))
            }
        }
    }
}

/// Positions `greedy` values per evaluator call under a time budget or a
/// stop flag: between two calls it looks at both.
const GREEDY_CHUNK: usize = 256;

/// `greedy`: the best evaluated successor, finished games scored exactly;
/// ties broken at random.
pub struct EvalGreedyPlayer<G: Game> {
    eval: Scorer<G>,
    label: String,
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
