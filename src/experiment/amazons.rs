//! Fugers (2017), section 5: can a quick learned evaluation stand in for
//! search in Amazons? A game database made by self-play between strong,
//! varied players; Elliott MLPs trained on it by TD(lambda) for each
//! encoding (the thesis' UNITS, MOBILITY, BITS, and its future-work
//! TERRITORY) and hidden size, the run with the lowest test error kept;
//! value networks fitted on it by regression (`amazons_value`, beyond the
//! thesis); their 0/1 error of the predicted winner beside
//! the hand evaluators' (figures 15-17); and the equity of every evaluator
//! with no lookahead, alpha-beta and MCTS against the good player
//! (Lieberum + alpha-beta) and the simple one (minimal distance, no
//! lookahead) (tables 4 and 5).
//!
//! Every stage resumes from what it wrote in `OUT`: the database by chunks
//! of games (`db/games/`), each network run by its checkpoint
//! (`nets/NAME/run-R/`), each equity cell by its result file
//! (`matches/`, kept while the players' files and settings are the same).

use super::amazons_value::{
    fit_value_nets, split_model, value_net_model, ValueNet, ValueNetConfig, VALUE_NET_ENCODER,
};
use crate::arena::{play_match_from, ArenaError, StartConfig, Wdl};
use crate::checkpoint::{self, CheckpointConfig, CheckpointError, TrainingInfo};
use crate::dataset::{Dataset, DatasetError, PositionRow, Split, SplitRule};
use crate::encode::Encoder;
use crate::eval::{rows_metrics, EvalError, GroupedMetrics};
use crate::game::{hash_of, Amazons, Game, Outcome, Side};
use crate::games::GameSupport;
use crate::infer::{mlp_evaluator, Evaluator};
use crate::model::{ModelConfig, NativeMlp};
use crate::positions::{build_dataset, BuildOptions, PositionsError, Terminations};
use crate::record::{GameRecord, PerSide};
use crate::report::{write_json, LineChart, ReportError, Table};
use crate::search::evaluators::{evaluator_by_name, EvalContext};
use crate::search::game_player::{player_from_spec_in, PlayerContext};
use crate::search::scorer::Scorer;
use crate::search::{Player, SearchError};
use crate::train::td_dataset::{fresh_network, run_seed, td_error, td_examples};
use crate::train::{td_games, TdGame, TdNetConfig, TrainError};
use crate::util::{derive_seed, seeded_rng, write_atomic};
use indicatif::ProgressBar;
use rand::seq::IndexedRandom;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// The thesis' figure 15: test error of the hand evaluators and the
/// networks' range (best BITS-160, worst UNITS-80).
pub const THESIS_ERRORS: [(&str, f64); 3] =
    [("lieberum", 0.24), ("mindist", 0.25), ("random", 0.50)];
pub const THESIS_NET_ERRORS: (f64, f64) = (0.37, 0.38);

/// The thesis' tables 4 (against good) and 5 (against simple): equity
/// with no lookahead, alpha-beta, MCTS.
pub const THESIS_VS_GOOD: [(&str, [f64; 3]); 4] = [
    ("lieberum", [-0.94, -0.02, -0.76]),
    ("mindist", [-0.98, -0.68, -0.98]),
    ("random", [-1.00, -1.00, -1.00]),
    ("network", [-1.00, -1.00, -1.00]),
];
pub const THESIS_VS_SIMPLE: [(&str, [f64; 3]); 12] = [
    ("lieberum", [0.42, 0.98, 0.78]),
    ("mindist", [0.00, 0.82, 0.44]),
    ("random", [-1.00, -0.98, -1.00]),
    ("UNITS-40", [-0.92, -0.86, -0.70]),
    ("UNITS-80", [-1.00, -0.84, -0.68]),
    ("UNITS-160", [-0.96, -0.86, -0.72]),
    ("MOBILITY-40", [-0.92, -0.80, -0.50]),
    ("MOBILITY-80", [-0.92, -0.76, -0.70]),
    ("MOBILITY-160", [-0.92, -0.88, -0.78]),
    ("BITS-40", [-0.94, -0.86, -0.66]),
    ("BITS-80", [-0.96, -0.90, -0.84]),
    ("BITS-160", [-0.96, -0.90, -0.78]),
];

/// Plies with fewer positions are left out of the plots (not the CSV).
const MIN_PLY_POSITIONS: u64 = 5;

/// The searches of tables 4 and 5, in their column order.
pub const SEARCHES: [&str; 3] = ["no lookahead", "alpha-beta", "MCTS"];

#[derive(Clone, Debug, Serialize)]
pub struct AmazonsExperimentConfig {
    pub out: PathBuf,
    pub seed: u64,
    /// Board side (the thesis: 10).
    pub size: usize,
    /// Games played for the database (rejected ones are not replaced).
    pub db_games: usize,
    /// The players drawn (uniformly, per side and game) to play them.
    pub db_players: Vec<String>,
    /// Uniformly random plies before the players move.
    pub db_random_opening: usize,
    /// Games still running after this many plies are adjudicated.
    pub db_max_plies: usize,
    /// Games per chunk file (the unit of resumption).
    pub db_chunk: usize,
    /// Share of the games held out as the test set.
    pub test_fraction: f64,
    /// The good player (the reference of table 4, the loser's side when
    /// adjudicating) and the simple one (table 5, the leader's side).
    pub good: String,
    pub simple: String,
    pub encoders: Vec<String>,
    pub hidden: Vec<usize>,
    /// TD(lambda) runs per configuration; the lowest test error is kept.
    pub runs: usize,
    /// Every network's settings but the hidden size.
    pub td: TdNetConfig,
    /// Games per equity cell (colours alternate).
    pub equity_games: usize,
    /// Random plies at the start of every equity game, so deterministic
    /// players do not replay one game.
    pub equity_random_opening: usize,
    /// The searches an evaluator plays with: `SPEC,eval=E` (no lookahead is
    /// `greedy:eval=E`).
    pub alphabeta: String,
    pub mcts: String,
    /// The columns of tables 4 and 5 played (indices into [`SEARCHES`]);
    /// the others are left out of the tables.
    pub searches: Vec<usize>,
    /// Beyond the thesis: value networks fitted on the database
    /// (`amazons_value`), measured and played like the others.
    pub value_nets: ValueNetConfig,
    /// The columns the value networks play (a subset of `searches`): a
    /// convolutional network's alpha-beta values every leaf by a batch, so
    /// depth 2 costs it about a million positions a move.
    pub value_net_searches: Vec<usize>,
}

