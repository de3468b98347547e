//! The players an AEI engine can be: their specs, setups and move choice.
//!
//! A spec is a player name, optionally followed by `:key=value,...`:
//!
//! - `random`: uniform over the distinct legal moves;
//! - `alphabeta[:depth=N,time=SECS,nodes=N,eval=E]`: iterative-deepening
//!   alpha-beta ([`crate::search::alphabeta`]); `depth` is the deepest
//!   iteration in whole turns, `time` the most thought per move, `nodes` a
//!   node budget per move; without `time`, `depth` or a clock it thinks
//!   for [`DEFAULT_TIME`] seconds;
//! - `greedy[:eval=E]`: no lookahead, the move whose resulting position `E`
//!   likes best (finished games scored by their result);
//! - `mcts[:sims=N,time=SECS,threads=T,eval=E,rollout=K|end,puct=on|off,c=C,vloss=V,reuse=on|off,batch=B]`:
//!   Monte Carlo tree search with the keys and defaults of
//!   [`MctsConfig`] (1000 simulations a move unless `sims` or `time` says
//!   otherwise; without `eval`, random playouts to the end of the game,
//!   which is slow in Arimaa: give an evaluator). The tree is kept from
//!   move to move when the engine sees the game go on through `makemove`
//!   (`reuse=off` to search afresh every time).
//!
//! Evaluators `E` (see [`crate::search::evaluators`]): `material` (the
//! default of alphabeta and greedy), `random`, and `ckpt:PATH`, a trained
//! Arimaa checkpoint directory, run on the device of the
//! [`PlayerContext`] (`plies engine aei --device`).
//!
//! Every player also takes `setup=random|standard`: the setup it answers
//! with (random by default).
//!
//! Time: the clock, when the controller sets one, bounds every searching
//! player's thought per move, as does `time=`; whichever is shorter wins.
//! `stop` ends any search early with the best move found so far (greedy:
//! the best of the positions it has valued so far). A ponder (`go ponder`)
//! ignores the clock but keeps the spec's own `sims`/`time` limits.
//!
//! A malformed spec is refused when parsed, naming the bad key or value;
//! a checkpoint that is missing, unreadable or of another game is refused
//! by [`EnginePlayer::build`], before the engine serves anything.
//!
//! ```
//! use plies::protocol::EngineSpec;
//! let spec: EngineSpec = "alphabeta:depth=2,time=0.5".parse().unwrap();
//! assert_eq!(spec.depth, Some(2));
//! assert_eq!(spec.to_string(), "alphabeta:depth=2,time=0.5");
//! let spec: EngineSpec = "mcts:sims=200,threads=2,eval=material,setup=standard"
//!     .parse()
//!     .unwrap();
//! assert_eq!(spec.mcts.as_ref().unwrap().simulations, 200);
//! assert_eq!(spec.to_string(), "mcts:sims=200,threads=2,eval=material,setup=standard");
//! let err = "mcts:simz=3".parse::<EngineSpec>().unwrap_err().to_string();
//! assert!(err.contains("unknown setting 'simz' for mcts"), "{err}");
//! ```

use crate::game::arimaa::{Arimaa, Move, PieceType, Setup};
use crate::game::{Game, Side};
use crate::games::GameSupport;

use crate::infer::Evaluator;
use crate::search::alphabeta::{
    search_with_progress, terminal_score, SearchLimits, SearchResult, WIN_THRESHOLD,
};

use crate::search::game_player::PlayerContext;
use crate::search::mcts::{run_search_until, MctsConfig, Node, Rollout, SearchStats};
use crate::search::scorer::{mcts_evaluator, Scorer};
use crate::search::{OptionError, SearchError};
use crate::util::SeededRng;
use rand::RngExt;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    Random,
    AlphaBeta,
    Greedy,
    Mcts,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Random => "random",
            EngineKind::AlphaBeta => "alphabeta",
            EngineKind::Greedy => "greedy",
            EngineKind::Mcts => "mcts",
        }
    }
}

/// A player and its settings.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineSpec {
    pub kind: EngineKind,
    /// Deepest iteration in whole turns (alphabeta).
    pub depth: Option<u32>,
    /// Think time per move, seconds (alphabeta; mcts keeps its own in
    /// [`MctsConfig::time`]).
    pub time: Option<f64>,
    /// Node budget per move (alphabeta).
    pub nodes: Option<u64>,
    /// Answer setups with the standard one instead of a random one.
    pub standard_setup: bool,
    /// The evaluator of alphabeta and greedy (`eval=`; `None`: material).
    /// mcts keeps its own in [`MctsConfig::eval`].
    pub eval: Option<String>,
    /// The search settings of mcts (`Some` exactly for [`EngineKind::Mcts`]).
    pub mcts: Option<MctsConfig>,
}

