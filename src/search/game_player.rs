//! Players for every game from one spec string: `random`, `naive`,
//! `expert` (games with immediate wins),
//! `alphabeta[:depth=D,time=SECS,nodes=N,eval=NAME]`,
//! `greedy[:eval=NAME]`, `greedy:CHECKPOINT_DIR` and
//! `greedy+:CHECKPOINT_DIR` (the published NETWORK player),
//! `mcts:sims=N[,threads=T,eval=NAME,...]` (see [`MctsConfig`]),
//! `spiel-mcts:sims=N[,rollouts=R,c=C,seed=S]` (OpenSpiel's MCTS bot),
//! `mdp:MODEL_FILE` (the bucketed MDP learner of `plies train mdp`),
//! `policy:ckpt=PATH[,temperature=T]` (moves drawn from a model's per-point
//! outputs) and, for Arimaa, `random-steps[:end=P]` and
//! `steps[:depth=S,time=SECS,nodes=N,eval=NAME]` (alpha-beta over single
//! steps, `depth` in steps; see [`crate::search::steps::player`]). Every consumer (match, arena, play,
//! self-play, both engines) builds its players here.
//!
//! A spec is a name, then optionally `:` and comma-separated `key=value`
//! options; an unknown key or a bad value is named in the error.
//! Evaluators ([`crate::search::evaluators`]): the game's hand-written
//! ones ([`GameSupport::HAND_EVALS`]: Arimaa `material`, Amazons `mindist`
//! and `lieberum`, Pentago `pentago-features`; the first is the default),
//! `random`, and `ckpt:PATH`, a trained checkpoint.
//!
//! ```
//! use plies::game::{Amazons, Game};
//! use plies::search::game_player::{build_player, GamePlayerSpec};
//! let spec: GamePlayerSpec = "alphabeta:depth=1,eval=mindist".parse().unwrap();
//! let player = build_player::<Amazons>(&spec).unwrap();
//! assert_eq!(player.name(), "alphabeta:depth=1,eval=mindist");
//! let g = Amazons::with_size(6).unwrap();
//! let mut rng = plies::util::seeded_rng(1, 0);
//! let mv = player.choose(&g, &mut rng).unwrap();
//! let mut legal = Vec::new();
//! g.legal_moves(&mut legal);
//! assert!(legal.contains(&mv));
//! ```

use super::alphabeta::{search_with_progress, terminal_score, SearchLimits, SearchResult};
use super::evaluators::checkpoint_evaluator;
/// Players are built in a [`PlayerContext`] (defined beside the
/// evaluators it carries).
pub use super::evaluators::PlayerContext;
use super::mcts::{MctsConfig, MctsPlayer};
use super::mdp::MdpPlayer;
use super::scorer::{mcts_evaluator, value_score, Scorer};
use super::spiel_bot::{spiel_mcts_player, SpielMctsOptions};
use super::steps::player::{StepsSpec, MAX_STEPS, MIN_STEPS};
use super::{
    pick, tighter, Budget, ExpertPlayer, Found, GreedyPlayer, NaivePlayer, Player, PolicyPlayer,
    RandomPlayer, SearchError, SearchInfo, Searched, Watch,
};
use crate::checkpoint::CheckpointSource;
use crate::game::{Game, Side};
use crate::games::GameSupport;
use crate::search::{legal_or_none, Chosen};
use crate::util::SeededRng;
use rand::seq::SliceRandom;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The default chance of ending a `random-steps` turn after each step.
pub const DEFAULT_END_PROB: f64 = 0.1;

/// The deepest `alphabeta` search a spec may ask for.
const MAX_DEPTH: u32 = 64;

/// The deepest `alphabeta` iteration when neither the spec nor the budget
/// sets a depth.
pub const DEFAULT_DEPTH: u32 = 3;

/// Positions `greedy` values per evaluator call under a time budget or a
/// stop flag: between two calls it looks at both.
const GREEDY_CHUNK: usize = 256;