impl AmazonsExperimentConfig {
    /// The default budget (docs/amazons.md states what is known of its
    /// time).
    pub fn new(out: PathBuf) -> Self {
        AmazonsExperimentConfig {
            out,
            seed: 1,
            size: 10,
            db_games: 1200,
            db_players: vec![
                "alphabeta:depth=2,eval=lieberum".into(),
                "alphabeta:depth=2,eval=mindist".into(),
                "alphabeta:depth=1,eval=lieberum".into(),
                "mcts:sims=300,eval=lieberum".into(),
                "mcts:sims=600,eval=mindist".into(),
            ],
            db_random_opening: 2,
            db_max_plies: 60,
            db_chunk: 16,
            test_fraction: 0.1,
            good: "alphabeta:depth=2,eval=lieberum".into(),
            simple: "greedy:eval=mindist".into(),
            encoders: vec![
                "amazons-units".into(),
                "amazons-mobility".into(),
                "amazons-bits".into(),
                // Beyond the thesis: its future-work representation.
                "amazons-territory".into(),
            ],
            hidden: vec![40, 80, 160],
            runs: 2,
            td: TdNetConfig {
                examples: 20_000,
                ..TdNetConfig::preset("fugers-amazons").unwrap_or_else(|| unreachable!())
            },
            equity_games: 100,
            equity_random_opening: 2,
            alphabeta: "alphabeta:depth=2".into(),
            mcts: "mcts:sims=300".into(),
            searches: vec![0, 1, 2],
            value_nets: ValueNetConfig::default(),
            value_net_searches: vec![0, 2],
        }
    }

    /// A small budget to see every stage run (estimated at a quarter of
    /// an hour on 2 cores; not measured end to end).
    pub fn quick(out: PathBuf) -> Self {
        let mut cfg = Self::new(out);
        cfg.db_games = 96;
        cfg.runs = 1;
        cfg.td.examples = 1_000;
        cfg.equity_games = 10;
        cfg.alphabeta = "alphabeta:depth=1".into();
        cfg.mcts = "mcts:sims=50".into();
        cfg.value_nets.epochs = 1;
        cfg.value_nets.search_labels.depth = 1;
        cfg
    }
}