/// The deepest iteration when neither the spec nor the controller sets one.
pub const DEFAULT_DEPTH: u32 = 3;
/// Think time of alphabeta when there is no clock and no `time=` or `depth=`.
pub const DEFAULT_TIME: f64 = 1.0;
/// Positions greedy values per evaluator call: between two calls it looks
/// at `stop` and the deadline.
const GREEDY_CHUNK: usize = 256;

impl EngineSpec {
    pub fn new(kind: EngineKind) -> EngineSpec {
        EngineSpec {
            kind,
            depth: None,
            time: None,
            nodes: None,
            standard_setup: false,
            eval: None,
            mcts: (kind == EngineKind::Mcts).then(MctsConfig::default),
        }
    }

    /// The spec's own limit on the thought per move (`time=`).
    pub fn time_limit(&self) -> Option<Duration> {
        match self.kind {
            EngineKind::AlphaBeta => self.time.map(Duration::from_secs_f64),
            EngineKind::Mcts => self.mcts.as_ref().and_then(|c| c.time),
            EngineKind::Random | EngineKind::Greedy => None,
        }
    }

    /// The evaluator the spec names (`None`: the player's default, or none).
    pub fn eval_name(&self) -> Option<&str> {
        match self.kind {
            EngineKind::Mcts => self.mcts.as_ref().and_then(|c| c.eval.as_deref()),
            _ => self.eval.as_deref(),
        }
    }
}

/// Checks an `eval=` value: a name plies knows for Arimaa.
fn check_eval(name: &str) -> Result<(), OptionError> {
    if name.is_empty() {
        return Err(OptionError::Inconsistent(
            "eval= needs an evaluator name (material, random or ckpt:PATH)",
        ));
    }
    if let Some(path) = name.strip_prefix("ckpt:") {
        if path.is_empty() {
            return Err(OptionError::Inconsistent(
                "eval=ckpt: needs a checkpoint directory (eval=ckpt:PATH)",
            ));
        }
        return Ok(());
    }
    if name == "random" || Arimaa::HAND_EVALS.contains(&name) {
        return Ok(());
    }
    let mut known: Vec<&str> = Arimaa::HAND_EVALS.to_vec();
    known.extend(["random", "ckpt:PATH"]);
    Err(OptionError::bad(
        "eval",
        name,
        format!("an evaluator of arimaa: {}", known.join(", ")),
    ))
}