/// A parsed player spec (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub enum GamePlayerSpec {
    /// Uniform over the legal moves ([`RandomPlayer`]).
    Random,
    /// Wins at once, avoids losing at once, else random ([`NaivePlayer`]).
    Naive,
    /// Wins at once, else blocks an immediate win, else random
    /// ([`ExpertPlayer`]; games with immediate wins).
    Expert,
    /// The published NETWORK player: `greedy:CHECKPOINT_DIR` picks the
    /// successor the checkpoint values best; `greedy+:CHECKPOINT_DIR`
    /// scores finished games by their result ([`GreedyPlayer`]).
    Network {
        checkpoint: std::path::PathBuf,
        exact_terminal: bool,
    },
    /// Iterative-deepening negamax alpha-beta with an evaluator, to
    /// `depth` moves ([`DEFAULT_DEPTH`] unless the budget sets one), for at
    /// most `time` and `nodes` a move; ties broken at random.
    AlphaBeta {
        depth: Option<u32>,
        time: Option<Duration>,
        nodes: Option<u64>,
        eval: Option<String>,
    },
    /// The move whose resulting position the evaluator likes best (1 ply).
    Greedy { eval: Option<String> },
    /// Arimaa: a turn built one random step at a time, ending after each
    /// step with probability `end`.
    RandomSteps { end: f64 },
    /// Arimaa: alpha-beta over single steps ([`StepsSpec`]).
    Steps(StepsSpec),
    /// Monte Carlo tree search ([`MctsConfig`] lists the options).
    Mcts(MctsConfig),
    /// OpenSpiel's MCTS bot, run by Python (Amazons, Pentago, Gomoku,
    /// Tic-tac-toe); the options as given.
    SpielMcts(Vec<(String, String)>),
    /// The bucketed MDP learner's model file ([`MdpPlayer`]).
    Mdp { model: std::path::PathBuf },
    /// A move drawn from the Gibbs distribution of a checkpoint's per-point
    /// outputs over the legal points at `temperature` (0: greedy, ties at
    /// random; [`PolicyPlayer`]).
    Policy {
        checkpoint: std::path::PathBuf,
        temperature: f64,
    },
}

impl GamePlayerSpec {
    /// The spec names, for help and errors.
    pub const NAMES: [&'static str; 12] = [
        "random",
        "naive",
        "expert",
        "alphabeta",
        "greedy",
        "greedy+",
        "random-steps",
        "steps",
        "mcts",
        "spiel-mcts",
        "mdp",
        "policy",
    ];
}

fn bad(spec: &str, why: impl Into<String>) -> SearchError {
    SearchError::BadSpec {
        spec: spec.to_string(),
        why: why.into(),
    }
}

/// The value of option `key` (`None` when absent), read by `parse`; a
/// value `parse` refuses is an error naming the key, the value and what
/// was `expected`.
fn option<T>(
    spec: &str,
    key: &str,
    value: Option<&str>,
    expected: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>, SearchError> {
    value
        .map(|text| {
            parse(text).ok_or_else(|| bad(spec, format!("{key} '{text}' is not {expected}")))
        })
        .transpose()
}

/// Names `spec` in an error met while building its player (a bad option,
/// a checkpoint that cannot be loaded), so that a user with several
/// players sees which one failed.
fn in_spec(spec: &GamePlayerSpec) -> impl Fn(SearchError) -> SearchError + '_ {
    move |e| match e {
        SearchError::BadSpec { why, .. } => bad(&spec.to_string(), why),
        SearchError::Checkpoint(e) => bad(&spec.to_string(), e.to_string()),
        other => other,
    }
}

impl FromStr for GamePlayerSpec {
    type Err = SearchError;