#[derive(Debug, Error)]
pub enum AmazonsExperimentError {
    #[error("player: {0}")]
    Player(#[from] SearchError),
    #[error(transparent)]
    Arena(#[from] ArenaError),
    #[error("database: {0}")]
    Positions(#[from] PositionsError),
    #[error("dataset: {0}")]
    Dataset(#[from] DatasetError),
    #[error("training: {0}")]
    Train(#[from] TrainError),
    #[error("error of the evaluators: {0}")]
    Eval(#[from] EvalError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error("{path}: {why}")]
    File { path: PathBuf, why: String },
    #[error("invalid setting {field}: {why}")]
    Config { field: &'static str, why: String },
}

type Result<T> = std::result::Result<T, AmazonsExperimentError>;

fn file_error(path: &Path, why: impl ToString) -> AmazonsExperimentError {
    AmazonsExperimentError::File {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

/// What one chunk of the database holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DbStats {
    pub played: u64,
    /// Finished games kept.
    pub finished: u64,
    /// Games cut at the ply limit whose leader, played by the simple player,
    /// still beat the good player: kept, labelled with the leader's win.
    pub adjudicated: u64,
    /// Games cut at the ply limit that the good player turned round.
    pub rejected: u64,
    pub plies: u64,
    pub seconds: f64,
}

impl DbStats {
    fn add(&mut self, o: &DbStats) {
        self.played += o.played;
        self.finished += o.finished;
        self.adjudicated += o.adjudicated;
        self.rejected += o.rejected;
        self.plies += o.plies;
        self.seconds += o.seconds;
    }
}

/// One network configuration's result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NetResult {
    pub name: String,
    pub encoder: String,
    pub hidden: usize,
    pub best_run: usize,
    /// Test error of every run.
    pub run_errors: Vec<f64>,
}

impl NetResult {
    /// The kept run's test error.
    pub fn best_error(&self) -> f64 {
        self.run_errors
            .get(self.best_run)
            .copied()
            .unwrap_or(f64::INFINITY)
    }
}

/// One evaluator's 0/1 error on one split.
#[derive(Clone, Debug, Serialize)]
pub struct ErrorRow {
    pub evaluator: String,
    pub split: String,
    pub positions: u64,
    pub error: f64,
    pub thesis: Option<f64>,
}

/// One equity cell of tables 4 and 5.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EquityRow {
    pub evaluator: String,
    pub search: String,
    pub opponent: String,
    pub spec: String,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub equity: f64,
    pub equity_lo: f64,
    pub equity_hi: f64,
    pub thesis: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct AmazonsExperimentReport {
    pub config: AmazonsExperimentConfig,
    pub database: DbStats,
    pub train_games: usize,
    pub test_games: usize,
    pub test_positions: u64,
    pub nets: Vec<NetResult>,
    /// The value networks' names (`plies train` presets).
    pub value_nets: Vec<String>,
    pub errors: Vec<ErrorRow>,
    pub equities: Vec<EquityRow>,
    pub seconds: f64,
}

/// `amazons-units` -> `UNITS`.
fn short(encoder: &str) -> String {
    encoder
        .strip_prefix("amazons-")
        .unwrap_or(encoder)
        .to_ascii_uppercase()
}

fn net_name(encoder: &str, hidden: usize) -> String {
    format!("{}-{hidden}", short(encoder))
}

/// The 95% interval of the equity `2 * score - 1`: Wilson's for the win
/// rate when there is no draw (sound at 0% and 100%), else the score's.
pub fn equity_interval(w: &Wdl) -> (f64, f64) {
    let (lo, hi) = if w.draws == 0 {
        w.win_rate_interval()
    } else {
        w.score_interval()
    };
    (2.0 * lo - 1.0, 2.0 * hi - 1.0)
}

/// Runs the experiment (resuming what `cfg.out` holds), writing tables,
/// CSV, JSON and plots there. `say` reports each stage.
pub fn run(
    cfg: &AmazonsExperimentConfig,
    progress: &dyn Fn(u64, &str) -> ProgressBar,
    say: &dyn Fn(&str),
) -> Result<AmazonsExperimentReport> {
    check(cfg)?;
    let start = std::time::Instant::now();
    std::fs::create_dir_all(&cfg.out).map_err(|e| file_error(&cfg.out, e))?;
    let database = make_database(cfg, progress, say)?;
    let data_dir = build_database_dataset(cfg, "amazons-bits", "dataset", say)?;
    let ds = Dataset::open(&data_dir)?;
    let train_rows = ds.games(Some(Split::Train))?;
    let test_rows = ds.games(Some(Split::Test))?;
    let test_positions = ds.num_rows(Some(Split::Test));
    say(&format!(
        "database: {} games ({} finished, {} adjudicated, {} rejected); {} train games, {} test games ({} positions)",
        database.finished + database.adjudicated,
        database.finished,
        database.adjudicated,
        database.rejected,
        train_rows.len(),
        test_rows.len(),
        test_positions
    ));
    let nets = train_networks(cfg, &ds, progress, say)?;
    let value_nets = if cfg.value_nets.models.is_empty() {
        Vec::new()
    } else {
        let data = build_database_dataset(cfg, VALUE_NET_ENCODER, "dataset-territory", say)?;
        fit_value_nets(cfg, &data, progress, say)?
    };
    let errors = measure_errors(cfg, &ds, &nets, &value_nets, say)?;
    write_error_outputs(&cfg.out, &errors.rows, &errors.by_ply)?;
    let equities = play_equities(cfg, &nets, &value_nets, progress, say)?;
    let report = AmazonsExperimentReport {
        config: cfg.clone(),
        database,
        train_games: train_rows.len(),
        test_games: test_rows.len(),
        test_positions,
        nets: nets.iter().map(|n| n.result.clone()).collect(),
        value_nets: value_nets.iter().map(|v| v.name.clone()).collect(),
        errors: errors.rows,
        equities,
        seconds: start.elapsed().as_secs_f64(),
    };
    write_outputs(&report)?;
    Ok(report)
}

/// A player of the experiment's board size (its `ckpt:` evaluators are
/// checked against it).
fn player(cfg: &AmazonsExperimentConfig, spec: &str) -> Result<Arc<dyn Player<Amazons>>> {
    let ctx = PlayerContext {
        size: cfg.size,
        eval: EvalContext::default(),
    };
    Ok(player_from_spec_in::<Amazons>(spec, &ctx)?)
}

fn check(cfg: &AmazonsExperimentConfig) -> Result<()> {
    let bad = |field, why: &str| {
        Err(AmazonsExperimentError::Config {
            field,
            why: why.into(),
        })
    };
    if cfg.db_games == 0 || cfg.db_chunk == 0 {
        return bad("db_games", "need at least one game and one game per chunk");
    }
    if cfg.db_players.is_empty() {
        return bad("db_players", "need at least one player");
    }
    if cfg
        .searches
        .iter()
        .chain(&cfg.value_net_searches)
        .any(|&s| s >= SEARCHES.len())
    {
        return bad(
            "searches",
            "expected indices of no lookahead (0), alpha-beta (1), MCTS (2)",
        );
    }
    if cfg.encoders.is_empty() || cfg.hidden.is_empty() || cfg.runs == 0 {
        return bad("networks", "need an encoder, a hidden size and a run");
    }
    if !(cfg.test_fraction > 0.0 && cfg.test_fraction < 1.0) {
        return bad(
            "test_fraction",
            "expected a fraction strictly between 0 and 1",
        );
    }
    for spec in cfg.db_players.iter().chain([&cfg.good, &cfg.simple]) {
        player(cfg, spec)?;
    }
    let encoder = encoder_of(cfg, VALUE_NET_ENCODER)?;
    let input = crate::model::InputShape::new(encoder.shape(), encoder.globals_len());
    for model in &cfg.value_nets.models {
        if let Err(why) = value_net_model(model, &cfg.td, input) {
            return bad("value-nets", &why);
        }
    }
    if cfg
        .value_nets
        .models
        .iter()
        .any(|m| split_model(m).is_ok_and(|name| name.round > 0))
    {
        let labels = &cfg.value_nets.search_labels;
        if let Err(e) = labels.check() {
            return bad("search_labels", &e.to_string());
        }
        let ctx = PlayerContext {
            size: cfg.size,
            eval: EvalContext::default(),
        };
        if let Err(e) = Scorer::<Amazons>::by_name(&labels.eval, &ctx) {
            return bad("search_labels", &e.to_string());
        }
    }
    Ok(())
}

/// Plays database game `index`: a random opening, then two players drawn
/// from `db_players`; a game cut at the ply limit is adjudicated as the
/// thesis does (the side the Lieberum evaluation favours is played on by
/// the simple player against the good one; kept only if it still wins).
fn database_game(
    cfg: &AmazonsExperimentConfig,
    players: &[Arc<dyn Player<Amazons>>],
    good: &dyn Player<Amazons>,
    simple: &dyn Player<Amazons>,
    judge: &dyn Evaluator<Amazons>,
    index: u64,
) -> Result<(Option<GameRecord>, DbStats)> {
    let mut rng = seeded_rng(cfg.seed, 10_000 + index);
    let first = players
        .choose(&mut rng)
        .cloned()
        .ok_or_else(|| file_error(&cfg.out, "no players"))?;
    let second = players
        .choose(&mut rng)
        .cloned()
        .ok_or_else(|| file_error(&cfg.out, "no players"))?;
    let mut g = Amazons::with_size(cfg.size).map_err(|e| AmazonsExperimentError::Config {
        field: "size",
        why: e.to_string(),
    })?;
    let mut moves = Vec::new();
    let mut scratch = Vec::new();
    while moves.len() < cfg.db_random_opening && g.outcome().is_none() {
        let Some(mv) = g.exploration_move(&mut rng, &mut scratch) else {
            break;
        };
        moves.push(g.move_to_string(mv));
        g.play(mv);
    }
    let mut sessions = [first.session(), second.session()];
    while g.outcome().is_none() && moves.len() < cfg.db_max_plies {
        let mover = match g.side_to_move() {
            Side::First => 0,
            Side::Second => 1,
        };
        let mv = sessions[mover].choose(&g, &mut rng)?;
        for s in &mut sessions {
            s.observe(&g, mv);
        }
        moves.push(g.move_to_string(mv));
        g.play(mv);
    }
    let mut stats = DbStats {
        played: 1,
        plies: moves.len() as u64,
        ..DbStats::default()
    };
    let (winner, termination) = match g.outcome() {
        Some(Outcome::Win(w)) => {
            stats.finished = 1;
            (w, g.termination_name().to_string())
        }
        Some(Outcome::Draw) => return Ok((None, stats)),
        None => {
            let v = judge
                .evaluate(std::slice::from_ref(&g))
                .map_err(|e| file_error(&cfg.out, format!("adjudicating: {e}")))?;
            let mover = g.side_to_move();
            let leader = if v.first().copied().unwrap_or(0.0) >= 0.0 {
                mover
            } else {
                mover.other()
            };
            let (p1, p2): (&dyn Player<Amazons>, &dyn Player<Amazons>) = match leader {
                Side::First => (simple, good),
                Side::Second => (good, simple),
            };
            let end = crate::arena::play_game_from(g, p1, p2, index as usize, &mut rng, None)?;
            if end.outcome != Some(Outcome::Win(leader)) {
                stats.rejected = 1;
                return Ok((None, stats));
            }
            stats.adjudicated = 1;
            (leader, "adjudicated".to_string())
        }
    };
    let record = GameRecord {
        game: Amazons::NAME.into(),
        id: format!("amazons-db-{index:06}"),
        source: format!("{} vs {}", first.name(), second.name()),
        event: "plies experiment amazons".into(),
        players: PerSide::new(first.name(), second.name()),
        ratings: PerSide::new(None, None),
        player_types: None,
        setups: Vec::new(),
        plies: moves.len() as u32,
        moves,
        result: Some(winner),
        termination,
        rated: None,
        start_time: None,
        board_size: (cfg.size != Amazons::DEFAULT_SIZE).then_some(cfg.size),
        explored: Vec::new(),
    };
    Ok((Some(record), stats))
}

/// The database's chunk files, played where missing (in parallel).
fn make_database(
    cfg: &AmazonsExperimentConfig,
    progress: &dyn Fn(u64, &str) -> ProgressBar,
    say: &dyn Fn(&str),
) -> Result<DbStats> {
    let dir = cfg.out.join("db").join("games");
    std::fs::create_dir_all(&dir).map_err(|e| file_error(&dir, e))?;
    let chunks = cfg.db_games.div_ceil(cfg.db_chunk);
    let chunk_path = |c: usize, ext: &str| dir.join(format!("part-{c:05}.{ext}"));
    let missing: Vec<usize> = (0..chunks)
        .filter(|&c| !(chunk_path(c, "jsonl").exists() && chunk_path(c, "json").exists()))
        .collect();
    if !missing.is_empty() {
        say(&format!(
            "database: playing {} of {} chunks of {} games",
            missing.len(),
            chunks,
            cfg.db_chunk
        ));
        let players: Vec<Arc<dyn Player<Amazons>>> = cfg
            .db_players
            .iter()
            .map(|s| player(cfg, s))
            .collect::<std::result::Result<_, _>>()?;
        let good = player(cfg, &cfg.good)?;
        let simple = player(cfg, &cfg.simple)?;
        let judge = evaluator_by_name::<Amazons>("lieberum", cfg.size, &EvalContext::default())?;
        let pb = progress((missing.len() * cfg.db_chunk) as u64, "db games");
        for &c in &missing {
            let t0 = std::time::Instant::now();
            let from = c * cfg.db_chunk;
            let to = (from + cfg.db_chunk).min(cfg.db_games);
            let played: Vec<(Option<GameRecord>, DbStats)> = (from..to)
                .into_par_iter()
                .map(|i| {
                    let r = database_game(
                        cfg,
                        &players,
                        good.as_ref(),
                        simple.as_ref(),
                        judge.as_ref(),
                        i as u64,
                    );
                    pb.inc(1);
                    r
                })
                .collect::<Result<_>>()?;
            let mut stats = DbStats::default();
            let mut text = String::new();
            for (rec, s) in &played {
                stats.add(s);
                if let Some(rec) = rec {
                    text.push_str(&serde_json::to_string(rec).map_err(|e| file_error(&dir, e))?);
                    text.push('\n');
                }
            }
            stats.seconds = t0.elapsed().as_secs_f64();
            // The stats first: a chunk counts as done once its records exist.
            write_json(chunk_path(c, "json"), &stats)?;
            let path = chunk_path(c, "jsonl");
            write_atomic(&path, text.as_bytes()).map_err(|e| file_error(&path, e))?;
        }
        pb.finish_and_clear();
    }
    let mut total = DbStats::default();
    for c in 0..chunks {
        let path = chunk_path(c, "json");
        let text = std::fs::read_to_string(&path).map_err(|e| file_error(&path, e))?;
        let s: DbStats = serde_json::from_str(&text).map_err(|e| file_error(&path, e))?;
        total.add(&s);
    }
    Ok(total)
}

/// The database's records as a dataset (BITS planes; every trainer
/// re-encodes the positions it reads), split 90/10 by game; rebuilt when
/// the records changed.
/// The database's records as a dataset in `encoder` at `OUT/db/NAME`,
/// rebuilt when the records, the split or the encoder changed.
fn build_database_dataset(
    cfg: &AmazonsExperimentConfig,
    encoder: &str,
    name: &str,
    say: &dyn Fn(&str),
) -> Result<PathBuf> {
    let games = cfg.out.join("db").join("games");
    let out = cfg.out.join("db").join(name);
    let mut records: Vec<PathBuf> = (0..cfg.db_games.div_ceil(cfg.db_chunk))
        .map(|c| games.join(format!("part-{c:05}.jsonl")))
        .collect();
    records.sort();
    let mut key_bytes = Vec::new();
    for r in &records {
        key_bytes.extend(std::fs::read(r).map_err(|e| file_error(r, e))?);
    }
    let key = format!(
        "records {:016x}, test {}, encoder {encoder}",
        hash_of(&key_bytes),
        cfg.test_fraction
    );
    let stamp = cfg.out.join("db").join(format!("{name}.key"));
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(key.as_str())
        && Dataset::open(&out).is_ok()
    {
        return Ok(out);
    }
    say(&format!(
        "database: encoding the records into a dataset ({encoder})"
    ));
    let encoder: Arc<dyn Encoder<Amazons>> =
        Arc::from(Amazons::encoder(encoder, cfg.size).map_err(|e| {
            AmazonsExperimentError::Config {
                field: "encoder",
                why: e.to_string(),
            }
        })?);
    let mut options = BuildOptions::new::<Amazons>();
    options.filters.terminations = Terminations::All;
    options.split = SplitRule::new(0.0, cfg.test_fraction)?;
    options.force = true;
    options.strict = true;
    options.provenance =
        serde_json::json!({"made_by": "plies experiment amazons", "seed": cfg.seed});
    build_dataset::<Amazons>(&records, &out, encoder, cfg.size, &options, None)?;
    write_atomic(&stamp, key.as_bytes()).map_err(|e| file_error(&stamp, e))?;
    Ok(out)
}

/// A trained configuration: its best network behind its encoder.
struct TrainedNet {
    result: NetResult,
    encoder: Arc<dyn Encoder<Amazons>>,
    net: NativeMlp,
    /// The best run's checkpoint (`eval=ckpt:` of the equity players).
    best_dir: PathBuf,
}

fn encoder_of(cfg: &AmazonsExperimentConfig, name: &str) -> Result<Arc<dyn Encoder<Amazons>>> {
    Amazons::encoder(name, cfg.size)
        .map(Arc::from)
        .map_err(|e| AmazonsExperimentError::Config {
            field: "encoders",
            why: e.to_string(),
        })
}

fn save_net(
    dir: &Path,
    cfg: &AmazonsExperimentConfig,
    td: &TdNetConfig,
    encoder: &dyn Encoder<Amazons>,
    net: &NativeMlp,
    seed: u64,
    metrics: serde_json::Value,
) -> Result<()> {
    let training = TrainingInfo {
        method: "td_lambda_from_dataset".into(),
        seed: Some(seed),
        dataset_manifest_sha256: None,
        dataset: Some(cfg.out.join("db").join("dataset").display().to_string()),
        examples: td.examples as u64,
        hyperparameters: serde_json::to_value(td).unwrap_or_default(),
        metrics,
    };
    let model = ModelConfig::Mlp(td.mlp(net.config().inputs).into());
    let ck = CheckpointConfig::new(Amazons::NAME, encoder.spec(), model, training);
    let tensors = net
        .to_tensors(&candle_core::Device::Cpu)
        .map_err(|e| file_error(dir, e))?;
    checkpoint::save(dir, &ck, &tensors)?;
    Ok(())
}

/// Every configuration x run, in parallel, each resumed from its
/// checkpoint; the run with the lowest test error kept per configuration.
fn train_networks(
    cfg: &AmazonsExperimentConfig,
    ds: &Dataset,
    progress: &dyn Fn(u64, &str) -> ProgressBar,
    say: &dyn Fn(&str),
) -> Result<Vec<TrainedNet>> {
    struct Job {
        encoder: usize,
        hidden: usize,
        run: usize,
    }
    let encoders: Vec<Arc<dyn Encoder<Amazons>>> = cfg
        .encoders
        .iter()
        .map(|e| encoder_of(cfg, e))
        .collect::<Result<_>>()?;
    let td_of = |hidden: usize| TdNetConfig {
        hidden,
        ..cfg.td.clone()
    };
    let run_dir = |e: usize, h: usize, r: usize| {
        cfg.out
            .join("nets")
            .join(net_name(&cfg.encoders[e], h))
            .join(format!("run-{r}"))
    };
    let key = |e: usize, h: usize, r: usize| serde_json::json!({"td": td_of(h), "seed": run_seed(cfg.seed, r), "encoder": cfg.encoders[e], "dataset": ds.manifest_sha256()});
    let mut jobs = Vec::new();
    for e in 0..encoders.len() {
        for &h in &cfg.hidden {
            for r in 0..cfg.runs {
                jobs.push(Job {
                    encoder: e,
                    hidden: h,
                    run: r,
                });
            }
        }
    }
    // Runs already trained (same settings, same data) are kept.
    let done = |j: &Job| -> Option<(NativeMlp, f64)> {
        let ck = checkpoint::load(
            &run_dir(j.encoder, j.hidden, j.run),
            Some(Amazons::NAME),
            None,
        )
        .ok()?;
        let metrics = &ck.config.training.metrics;
        if metrics.get("key")? != &key(j.encoder, j.hidden, j.run) {
            return None;
        }
        let error = metrics.get("test_error")?.as_f64()?;
        let encoder = &encoders[j.encoder];
        let mlp = td_of(j.hidden).mlp(encoder.plane_len() + encoder.spec().globals);
        let net = NativeMlp::from_tensors(&mlp, &ck.tensors).ok()?;
        Some((net, error))
    };
    let todo: Vec<&Job> = jobs.iter().filter(|j| done(j).is_none()).collect();
    if !todo.is_empty() {
        say(&format!(
            "networks: training {} of {} runs ({} games each)",
            todo.len(),
            jobs.len(),
            cfg.td.examples
        ));
        let used: Vec<usize> = {
            let mut u: Vec<usize> = todo.iter().map(|j| j.encoder).collect();
            u.sort_unstable();
            u.dedup();
            u
        };
        let mut games: Vec<Option<(Vec<TdGame>, Vec<TdGame>)>> = vec![None; encoders.len()];
        for e in used {
            let train = td_games(ds, Some(Split::Train), encoders[e].as_ref())?;
            let test = td_games(ds, Some(Split::Test), encoders[e].as_ref())?;
            games[e] = Some((train, test));
        }
        let pb = progress((todo.len() * cfg.td.examples) as u64, "td games");
        todo.par_iter()
            .map(|j| -> Result<()> {
                let (train, test) = games[j.encoder]
                    .as_ref()
                    .ok_or_else(|| file_error(&cfg.out, "encoded games missing"))?;
                let td = td_of(j.hidden);
                let inputs = encoders[j.encoder].plane_len() + encoders[j.encoder].spec().globals;
                let seed = run_seed(cfg.seed, j.run);
                let (mut net, mut rng) = fresh_network(&td, inputs, seed)?;
                td_examples(
                    &mut net,
                    &mut rng,
                    train,
                    td.td,
                    td.examples,
                    |_, _, _| -> Result<()> {
                        pb.inc(1);
                        Ok(())
                    },
                )?;
                let error = td_error(&net, test).overall.summary().error01.unwrap_or(0.5);
                save_net(
                    &run_dir(j.encoder, j.hidden, j.run),
                    cfg,
                    &td,
                    encoders[j.encoder].as_ref(),
                    &net,
                    seed,
                    serde_json::json!({"key": key(j.encoder, j.hidden, j.run), "test_error": error}),
                )
            })
            .collect::<Result<Vec<()>>>()?;
        pb.finish_and_clear();
    }
    let mut out = Vec::new();
    for (e, encoder) in encoders.iter().enumerate() {
        for &h in &cfg.hidden {
            let mut best: Option<(usize, NativeMlp, f64)> = None;
            let mut run_errors = Vec::new();
            for r in 0..cfg.runs {
                let j = Job {
                    encoder: e,
                    hidden: h,
                    run: r,
                };
                let (net, error) = done(&j).ok_or_else(|| {
                    file_error(
                        &run_dir(e, h, r),
                        "the run's checkpoint is missing after training",
                    )
                })?;
                run_errors.push(error);
                if best.as_ref().is_none_or(|(_, _, b)| error < *b) {
                    best = Some((r, net, error));
                }
            }
            let (best_run, net, _) = best.ok_or_else(|| file_error(&cfg.out, "no runs"))?;
            out.push(TrainedNet {
                result: NetResult {
                    name: net_name(&cfg.encoders[e], h),
                    encoder: cfg.encoders[e].clone(),
                    hidden: h,
                    best_run,
                    run_errors,
                },
                encoder: encoder.clone(),
                net,
                best_dir: run_dir(e, h, best_run),
            });
        }
    }
    Ok(out)
}

/// An evaluator, its name and the thesis' test error for it.
type NamedEvaluator = (String, Arc<dyn Evaluator<Amazons>>, Option<f64>);

struct Errors {
    rows: Vec<ErrorRow>,
    /// `(evaluator, split, metrics)`.
    by_ply: Vec<(String, String, GroupedMetrics)>,
}

/// Figures 15-17: every evaluator's 0/1 error on every position of the
/// test and the train split.
fn measure_errors(
    cfg: &AmazonsExperimentConfig,
    ds: &Dataset,
    nets: &[TrainedNet],
    value_nets: &[ValueNet],
    say: &dyn Fn(&str),
) -> Result<Errors> {
    say("errors: every evaluator on every test and train position");
    let mut evaluators: Vec<NamedEvaluator> = Vec::new();
    for (name, thesis) in THESIS_ERRORS {
        evaluators.push((
            name.to_string(),
            evaluator_by_name::<Amazons>(name, cfg.size, &EvalContext::default())?,
            Some(thesis),
        ));
    }
    for n in nets {
        evaluators.push((
            n.result.name.clone(),
            Arc::new(mlp_evaluator(n.encoder.clone(), &n.net)),
            None,
        ));
    }
    for v in value_nets {
        let spec = format!("ckpt:{}", v.dir.display());
        evaluators.push((
            v.name.clone(),
            evaluator_by_name::<Amazons>(&spec, cfg.size, &EvalContext::default())?,
            None,
        ));
    }
    let mut rows = Vec::new();
    let mut by_ply = Vec::new();
    for split in [Split::Test, Split::Train] {
        let positions: Vec<PositionRow> = ds.rows(Some(split))?;
        for (name, eval, thesis) in &evaluators {
            let m = rows_metrics::<Amazons>(ds.dir(), eval.as_ref(), &positions, name)?;
            let s = m.overall.summary();
            rows.push(ErrorRow {
                evaluator: name.clone(),
                split: split.to_string(),
                positions: s.count,
                error: s.error01.unwrap_or(f64::NAN),
                thesis: if split == Split::Test { *thesis } else { None },
            });
            by_ply.push((name.clone(), split.to_string(), m));
        }
    }
    Ok(Errors { rows, by_ply })
}

/// Whether `name` is one of the thesis' networks (UNITS, MOBILITY, BITS),
/// whose figures the tables quote.
fn is_thesis_net(name: &str) -> bool {
    ["UNITS-", "MOBILITY-", "BITS-"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The thesis' equity for `evaluator` with search column `s` against
/// `opponent`, where it has one.
fn thesis_equity(evaluator: &str, s: usize, opponent: &str) -> Option<f64> {
    if opponent == "good" {
        let key = if is_thesis_net(evaluator) {
            "network"
        } else {
            evaluator
        };
        THESIS_VS_GOOD
            .iter()
            .find(|(n, _)| *n == key)
            .map(|(_, v)| v[s])
    } else {
        THESIS_VS_SIMPLE
            .iter()
            .find(|(n, _)| *n == evaluator)
            .map(|(_, v)| v[s])
    }
}

/// A match as cached in `OUT/matches/`: the key says what was played.
#[derive(Serialize, Deserialize)]
struct CachedMatch {
    key: String,
    wins: u64,
    draws: u64,
    losses: u64,
}

/// The bytes of a file as a short key (`absent` when it cannot be read):
/// what keys cached results to the weights they were made with.
pub(super) fn file_key(path: &Path) -> String {
    std::fs::read(path)
        .map(|b| format!("{:016x}", hash_of(&b)))
        .unwrap_or_else(|_| "absent".into())
}

/// An evaluator of tables 4 and 5 and where it plays.
struct Contender<'a> {
    name: String,
    /// Its `eval=` name.
    eval: String,
    /// The file whose bytes key its cached cells.
    weights: Option<PathBuf>,
    /// The columns it plays.
    searches: &'a [usize],
    plays_good: bool,
}

/// Tables 4 and 5, the cheap cells first (no lookahead, then alpha-beta,
/// then MCTS; against simple before good).
fn play_equities(
    cfg: &AmazonsExperimentConfig,
    nets: &[TrainedNet],
    value_nets: &[ValueNet],
    progress: &dyn Fn(u64, &str) -> ProgressBar,
    say: &dyn Fn(&str),
) -> Result<Vec<EquityRow>> {
    let all: Vec<usize> = (0..SEARCHES.len()).collect();
    // Table 4 has one row for the thesis' networks, which lost every game
    // to the good player: of them only the one of lowest test error plays
    // it (all play the simple player, as in table 5).
    let best_thesis_net = nets
        .iter()
        .filter(|n| is_thesis_net(&n.result.name))
        .min_by(|a, b| a.result.best_error().total_cmp(&b.result.best_error()))
        .map(|n| n.result.name.clone());
    let mut evaluators: Vec<Contender> = THESIS_ERRORS
        .iter()
        .map(|(n, _)| Contender {
            name: n.to_string(),
            eval: n.to_string(),
            weights: None,
            searches: &all,
            plays_good: true,
        })
        .collect();
    for n in nets {
        let name = &n.result.name;
        evaluators.push(Contender {
            name: name.clone(),
            eval: format!("ckpt:{}", n.best_dir.display()),
            weights: Some(n.best_dir.join("model.safetensors")),
            searches: &all,
            plays_good: !is_thesis_net(name) || best_thesis_net.as_ref() == Some(name),
        });
    }
    for v in value_nets {
        evaluators.push(Contender {
            name: v.name.clone(),
            eval: format!("ckpt:{}", v.dir.display()),
            weights: Some(v.dir.join("model.safetensors")),
            searches: if v.native {
                &all
            } else {
                &cfg.value_net_searches
            },
            plays_good: true,
        });
    }
    let searches = [
        "greedy".to_string(),
        cfg.alphabeta.clone(),
        cfg.mcts.clone(),
    ];
    let opponents = [("simple", cfg.simple.as_str()), ("good", cfg.good.as_str())];
    let start = StartConfig {
        size: cfg.size,
        ..StartConfig::standard::<Amazons>()
    }
    .with_random_opening(cfg.equity_random_opening);
    let starter = start.starter::<Amazons>();
    let mut rows = Vec::new();
    for (s, search) in searches.iter().enumerate() {
        if !cfg.searches.contains(&s) {
            continue;
        }
        for (opp_name, opp_spec) in opponents {
            let plays =
                |e: &&Contender| e.searches.contains(&s) && (e.plays_good || opp_name != "good");
            for Contender {
                name,
                eval,
                weights: file,
                ..
            } in evaluators.iter().filter(plays)
            {
                let spec = if search == "greedy" {
                    format!("greedy:eval={eval}")
                } else {
                    format!("{search},eval={eval}")
                };
                let cell = format!("{name}-{}-vs-{opp_name}", SEARCHES[s].replace(' ', "-"));
                // Seeded by the cell's name, not its spec (which holds paths).
                let seed = derive_seed(cfg.seed, hash_of(&cell));
                let files = file.as_deref().map(file_key).unwrap_or_default();
                let key = format!(
                    "{spec} vs {opp_spec}, {} games, {} random plies, size {}, seed {seed}, files {files}",
                    cfg.equity_games, cfg.equity_random_opening, cfg.size
                );
                let path = cfg.out.join("matches").join(format!("{cell}.json"));
                let cached = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|t| serde_json::from_str::<CachedMatch>(&t).ok())
                    .filter(|c| c.key == key);
                let wdl = match cached {
                    Some(c) => Wdl {
                        wins: c.wins,
                        draws: c.draws,
                        losses: c.losses,
                    },
                    None => {
                        say(&format!(
                            "equity: {spec} vs {opp_name} ({opp_spec}), {} games",
                            cfg.equity_games
                        ));
                        let a = player(cfg, &spec)?;
                        let b = player(cfg, opp_spec)?;
                        let pb = progress(cfg.equity_games as u64, "games");
                        let r = play_match_from(
                            a.as_ref(),
                            b.as_ref(),
                            &starter,
                            cfg.equity_games,
                            seed,
                            None,
                            Some(&pb),
                        )?;
                        pb.finish_and_clear();
                        let t = r.total;
                        write_json(
                            &path,
                            &CachedMatch {
                                key,
                                wins: t.wins,
                                draws: t.draws,
                                losses: t.losses,
                            },
                        )?;
                        t
                    }
                };
                let (lo, hi) = equity_interval(&wdl);
                rows.push(EquityRow {
                    evaluator: name.clone(),
                    search: SEARCHES[s].to_string(),
                    opponent: opp_name.to_string(),
                    spec,
                    games: wdl.games(),
                    wins: wdl.wins,
                    draws: wdl.draws,
                    losses: wdl.losses,
                    equity: wdl.equity(),
                    equity_lo: lo,
                    equity_hi: hi,
                    thesis: thesis_equity(name, s, opp_name),
                });
            }
        }
    }
    Ok(rows)
}

/// Figure 15 as a table: test and train error of every evaluator.
pub fn error_table(report: &AmazonsExperimentReport) -> Table {
    let mut t = Table::with_headers(["evaluator", "test error", "train error", "thesis (test)"]);
    let names: Vec<&str> = report
        .errors
        .iter()
        .filter(|r| r.split == "test")
        .map(|r| r.evaluator.as_str())
        .collect();
    for name in names {
        let get = |split: &str| {
            report
                .errors
                .iter()
                .find(|r| r.evaluator == name && r.split == split)
        };
        let thesis = match get("test").and_then(|r| r.thesis) {
            Some(v) => format!("{v:.2}"),
            None if is_thesis_net(name) => {
                format!("{:.2}-{:.2}", THESIS_NET_ERRORS.0, THESIS_NET_ERRORS.1)
            }
            None => "-".into(),
        };
        t.push_row([
            name.to_string(),
            get("test").map_or("-".into(), |r| format!("{:.3}", r.error)),
            get("train").map_or("-".into(), |r| format!("{:.3}", r.error)),
            thesis,
        ]);
    }
    t
}

/// Table 4 (`opponent` "good") or 5 ("simple"): equity and its 95%
/// interval, the thesis' figure in brackets.
pub fn equity_table(report: &AmazonsExperimentReport, opponent: &str) -> Table {
    let mut headers = vec!["evaluator".to_string()];
    headers.extend(SEARCHES.iter().map(|s| format!("{s} (thesis)")));
    let mut t = Table::with_headers(headers);
    let mut names: Vec<&str> = Vec::new();
    for r in report.equities.iter().filter(|r| r.opponent == opponent) {
        if !names.contains(&r.evaluator.as_str()) {
            names.push(&r.evaluator);
        }
    }
    for name in names {
        let mut row = vec![name.to_string()];
        for s in SEARCHES {
            let cell = report
                .equities
                .iter()
                .find(|r| r.evaluator == name && r.search == s && r.opponent == opponent);
            row.push(match cell {
                Some(r) => format!(
                    "{:+.2} [{:+.2}, {:+.2}] ({})",
                    r.equity,
                    r.equity_lo,
                    r.equity_hi,
                    r.thesis.map_or("-".into(), |v| format!("{v:+.2}"))
                ),
                None => "-".into(),
            });
        }
        t.push_row(row);
    }
    t
}

/// Figures 15-17 as soon as they are measured: `errors.csv`,
/// `error_by_ply.csv` and the plots.
fn write_error_outputs(
    out: &Path,
    rows: &[ErrorRow],
    by_ply: &[(String, String, GroupedMetrics)],
) -> Result<()> {
    let mut errors = Table::with_headers(["evaluator", "split", "positions", "error", "thesis"]);
    for r in rows {
        errors.push_row([
            r.evaluator.clone(),
            r.split.clone(),
            r.positions.to_string(),
            format!("{:.4}", r.error),
            r.thesis.map_or(String::new(), |v| format!("{v:.2}")),
        ]);
    }
    errors.write_csv(out.join("errors.csv"))?;
    let mut ply = Table::with_headers(["evaluator", "split", "ply", "positions", "error"]);
    for (name, split, m) in by_ply {
        for (k, acc) in &m.by_ply {
            let s = acc.summary();
            ply.push_row([
                name.clone(),
                split.clone(),
                k.to_string(),
                s.count.to_string(),
                s.error01.map_or(String::new(), |e| format!("{e:.4}")),
            ]);
        }
    }
    ply.write_csv(out.join("error_by_ply.csv"))?;
    write_error_plots(out, rows, by_ply)
}

fn write_outputs(report: &AmazonsExperimentReport) -> Result<()> {
    let out = &report.config.out;
    write_json(out.join("summary.json"), report)?;
    let mut eq = Table::with_headers([
        "evaluator",
        "search",
        "opponent",
        "spec",
        "games",
        "wins",
        "draws",
        "losses",
        "equity",
        "equity_lo",
        "equity_hi",
        "thesis",
    ]);
    for r in &report.equities {
        eq.push_row([
            r.evaluator.clone(),
            r.search.clone(),
            r.opponent.clone(),
            r.spec.clone(),
            r.games.to_string(),
            r.wins.to_string(),
            r.draws.to_string(),
            r.losses.to_string(),
            format!("{:.4}", r.equity),
            format!("{:.4}", r.equity_lo),
            format!("{:.4}", r.equity_hi),
            r.thesis.map_or(String::new(), |v| format!("{v:.2}")),
        ]);
    }
    eq.write_csv(out.join("equities.csv"))?;
    Ok(())
}

fn write_error_plots(
    out: &Path,
    rows: &[ErrorRow],
    by_ply: &[(String, String, GroupedMetrics)],
) -> Result<()> {
    let points = |m: &GroupedMetrics| -> Vec<(f64, f64)> {
        m.by_ply
            .iter()
            .filter(|(_, a)| a.count >= MIN_PLY_POSITIONS)
            .filter_map(|(k, a)| a.summary().error01.map(|e| (*k as f64, e)))
            .collect()
    };
    // Figure 16: every evaluator by ply on the test set.
    let mut fig16 = LineChart::new(
        "Amazons: 0/1 error of the predicted winner by ply (test set)",
        "plies played",
        "0/1 error",
    )
    .with_y_range(0.0, 1.0);
    for (name, split, m) in by_ply {
        let p = points(m);
        if split == "test" && !p.is_empty() {
            fig16 = fig16.with_series(name.clone(), p);
        }
    }
    if !fig16.series.is_empty() {
        fig16.write_png(out.join("error_by_ply.png"))?;
        fig16.write_svg(out.join("error_by_ply.svg"))?;
    }
    // Figure 17: the network with the highest test error, train vs test.
    let worst = rows
        .iter()
        .filter(|r| r.split == "test" && !THESIS_ERRORS.iter().any(|(n, _)| *n == r.evaluator))
        .max_by(|a, b| a.error.total_cmp(&b.error));
    if let Some(w) = worst {
        let mut fig17 = LineChart::new(
            format!(
                "Amazons: {} (highest test error), train vs test",
                w.evaluator
            ),
            "plies played",
            "0/1 error",
        )
        .with_y_range(0.0, 1.0);
        for (name, split, m) in by_ply {
            let p = points(m);
            if *name == w.evaluator && !p.is_empty() {
                fig17 = fig17.with_series(split.clone(), p);
            }
        }
        if !fig17.series.is_empty() {
            fig17.write_png(out.join("train_vs_test.png"))?;
            fig17.write_svg(out.join("train_vs_test.svg"))?;
        }
    }
    Ok(())
}