impl FromStr for EngineSpec {
    type Err = SearchError;
    fn from_str(s: &str) -> Result<Self, SearchError> {
        let bad = |why: String| SearchError::BadSpec {
            spec: s.to_string(),
            why,
        };
        let (kind, args) = match s.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (s, None),
        };
        let kind = match kind {
            "random" => EngineKind::Random,
            "alphabeta" => EngineKind::AlphaBeta,
            "greedy" => EngineKind::Greedy,
            "mcts" => EngineKind::Mcts,
            other => {
                return Err(bad(format!(
                    "unknown player '{other}': expected random, alphabeta[:depth=N,time=SECS,nodes=N,eval=E], \
                     greedy[:eval=E] or mcts[:sims=N,time=SECS,threads=T,eval=E,...]; any of them may add setup=standard"
                )))
            }
        };
        let mut spec = EngineSpec::new(kind);
        let mut mcts_pairs: Vec<(&str, &str)> = Vec::new();
        for kv in args.into_iter().flat_map(|a| a.split(',')) {
            let (key, value) = kv
                .split_once('=')
                .ok_or_else(|| bad(format!("'{kv}' is not key=value")))?;
            if key == "setup" {
                spec.standard_setup = match value {
                    "standard" => true,
                    "random" => false,
                    _ => return Err(bad(format!("setup '{value}' is not random or standard"))),
                };
                continue;
            }
            let unknown = |known: &[&str]| {
                bad(format!(
                    "unknown setting '{key}' for {} (known: {}, setup)",
                    kind.name(),
                    known.join(", ")
                ))
            };
            match kind {
                EngineKind::Random => {
                    return Err(bad(format!("random takes only setup=, not {key}=")))
                }
                EngineKind::Mcts => {
                    if !MctsConfig::KEYS.contains(&key) {
                        return Err(unknown(&MctsConfig::KEYS));
                    }
                    mcts_pairs.push((key, value));
                }
                EngineKind::Greedy => match key {
                    "eval" => {
                        check_eval(value).map_err(|e| bad(e.to_string()))?;
                        spec.eval = Some(value.to_string());
                    }
                    _ => return Err(unknown(&["eval"])),
                },
                EngineKind::AlphaBeta => match key {
                    "depth" => {
                        let d: u32 = value
                            .parse()
                            .map_err(|_| bad(format!("depth '{value}' is not a whole number")))?;
                        if d == 0 {
                            return Err(bad("depth must be at least 1".into()));
                        }
                        spec.depth = Some(d);
                    }
                    "time" => {
                        let t: f64 = value.parse().map_err(|_| {
                            bad(format!("time '{value}' is not a number of seconds"))
                        })?;
                        if !(t > 0.0 && t.is_finite()) {
                            return Err(bad("time must be a positive number of seconds".into()));
                        }
                        spec.time = Some(t);
                    }
                    "nodes" => {
                        let n: u64 = value
                            .parse()
                            .map_err(|_| bad(format!("nodes '{value}' is not a whole number")))?;
                        spec.nodes = Some(n.max(1));
                    }
                    "eval" => {
                        check_eval(value).map_err(|e| bad(e.to_string()))?;
                        spec.eval = Some(value.to_string());
                    }
                    _ => return Err(unknown(&["depth", "time", "nodes", "eval"])),
                },
            }
        }
        if kind == EngineKind::Mcts {
            let cfg = MctsConfig::from_pairs(&mcts_pairs).map_err(|e| bad(e.to_string()))?;
            if let Some(e) = &cfg.eval {
                check_eval(e).map_err(|e| bad(e.to_string()))?;
            }
            if cfg.time == Some(Duration::ZERO) {
                return Err(bad("time must be a positive number of seconds".into()));
            }
            if cfg.eval.is_none() && cfg.rollout != Rollout::ToEnd {
                return Err(bad(
                    "playouts cut off before the end need an evaluator (eval=NAME)".into(),
                ));
            }
            spec.mcts = Some(cfg);
        }
        Ok(spec)
    }
}

impl fmt::Display for EngineSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == EngineKind::Mcts {
            // The config prints itself as `mcts:...`.
            write!(f, "{}", self.mcts.clone().unwrap_or_default())?;
            if self.standard_setup {
                f.write_str(",setup=standard")?;
            }
            return Ok(());
        }
        f.write_str(self.kind.name())?;
        let mut args = Vec::new();
        if let Some(d) = self.depth {
            args.push(format!("depth={d}"));
        }
        if let Some(t) = self.time {
            args.push(format!("time={t}"));
        }
        if let Some(n) = self.nodes {
            args.push(format!("nodes={n}"));
        }
        if let Some(e) = &self.eval {
            args.push(format!("eval={e}"));
        }
        if self.standard_setup {
            args.push("setup=standard".into());
        }
        if !args.is_empty() {
            write!(f, ":{}", args.join(","))?;
        }
        Ok(())
    }
}

/// A uniformly random legal setup for `side`: its 16 pieces shuffled over
/// its two home ranks.
pub fn random_setup(side: Side, rng: &mut SeededRng) -> Setup {
    let mut kinds: Vec<PieceType> = PieceType::ALL
        .iter()
        .flat_map(|&k| std::iter::repeat_n(k, PieceType::COUNTS[k as usize] as usize))
        .collect();
    shuffle(&mut kinds, rng);
    let first = match side {
        Side::First => 0u8,
        Side::Second => 48u8,
    };
    let placements = kinds
        .into_iter()
        .enumerate()
        .map(|(i, k)| (first + i as u8, k))
        .collect();
    Setup::new(side, placements).expect("16 pieces on the home ranks")
}

/// Fisher-Yates with the caller's generator.
pub fn shuffle<T>(items: &mut [T], rng: &mut SeededRng) {
    for i in (1..items.len()).rev() {
        let j = rng.random_range(0..=i);
        items.swap(i, j);
    }
}

/// How one move search is bounded.
#[derive(Clone, Copy, Debug)]
pub struct MoveLimits<'a> {
    /// alphabeta's deepest iteration, in whole turns.
    pub max_depth: u32,
    pub deadline: Option<Instant>,
    /// alphabeta's node budget.
    pub max_nodes: Option<u64>,
    pub stop: &'a AtomicBool,
}

/// What an MCTS search did for one move.
#[derive(Clone, Debug)]
pub struct MctsReport {
    pub stats: SearchStats,
    /// Visits the root already had from earlier searches (a kept tree).
    pub reused: u32,
    /// Visits of the chosen move.
    pub best_visits: u32,
    /// Its mean value on `[-1, 1]` for the side to move.
    pub best_value: f64,
}