    fn from_str(s: &str) -> Result<Self, SearchError> {
        let (name, args) = match s.split_once(':') {
            Some((n, a)) => (n.trim(), Some(a)),
            None => (s.trim(), None),
        };
        // `greedy:DIR` and `greedy+:DIR` name a checkpoint directory, not
        // key=value options (`greedy:eval` is an option missing its value).
        match (name, args) {
            ("greedy+", None | Some("")) => return Err(bad(s, "expected greedy+:CHECKPOINT_DIR")),
            ("greedy+", Some(dir)) | ("greedy", Some(dir))
                if !dir.contains('=') && !dir.is_empty() && dir.trim() != "eval" =>
            {
                return Ok(GamePlayerSpec::Network {
                    checkpoint: dir.into(),
                    exact_terminal: name == "greedy+",
                })
            }
            ("mdp", None | Some("")) => return Err(bad(s, "expected mdp:MODEL_FILE")),
            ("mdp", Some(file)) => {
                return Ok(GamePlayerSpec::Mdp {
                    model: file.trim().into(),
                })
            }
            _ => {}
        }
        let mut opts: Vec<(&str, &str)> = Vec::new();
        if let Some(args) = args {
            for part in args.split(',') {
                let (k, v) = part
                    .split_once('=')
                    .ok_or_else(|| bad(s, format!("option '{part}' is not key=value")))?;
                let (k, v) = (k.trim(), v.trim());
                if opts.iter().any(|&(seen, _)| seen == k) {
                    return Err(bad(s, format!("option '{k}' given twice")));
                }
                opts.push((k, v));
            }
        }
        let allowed: &[&str] = match name {
            "random" | "naive" | "expert" => &[],
            "alphabeta" | "steps" => &["depth", "time", "nodes", "eval"],
            "greedy" => &["eval"],
            "random-steps" => &["end"],
            "mcts" => &MctsConfig::KEYS,
            "spiel-mcts" => &["sims", "rollouts", "c", "seed", "impl", "python", "timeout"],
            "policy" => &["ckpt", "temperature"],
            other => {
                return Err(bad(
                    s,
                    format!(
                        "unknown player '{other}'; expected one of {}",
                        Self::NAMES.join(", ")
                    ),
                ))
            }
        };
        for &(k, _) in &opts {
            if !allowed.contains(&k) {
                let expected = if allowed.is_empty() {
                    "it takes no options".to_string()
                } else {
                    format!("expected {}", allowed.join(" or "))
                };
                return Err(bad(
                    s,
                    format!("unknown option '{k}' for {name}: {expected}"),
                ));
            }
        }
        let get = |k: &str| opts.iter().find(|&&(key, _)| key == k).map(|&(_, v)| v);
        let eval = |s: &str| -> Result<Option<String>, SearchError> {
            match get("eval") {
                Some("") => Err(bad(s, "eval= needs an evaluator name")),
                v => Ok(v.map(str::to_string)),
            }
        };
        Ok(match name {
            "random" => GamePlayerSpec::Random,
            "naive" => GamePlayerSpec::Naive,
            "expert" => GamePlayerSpec::Expert,
            "alphabeta" | "steps" => {
                let (least, most) = if name == "steps" {
                    (MIN_STEPS, MAX_STEPS)
                } else {
                    (1, MAX_DEPTH)
                };
                let depth = option(
                    s,
                    "depth",
                    get("depth"),
                    &format!("a whole number in {least}..={most}"),
                    |t| t.parse().ok().filter(|d| (least..=most).contains(d)),
                )?;
                let time = option(
                    s,
                    "time",
                    get("time"),
                    "a positive number of seconds",
                    |t| {
                        let secs: f64 = t.parse().ok().filter(|&t: &f64| t > 0.0)?;
                        Duration::try_from_secs_f64(secs).ok()
                    },
                )?;
                let nodes = option(
                    s,
                    "nodes",
                    get("nodes"),
                    "a whole number of at least 1",
                    |t| t.parse().ok().filter(|&n: &u64| n > 0),
                )?;
                let eval = eval(s)?;
                if name == "steps" {
                    GamePlayerSpec::Steps(StepsSpec {
                        depth,
                        time,
                        nodes,
                        eval,
                    })
                } else {
                    GamePlayerSpec::AlphaBeta {
                        depth,
                        time,
                        nodes,
                        eval,
                    }
                }
            }
            "greedy" => GamePlayerSpec::Greedy { eval: eval(s)? },
            "mcts" => GamePlayerSpec::Mcts(
                MctsConfig::from_pairs(&opts).map_err(|why| bad(s, why.to_string()))?,
            ),
            "spiel-mcts" => GamePlayerSpec::SpielMcts(
                opts.iter()
                    .map(|&(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            "policy" => {
                let checkpoint = match get("ckpt") {
                    Some(dir) if !dir.is_empty() => std::path::PathBuf::from(dir),
                    _ => return Err(bad(s, "expected policy:ckpt=CHECKPOINT_DIR")),
                };
                let temperature = option(
                    s,
                    "temperature",
                    get("temperature"),
                    "a finite number >= 0",
                    |t| t.parse().ok().filter(|&t: &f64| t.is_finite() && t >= 0.0),
                )?
                .unwrap_or(0.0);
                GamePlayerSpec::Policy {
                    checkpoint,
                    temperature,
                }
            }
            _ => {
                let end = option(s, "end", get("end"), "a probability in 0..=1", |t| {
                    t.parse().ok().filter(|p: &f64| (0.0..=1.0).contains(p))
                })?
                .unwrap_or(DEFAULT_END_PROB);
                GamePlayerSpec::RandomSteps { end }
            }
        })
    }
}

impl fmt::Display for GamePlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GamePlayerSpec::Random => f.write_str("random"),
            GamePlayerSpec::Naive => f.write_str("naive"),
            GamePlayerSpec::Expert => f.write_str("expert"),
            GamePlayerSpec::Network {
                checkpoint,
                exact_terminal,
            } => {
                let plus = if *exact_terminal { "+" } else { "" };
                write!(f, "greedy{plus}:{}", checkpoint.display())
            }
            GamePlayerSpec::AlphaBeta {
                depth,
                time,
                nodes,
                eval,
            } => {
                let mut args = Vec::new();
                if let Some(d) = depth {
                    args.push(format!("depth={d}"));
                }
                if let Some(t) = time {
                    args.push(format!("time={}", t.as_secs_f64()));
                }
                if let Some(n) = nodes {
                    args.push(format!("nodes={n}"));
                }
                if let Some(e) = eval {
                    args.push(format!("eval={e}"));
                }
                f.write_str("alphabeta")?;
                if args.is_empty() {
                    Ok(())
                } else {
                    write!(f, ":{}", args.join(","))
                }
            }
            GamePlayerSpec::Greedy { eval: Some(e) } => write!(f, "greedy:eval={e}"),
            GamePlayerSpec::Greedy { eval: None } => f.write_str("greedy"),
            GamePlayerSpec::RandomSteps { end } if *end == DEFAULT_END_PROB => {
                f.write_str("random-steps")
            }
            GamePlayerSpec::RandomSteps { end } => write!(f, "random-steps:end={end}"),
            GamePlayerSpec::Steps(steps) => write!(f, "{steps}"),
            GamePlayerSpec::Mcts(cfg) => write!(f, "{cfg}"),
            GamePlayerSpec::Mdp { model } => write!(f, "mdp:{}", model.display()),
            GamePlayerSpec::Policy {
                checkpoint,
                temperature,
            } => {
                write!(f, "policy:ckpt={}", checkpoint.display())?;
                if *temperature != 0.0 {
                    write!(f, ",temperature={temperature}")?;
                }
                Ok(())
            }
            GamePlayerSpec::SpielMcts(opts) if opts.is_empty() => f.write_str("spiel-mcts"),
            GamePlayerSpec::SpielMcts(opts) => {
                let parts: Vec<String> = opts.iter().map(|(k, v)| format!("{k}={v}")).collect();
                write!(f, "spiel-mcts:{}", parts.join(","))
            }
        }
    }
}

/// The evaluator a spec names, or the game's default; the error names the
/// game and its evaluators.
fn resolve_eval<G: GameSupport>(
    spec: &GamePlayerSpec,
    eval: Option<&str>,
    ctx: &PlayerContext,
) -> Result<(String, Scorer<G>), SearchError> {
    let names = G::HAND_EVALS;
    let name = match eval {
        Some(n) => n,
        None => names.first().copied().ok_or_else(|| {
            bad(
                &spec.to_string(),
                format!(
                    "{} has no hand evaluator; give eval=random or eval=ckpt:PATH, or use random, naive or mcts",
                    G::NAME
                ),
            )
        })?,
    };
    let scorer = Scorer::by_name(name, ctx).map_err(in_spec(spec))?;
    Ok((name.to_string(), scorer))
}

/// Builds the player a spec describes for game `G` on the standard board,
/// checkpoints on the CPU.
pub fn build_player<G: GameSupport>(
    spec: &GamePlayerSpec,
) -> Result<Arc<dyn Player<G>>, SearchError> {
    build_player_in(spec, &PlayerContext::default_for::<G>())
}

/// Builds the player a spec describes for game `G` in `ctx`. Its
/// [`Player::name`] is the spec with the evaluator filled in.
pub fn build_player_in<G: GameSupport>(
    spec: &GamePlayerSpec,
    ctx: &PlayerContext,
) -> Result<Arc<dyn Player<G>>, SearchError> {
    Ok(match spec {
        GamePlayerSpec::Random => Arc::new(RandomPlayer),
        GamePlayerSpec::Naive => Arc::new(NaivePlayer),
        GamePlayerSpec::AlphaBeta {
            depth,
            time,
            nodes,
            eval,
        } => {
            let (name, eval) = resolve_eval::<G>(spec, eval.as_deref(), ctx)?;
            Arc::new(AlphaBetaPlayer {
                depth: *depth,
                time: *time,
                nodes: *nodes,
                eval,
                label: GamePlayerSpec::AlphaBeta {
                    depth: *depth,
                    time: *time,
                    nodes: *nodes,
                    eval: Some(name),
                }
                .to_string(),
            })
        }
        GamePlayerSpec::Greedy { eval } => {
            let (name, eval) = resolve_eval::<G>(spec, eval.as_deref(), ctx)?;
            Arc::new(EvalGreedyPlayer {
                eval,
                label: GamePlayerSpec::Greedy { eval: Some(name) }.to_string(),
            })
        }
        GamePlayerSpec::RandomSteps { end } if G::RANDOM_STEPS => {
            Arc::new(RandomStepsPlayer { end: *end })
        }
        GamePlayerSpec::RandomSteps { .. } => {
            return Err(bad(
                &spec.to_string(),
                format!("random-steps is an Arimaa player, not one for {}", G::NAME),
            ))
        }
        GamePlayerSpec::Steps(steps) => {
            super::steps::player::step_search_player_for::<G>(steps, ctx)
                .unwrap_or_else(|| {
                    Err(bad(
                        &spec.to_string(),
                        format!("steps is an Arimaa player, not one for {}", G::NAME),
                    ))
                })
                .map_err(in_spec(spec))?
        }
        GamePlayerSpec::Expert => {
            if G::new().immediate_wins(Side::First).is_none() {
                return Err(bad(
                    &spec.to_string(),
                    format!("expert plays tictactoe and gomoku, not {}", G::NAME),
                ));
            }
            Arc::new(ExpertPlayer)
        }
        GamePlayerSpec::Network {
            checkpoint,
            exact_terminal,
        } => {
            let source = CheckpointSource::parse(&checkpoint.to_string_lossy())
                .map_err(|e| in_spec(spec)(e.into()))?;
            let eval =
                checkpoint_evaluator::<G>(&source, ctx.size, &ctx.eval).map_err(in_spec(spec))?;
            Arc::new(GreedyPlayer::new(eval, *exact_terminal))
        }
        GamePlayerSpec::Policy {
            checkpoint,
            temperature,
        } => {
            let eval = checkpoint_evaluator::<G>(
                &crate::checkpoint::CheckpointSource::Dir(checkpoint.clone()),
                ctx.size,
                &ctx.eval,
            )
            .map_err(in_spec(spec))?;
            Arc::new(PolicyPlayer::new(eval, *temperature, spec.to_string())?)
        }
        GamePlayerSpec::Mcts(cfg) => {
            let eval = mcts_evaluator::<G>(cfg, ctx).map_err(in_spec(spec))?;
            Arc::new(MctsPlayer::new(cfg.clone(), eval)?)
        }
        GamePlayerSpec::Mdp { model } => Arc::new(MdpPlayer::load::<G>(model)?),
        GamePlayerSpec::SpielMcts(opts) => {
            let pairs: Vec<(&str, &str)> =
                opts.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            if G::SPIEL_NAME.is_none() {
                return Err(bad(
                    &spec.to_string(),
                    format!(
                        "OpenSpiel's MCTS plays amazons, pentago, gomoku, tictactoe, connect-four and atari-go, not {}",
                        G::NAME
                    ),
                ));
            }
            spiel_player::<G>(&pairs)?
        }
    })
}