/// The move chosen, with what the search saw.
pub struct Choice {
    pub mv: Move,
    /// alphabeta's search.
    pub search: Option<SearchResult<Move>>,
    /// mcts's search.
    pub mcts: Option<MctsReport>,
    /// Positions greedy valued, and how many it had to value.
    pub greedy: Option<(usize, usize)>,
    /// The move's value for the side to move in centi-rabbits (AEI's
    /// `info score`), when the player has one.
    pub score: Option<i64>,
    /// An evaluator failed on the way; the move is the best found before
    /// (or a random one).
    pub error: Option<String>,
}

impl Choice {
    fn plain(mv: Move) -> Choice {
        Choice {
            mv,
            search: None,
            mcts: None,
            greedy: None,
            score: None,
            error: None,
        }
    }
}

/// A material score (millirabbits) in AEI's centi-rabbits; forced results
/// far beyond any material score.
pub fn centi_rabbits(score: i32) -> i64 {
    if score.abs() >= WIN_THRESHOLD {
        return score.signum() as i64 * 100_000;
    }
    (score as i64) / 10
}

/// A value on `[-1, 1]` in centi-rabbits: the inverse of the squashing
/// `tanh(millirabbits / 4000)` that makes material a value, so `material`
/// reads the same through every player.
pub fn value_centi_rabbits(v: f64) -> i64 {
    if !v.is_finite() {
        return 0;
    }
    let scale = Arimaa::hand_eval_scale("material") as f64 / 10.0;
    (scale * v.clamp(-0.9999, 0.9999).atanh()).round() as i64
}

/// A score of the shared [`Scorer`] in AEI's centi-rabbits: material's
/// own millirabbits, or a model's value in ten-thousandths.
fn scorer_centi(scorer: &Scorer<Arimaa>, score: i32) -> i64 {
    if scorer.model().is_none() || score.abs() >= WIN_THRESHOLD {
        centi_rabbits(score)
    } else {
        value_centi_rabbits(score as f64 / 10_000.0)
    }
}

enum Brain {
    Random,
    AlphaBeta(Scorer<Arimaa>),
    Greedy(Scorer<Arimaa>),
    Mcts {
        cfg: MctsConfig,
        eval: Option<Arc<dyn Evaluator<Arimaa>>>,
    },
}

/// A spec made ready to play: its checkpoints loaded and tried once.
pub struct EnginePlayer {
    spec: EngineSpec,
    brain: Brain,
}

impl fmt::Debug for EnginePlayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EnginePlayer({})", self.spec)
    }
}

/// Names the spec in an evaluator's error.
fn in_spec<'a>(spec: &'a EngineSpec, name: &str) -> impl Fn(SearchError) -> SearchError + 'a {
    let name = name.to_string();
    move |e| match e {
        SearchError::BadSpec { why, .. } => SearchError::BadSpec {
            spec: spec.to_string(),
            why,
        },
        SearchError::Checkpoint(e) => SearchError::BadSpec {
            spec: spec.to_string(),
            why: format!("eval={name}: {e}"),
        },
        other => other,
    }
}

/// Tries `eval` on the opening, so that a model that cannot run fails
/// before the engine serves rather than in the first search.
fn try_on_opening(
    spec: &EngineSpec,
    name: &str,
    eval: &dyn Evaluator<Arimaa>,
) -> Result<(), SearchError> {
    let opening = Arimaa::from_setups(
        &Setup::standard(Side::First),
        &Setup::standard(Side::Second),
    )
    .expect("the standard setups");
    eval.evaluate(&[opening])
        .map(|_| ())
        .map_err(|e| SearchError::BadSpec {
            spec: spec.to_string(),
            why: format!("eval={name} failed on the opening position: {e}"),
        })
}

/// The shared [`Scorer`] of `eval=` (default `material`), tried on the
/// opening.
fn scorer(spec: &EngineSpec, ctx: &PlayerContext) -> Result<Scorer<Arimaa>, SearchError> {
    let name = spec.eval.as_deref().unwrap_or(Arimaa::HAND_EVALS[0]);
    let scorer = Scorer::by_name(name, ctx).map_err(in_spec(spec, name))?;
    if let Some(model) = scorer.model() {
        try_on_opening(spec, name, model.as_ref())?;
    }
    Ok(scorer)
}

impl EnginePlayer {
    /// Builds the player `spec` describes, loading its checkpoint (if any)
    /// on `ctx`'s device; a checkpoint that is missing, unreadable, of
    /// another game or encoder, or that fails on a first position is
    /// refused here, naming the spec and what is wrong.
    pub fn build(spec: &EngineSpec, ctx: &PlayerContext) -> Result<EnginePlayer, SearchError> {
        let brain = match spec.kind {
            EngineKind::Random => Brain::Random,
            EngineKind::AlphaBeta => Brain::AlphaBeta(scorer(spec, ctx)?),
            EngineKind::Greedy => Brain::Greedy(scorer(spec, ctx)?),
            EngineKind::Mcts => {
                let cfg = spec.mcts.clone().unwrap_or_default();
                let name = cfg.eval.clone().unwrap_or_default();
                let eval = mcts_evaluator::<Arimaa>(&cfg, ctx).map_err(in_spec(spec, &name))?;
                if let Some(e) = &eval {
                    try_on_opening(spec, &name, e.as_ref())?;
                }
                Brain::Mcts { cfg, eval }
            }
        };
        Ok(EnginePlayer {
            spec: spec.clone(),
            brain,
        })
    }

    pub fn spec(&self) -> &EngineSpec {
        &self.spec
    }

    pub fn kind(&self) -> EngineKind {
        self.spec.kind
    }

    /// Picks a move in `game` (not over); `None` when it has no legal
    /// move. `tree` is the MCTS tree kept between moves (mcts only);
    /// `progress` sees every finished alphabeta iteration.
    pub fn choose(
        &self,
        game: &Arimaa,
        limits: &MoveLimits<'_>,
        tree: Option<&mut SearchTree>,
        rng: &mut SeededRng,
        progress: impl FnMut(&SearchResult<Move>),
    ) -> Option<Choice> {
        let mut moves = Vec::new();
        game.legal_moves(&mut moves);
        if moves.is_empty() {
            return None;
        }
        Some(match &self.brain {
            Brain::Random => Choice::plain(moves[rng.random_range(0..moves.len())]),
            Brain::AlphaBeta(scorer) => {
                // Random order first, so that equal scores are broken at random.
                shuffle(&mut moves, rng);
                // The search runs on a copy without the game's history (cheap to
                // clone and play); the root moves come from the real game, so
                // the repetition rule is respected where it matters.
                let root = Arimaa::from_position(*game.position(), game.turn_number());
                let sl = SearchLimits {
                    max_depth: limits.max_depth.max(1),
                    deadline: limits.deadline,
                    max_nodes: limits.max_nodes,
                    stop: Some(limits.stop),
                };
                let r = search_with_progress(&root, Some(&moves), scorer, &sl, progress);
                let mv = r.best.unwrap_or(moves[0]);
                Choice {
                    score: Some(scorer_centi(scorer, r.score)),
                    error: scorer.take_error().err().map(|e| e.to_string()),
                    search: Some(r),
                    ..Choice::plain(mv)
                }
            }
            Brain::Greedy(scorer) => greedy(game, moves, scorer, limits, rng),
            Brain::Mcts { cfg, eval } => {
                mcts(game, &moves, cfg, eval.as_deref(), limits, tree, rng)
            }
        })
    }
}

/// greedy: every successor valued (finished games by their result), in
/// chunks so that `stop` and the deadline are seen; ties broken at random
/// (the moves are shuffled first).
fn greedy(
    game: &Arimaa,
    mut moves: Vec<Move>,
    scorer: &Scorer<Arimaa>,
    limits: &MoveLimits<'_>,
    rng: &mut SeededRng,
) -> Choice {
    shuffle(&mut moves, rng);
    let total = moves.len();
    let mut best: Option<(Move, i64)> = None;
    let mut seen = 0;
    let mut error = None;
    // Values for the side to move at the root, in centi-rabbits.
    let consider = |mv: Move, v: i64, best: &mut Option<(Move, i64)>| {
        if best.is_none_or(|(_, b)| v > b) {
            *best = Some((mv, v));
        }
    };
    for chunk in moves.chunks(GREEDY_CHUNK) {
        let out_of_time = limits.deadline.is_some_and(|d| Instant::now() >= d);
        if seen > 0 && (limits.stop.load(Ordering::SeqCst) || out_of_time) {
            break;
        }
        let mut open = Vec::with_capacity(chunk.len());
        let mut open_moves = Vec::with_capacity(chunk.len());
        for &mv in chunk {
            let mut child = game.clone();
            child.play(mv);
            match child.outcome() {
                // The child's side to move is the opponent.
                Some(o) => consider(
                    mv,
                    centi_rabbits(-terminal_score(o, child.side_to_move(), 1)),
                    &mut best,
                ),
                None => match scorer.model() {
                    None => consider(mv, centi_rabbits(-scorer.score(&child)), &mut best),
                    Some(_) => {
                        open.push(child);
                        open_moves.push(mv);
                    }
                },
            }
        }
        if let (Some(e), false) = (scorer.model(), open.is_empty()) {
            match e.evaluate(&open) {
                Ok(values) => {
                    for (&mv, v) in open_moves.iter().zip(values) {
                        consider(mv, value_centi_rabbits(-(v as f64)), &mut best);
                    }
                }
                Err(err) => {
                    error = Some(format!("evaluator {}: {err}", e.name()));
                    break;
                }
            }
        }
        seen += chunk.len();
    }
    let (mv, score) = match best {
        Some((mv, v)) => (mv, Some(v)),
        None => (moves[0], None),
    };
    Choice {
        greedy: Some((seen, total)),
        score,
        error,
        ..Choice::plain(mv)
    }
}