/// OpenSpiel's MCTS bot from `spiel-mcts` options.
fn spiel_player<G: GameSupport>(
    options: &[(&str, &str)],
) -> Result<Arc<dyn Player<G>>, SearchError> {
    let opts = SpielMctsOptions::from_pairs(options).map_err(|why| {
        let parts: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        bad(&format!("spiel-mcts:{}", parts.join(",")), why.to_string())
    })?;
    spiel_mcts_player::<G>(opts)
}

/// Parses and builds in one go, on the standard board.
pub fn player_from_spec<G: GameSupport>(text: &str) -> Result<Arc<dyn Player<G>>, SearchError> {
    build_player(&text.parse()?)
}

/// Parses and builds in one go, in `ctx`.
pub fn player_from_spec_in<G: GameSupport>(
    text: &str,
    ctx: &PlayerContext,
) -> Result<Arc<dyn Player<G>>, SearchError> {
    build_player_in(&text.parse()?, ctx)
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

/// `random-steps` (Arimaa): see [`crate::game::arimaa::random_steps`].
pub struct RandomStepsPlayer {
    end: f64,
}

impl<G: GameSupport> Player<G> for RandomStepsPlayer {
    fn name(&self) -> String {
        GamePlayerSpec::RandomSteps { end: self.end }.to_string()
    }

    fn choose_within(&self, state: &G, _budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        state
            .random_steps_move(self.end, rng, &mut Vec::new())
            .ok_or(SearchError::NoMoves)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Amazons, Arimaa, AtariGo, Gomoku, Pentago, TicTacToe};
    use crate::util::seeded_rng;

    fn err(text: &str) -> String {
        text.parse::<GamePlayerSpec>().unwrap_err().to_string()
    }

    #[test]
    fn specs_parse_and_print_back() {
        for text in [
            "random",
            "naive",
            "alphabeta:depth=3",
            "alphabeta:depth=1,eval=material",
            "alphabeta",
            "alphabeta:time=0.5,nodes=1000",
            "greedy",
            "greedy:eval=lieberum",
            "random-steps",
            "random-steps:end=0.25",
            "mcts:sims=800,threads=8,eval=mindist",
            "mcts:sims=100,eval=ckpt:runs/x,rollout=10",
            "spiel-mcts:sims=100,rollouts=2",
            "mdp:runs/pentago-mdp.json",
            "policy:ckpt=runs/evolve/best",
            "policy:ckpt=runs/evolve/best,temperature=0.5",
        ] {
            let spec: GamePlayerSpec = text.parse().unwrap();
            assert_eq!(spec.to_string(), text);
        }
        assert_eq!(
            "alphabeta:eval=material,depth=2"
                .parse::<GamePlayerSpec>()
                .unwrap(),
            GamePlayerSpec::AlphaBeta {
                depth: Some(2),
                time: None,
                nodes: None,
                eval: Some("material".into())
            }
        );
    }

    #[test]
    fn errors_name_the_bad_key_or_value() {
        assert!(err("minimax").contains("unknown player 'minimax'"));
        assert!(err("alphabeta:time=0").contains("time '0'"));
        assert!(err("alphabeta:nodes=0").contains("nodes '0'"));
        assert!(err("alphabeta:depth=x").contains("depth 'x'"));
        assert!(err("alphabeta:depth=0").contains("depth '0'"));
        assert!(err("alphabeta:time=1e300").contains("time '1e300'"));
        assert!(err("alphabeta:depth=2,width=3").contains("unknown option 'width'"));
        assert!(err("random:depth=2").contains("takes no options"));
        assert!(err("random-steps:end=2").contains("end '2'"));
        assert!(err("greedy:eval").contains("'eval' is not key=value"));
        assert!(err("alphabeta:depth=1,depth=2").contains("'depth' given twice"));
        assert!(err("mcts:sims=10,thread=2").contains("unknown option 'thread'"));
        assert!(err("mcts:sims=1e3").contains("sims=1e3"));
        assert!(err("spiel-mcts:simulations=3").contains("unknown option 'simulations'"));
        assert!(err("mdp").contains("mdp:MODEL_FILE"));
        let e = player_from_spec::<Amazons>("mdp:/no/model.json")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("does not play amazons"), "{e}");
        let e = player_from_spec::<Pentago>("mdp:/no/model.json")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("/no/model.json") && e.contains("cannot read"),
            "{e}"
        );
        assert!(err("policy").contains("expected policy:ckpt=CHECKPOINT_DIR"));
        assert!(err("policy:ckpt=x,temperature=-1").contains("temperature '-1'"));
        assert!(err("policy:ckpt=x,temp=1").contains("unknown option 'temp'"));
        let e = player_from_spec::<Arimaa>("greedy:eval=mindist")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("'mindist' is not an evaluator of arimaa") && e.contains("material"),
            "{e}"
        );
        let e = player_from_spec::<Amazons>("mcts:sims=10,eval=mindst")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("'mindst'") && e.contains("lieberum"), "{e}");
        let e = player_from_spec::<Arimaa>("spiel-mcts:sims=10")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not arimaa"), "{e}");
        let e = player_from_spec::<Gomoku>("alphabeta:depth=2")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("gomoku has no hand evaluator"), "{e}");
        let e = player_from_spec::<Amazons>("random-steps")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("Arimaa player"), "{e}");
    }

    /// Every player of every game plays legal moves to the end of a game.
    fn plays_legal_games<G: GameSupport>(g: G, specs: &[&str]) {
        let mut rng = seeded_rng(3, 0);
        for text in specs {
            let p = player_from_spec::<G>(text).unwrap();
            let mut g = g.clone();
            let mut legal = Vec::new();
            while g.outcome().is_none() && g.ply() < 40 {
                let mv = p.choose(&g, &mut rng).unwrap();
                g.legal_moves(&mut legal);
                assert!(legal.contains(&mv), "{text}: {}", g.move_to_string(mv));
                g.play(mv);
            }
        }
    }

    #[test]
    fn players_play_legal_moves() {
        plays_legal_games(TicTacToe::new(), &["random", "naive", "mcts:sims=50"]);
        plays_legal_games(
            Gomoku::with_size(7).unwrap(),
            &[
                "random",
                "naive",
                "mcts:sims=20,threads=2",
                "greedy:eval=random",
            ],
        );
        plays_legal_games(AtariGo::with_size(5).unwrap(), &["random", "naive"]);
        plays_legal_games(
            Amazons::with_size(6).unwrap(),
            &[
                "random",
                "alphabeta:depth=2",
                "greedy:eval=lieberum",
                "mcts:sims=30,eval=mindist,threads=2",
                "mcts:sims=20,eval=lieberum,rollout=3,puct=off",
            ],
        );
        plays_legal_games(
            Pentago::new(),
            &[
                "random",
                "greedy",
                "alphabeta:depth=1,eval=pentago-features",
            ],
        );
    }

    #[test]
    fn arimaa_material_players_take_a_free_capture() {
        // Gold's elephant on d5 can push the silver cat on c5 onto trap c6.
        let board = format!(
            ".......r{}..cE....{}R.......",
            ".".repeat(16),
            ".".repeat(24)
        );
        let g = Arimaa::from_text(&format!("g {board}")).unwrap();
        let mut rng = seeded_rng(4, 0);
        let mut legal = Vec::new();
        g.legal_moves(&mut legal);
        for text in [
            "greedy",
            "alphabeta:depth=1,eval=material",
            "alphabeta:depth=2",
        ] {
            let p = player_from_spec::<Arimaa>(text).unwrap();
            let mv = p.choose(&g, &mut rng).unwrap();
            assert!(legal.contains(&mv), "{text}");
            let mut after = g.clone();
            after.play(mv);
            let cats = after.position().material(Side::Second)[1];
            assert_eq!(cats, 0, "{text}: {}", g.move_to_string(mv));
        }
        let p = player_from_spec::<Arimaa>("random-steps").unwrap();
        assert_eq!(p.name(), "random-steps");
        let mv = p.choose(&g, &mut rng).unwrap();
        assert_eq!(g.parse_move(&g.move_to_string(mv)).unwrap(), mv);
    }
}