/// An MCTS tree kept between the moves of one game, keyed by the
/// position of its root.
#[derive(Default)]
pub struct SearchTree {
    root: Option<(u64, Box<Node<Move>>)>,
}

impl SearchTree {
    /// Forgets the tree (a new game or position).
    pub fn clear(&mut self) {
        self.root = None;
    }

    /// `mv` was played in the position keyed `before`, giving `after`:
    /// keeps the subtree below `mv`, if the tree was rooted at `before`.
    pub fn advance(&mut self, before: u64, mv: Move, after: u64) {
        self.root = match self.root.take() {
            Some((k, mut root)) if k == before => root.take_child(&mv).map(|c| (after, c)),
            _ => None,
        };
    }

    /// Visits stored for the position keyed `key` (0: none).
    pub fn visits(&self, key: u64) -> u32 {
        match &self.root {
            Some((k, root)) if *k == key => root.visits(),
            _ => 0,
        }
    }
}

/// mcts: searches into the kept tree (when it is rooted here) until the
/// simulations, the deadline or `stop`; the most visited legal root move.
fn mcts(
    game: &Arimaa,
    moves: &[Move],
    cfg: &MctsConfig,
    eval: Option<&dyn Evaluator<Arimaa>>,
    limits: &MoveLimits<'_>,
    mut tree: Option<&mut SearchTree>,
    rng: &mut SeededRng,
) -> Choice {
    let key = game.hash_key();
    let root = match tree.as_deref_mut().and_then(|t| t.root.take()) {
        Some((k, root)) if k == key && cfg.reuse => root,
        _ => Box::default(),
    };
    let reused = root.visits();
    let mut run = cfg.clone();
    if let Some(d) = limits.deadline {
        // At least a moment, so that even a late answer is searched.
        let left = d.saturating_duration_since(Instant::now());
        run.time = Some(left.max(Duration::from_millis(1)));
    }
    let seed: u64 = rng.random();
    let result = run_search_until(&root, game, &run, eval, seed, Some(limits.stop));
    // The most visited root move that is legal here (a kept tree of an
    // equal position met before may hold a move the repetition rule now
    // forbids); ties by the better mean.
    let legal: Option<foldhash::HashSet<Move>> =
        (reused > 0).then(|| moves.iter().copied().collect());
    let mut best: Option<(Move, u32, f64)> = None;
    for e in root.children().unwrap_or(&[]) {
        // A fresh root's children are exactly the legal moves.
        if legal.as_ref().is_some_and(|l| !l.contains(&e.mv)) {
            continue;
        }
        let visits = e.visits();
        let mean = e.node().map_or(f64::MIN, Node::mean);
        if best.is_none_or(|(_, bv, bm)| visits > bv || (visits == bv && mean > bm)) {
            best = Some((e.mv, visits, mean));
        }
    }
    let (mv, best_visits, best_value) = match best {
        Some((mv, v, m)) if v > 0 => (mv, v, m),
        _ => (moves[rng.random_range(0..moves.len())], 0, 0.0),
    };
    if let Some(t) = tree {
        if cfg.reuse {
            t.root = Some((key, root));
        }
    }
    let (stats, error) = match result {
        Ok(s) => (s, None),
        Err(e) => (SearchStats::default(), Some(e.to_string())),
    };
    Choice {
        score: (best_visits > 0).then(|| value_centi_rabbits(best_value)),
        mcts: Some(MctsReport {
            stats,
            reused,
            best_visits,
            best_value,
        }),
        error,
        ..Choice::plain(mv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests::free_cat;
    use crate::util::seeded_rng;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn specs_parse_and_print() {
        for s in [
            "random",
            "alphabeta",
            "alphabeta:depth=2",
            "random:setup=standard",
        ] {
            assert_eq!(s.parse::<EngineSpec>().unwrap().to_string(), s);
        }
        let s: EngineSpec = "alphabeta:nodes=500,time=0.25,setup=standard"
            .parse()
            .unwrap();
        assert_eq!(s.nodes, Some(500));
        assert_eq!(s.time, Some(0.25));
        assert!(s.standard_setup);
        for (bad, why) in [
            ("minimax", "unknown player"),
            ("random:depth=2", "random takes only setup="),
            ("alphabeta:depth=0", "at least 1"),
            ("alphabeta:depth=x", "not a whole number"),
            ("alphabeta:time=-1", "positive"),
            ("alphabeta:speed=3", "unknown setting"),
            ("alphabeta:depth", "not key=value"),
            ("random:setup=clever", "not random or standard"),
        ] {
            let err = bad.parse::<EngineSpec>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn new_specs_round_trip() {
        for s in [
            "greedy",
            "greedy:eval=material",
            "greedy:eval=ckpt:runs/x/best,setup=standard",
            "alphabeta:depth=2,eval=ckpt:checkpoints/a",
            "alphabeta:depth=1,time=0.5,nodes=100,eval=random,setup=standard",
            "mcts:sims=1000",
            "mcts:sims=200,threads=2,eval=material",
            "mcts:sims=2000,threads=2,eval=ckpt:out/arimaa-cnn3/best",
            "mcts:time=0.5,eval=material,rollout=4,puct=off,c=2,reuse=off,setup=standard",
            "mcts:sims=50,threads=4,eval=ckpt:x,batch=0",
        ] {
            let spec: EngineSpec = s.parse().unwrap();
            assert_eq!(spec.to_string(), s);
            assert_eq!(spec.to_string().parse::<EngineSpec>().unwrap(), spec);
        }
        // Key order does not matter; setup may come anywhere.
        let s: EngineSpec = "mcts:setup=standard,eval=ckpt:a/b,threads=2,sims=300"
            .parse()
            .unwrap();
        assert_eq!(s.kind, EngineKind::Mcts);
        assert!(s.standard_setup);
        let cfg = s.mcts.as_ref().unwrap();
        assert_eq!((cfg.simulations, cfg.threads), (300, 2));
        assert_eq!(s.eval_name(), Some("ckpt:a/b"));
        assert_eq!(s.time_limit(), None);
        assert_eq!(
            s.to_string(),
            "mcts:sims=300,threads=2,eval=ckpt:a/b,setup=standard"
        );
        let t: EngineSpec = "mcts:time=0.25,eval=material".parse().unwrap();
        assert_eq!(t.time_limit(), Some(Duration::from_millis(250)));
        assert_eq!(t.mcts.as_ref().unwrap().simulations, u64::MAX);
        let a: EngineSpec = "alphabeta:eval=ckpt:c,depth=3".parse().unwrap();
        assert_eq!((a.depth, a.eval_name()), (Some(3), Some("ckpt:c")));
        assert_eq!(a.to_string(), "alphabeta:depth=3,eval=ckpt:c");
        let m: EngineSpec = "mcts".parse().unwrap();
        assert_eq!(m.mcts, Some(MctsConfig::default()));
    }

    #[test]
    fn new_spec_errors_name_the_key_or_value() {
        for (bad, why) in [
            (
                "mcts:simz=3",
                "unknown setting 'simz' for mcts (known: sims, time",
            ),
            ("mcts:depth=2", "unknown setting 'depth' for mcts"),
            ("mcts:sims=x", "sims=x: expected a whole number"),
            ("mcts:threads=0", "threads=0"),
            ("mcts:time=0", "time must be a positive"),
            ("mcts:time=abc", "time=abc"),
            ("mcts:puct=maybe", "puct=maybe"),
            ("mcts:rollout=0", "eval=NAME"),
            ("mcts:sims=10,rollout=5", "need an evaluator"),
            ("mcts:sims=0", "time="),
            (
                "mcts:eval=mindist",
                "eval=mindist: expected an evaluator of arimaa",
            ),
            ("mcts:eval=", "eval= needs an evaluator name"),
            ("mcts:sims", "'sims' is not key=value"),
            (
                "greedy:depth=1",
                "unknown setting 'depth' for greedy (known: eval, setup)",
            ),
            ("greedy:eval=ckpt:", "needs a checkpoint directory"),
            ("greedy:eval=lieberum", "eval=lieberum"),
            ("alphabeta:eval=", "eval= needs an evaluator name"),
            ("alphabeta:sims=3", "unknown setting 'sims' for alphabeta"),
            ("mcts:setup=clever", "not random or standard"),
            ("minimax:depth=2", "expected random, alphabeta"),
        ] {
            let err = bad.parse::<EngineSpec>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(err.contains(&format!("'{bad}'")), "{bad}: {err}");
        }
    }

    #[test]
    fn random_setups_are_legal_and_reproducible() {
        for side in [Side::First, Side::Second] {
            let a = random_setup(side, &mut seeded_rng(7, 0));
            let b = random_setup(side, &mut seeded_rng(7, 0));
            assert_eq!(a, b);
            let text = a.to_notation();
            assert_eq!(Setup::parse(side, &text).unwrap(), a);
        }
        let a = random_setup(Side::First, &mut seeded_rng(7, 0));
        let c = random_setup(Side::First, &mut seeded_rng(8, 0));
        assert_ne!(a, c);
    }

    fn takes_the_cat(spec: &str, tree: Option<&mut SearchTree>) -> Choice {
        let mut game = free_cat();
        let player = EnginePlayer::build(
            &spec.parse().unwrap(),
            &PlayerContext::default_for::<Arimaa>(),
        )
        .unwrap();
        let stop = AtomicBool::new(false);
        let limits = MoveLimits {
            max_depth: 1,
            deadline: None,
            max_nodes: None,
            stop: &stop,
        };
        let c = player
            .choose(&game, &limits, tree, &mut seeded_rng(1, 0), |_| {})
            .unwrap();
        assert!(c.error.is_none(), "{spec}: {:?}", c.error);
        let text = game.move_to_string(c.mv);
        game.play(c.mv);
        let silver = game.position().material(Side::Second);
        assert_eq!(silver[PieceType::Cat as usize], 0, "{spec}: {text}");
        c
    }

    #[test]
    fn alphabeta_takes_a_free_piece() {
        let c = takes_the_cat("alphabeta", None);
        let r = c.search.unwrap();
        assert!(r.complete && r.depth == 1);
        assert!(r.score >= 1500, "{}", r.score);
        assert_eq!(c.score, Some(centi_rabbits(r.score)));
    }

    #[test]
    fn greedy_and_mcts_take_a_free_piece() {
        let c = takes_the_cat("greedy", None);
        let (seen, total) = c.greedy.unwrap();
        assert_eq!(seen, total);
        assert!(c.score.unwrap() >= 150, "{:?}", c.score);
        let c = takes_the_cat("greedy:eval=material", None);
        assert!(c.score.unwrap() >= 150, "{:?}", c.score);
        // With the material value at the leaves, a few hundred simulations
        // find the capture; the tree is kept for the position reached.
        let mut tree = SearchTree::default();
        let c = takes_the_cat("mcts:sims=600,eval=material", Some(&mut tree));
        let report = c.mcts.unwrap();
        assert_eq!(report.stats.simulations, 600);
        assert_eq!(report.reused, 0);
        assert!(
            report.best_visits > 0 && report.best_value > 0.0,
            "{report:?}"
        );
        let key = free_cat().hash_key();
        assert_eq!(tree.visits(key), 600);
        let mut after = free_cat();
        after.play(c.mv);
        tree.advance(key, c.mv, after.hash_key());
        assert_eq!(tree.visits(after.hash_key()), report.best_visits);
        tree.clear();
        assert_eq!(tree.visits(after.hash_key()), 0);
    }

    #[test]
    fn a_missing_or_foreign_checkpoint_is_refused_at_build() {
        let ctx = PlayerContext::default_for::<Arimaa>();
        for spec in [
            "greedy:eval=ckpt:/no/such/checkpoint",
            "alphabeta:depth=1,eval=ckpt:/no/such/checkpoint",
            "mcts:sims=10,threads=2,eval=ckpt:/no/such/checkpoint",
        ] {
            let err = EnginePlayer::build(&spec.parse().unwrap(), &ctx)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("/no/such/checkpoint") && err.contains(spec),
                "{spec}: {err}"
            );
        }
        let ttt = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/checkpoints/tictactoe-mlp80-td"
        );
        let err = EnginePlayer::build(&format!("greedy:eval=ckpt:{ttt}").parse().unwrap(), &ctx)
            .unwrap_err()
            .to_string();
        assert!(err.contains("tictactoe") && err.contains("arimaa"), "{err}");
    }
}
