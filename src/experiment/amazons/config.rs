//! The study's settings: [`AmazonsExperimentConfig`] with its default and
//! quick budgets, the check that refuses unusable settings before anything
//! is written, and the players and encoders built from them.

use super::error::{AmazonsExperimentError, Result};
use super::thesis::SEARCHES;
use crate::encode::Encoder;
use crate::experiment::amazons_value::{
    split_model, value_net_model, ValueNetConfig, VALUE_NET_ENCODER,
};
use crate::game::Amazons;
use crate::games::GameSupport;
use crate::search::evaluators::EvalContext;
use crate::search::game_player::{player_from_spec_in, PlayerContext};
use crate::search::scorer::Scorer;
use crate::search::Player;
use crate::train::TdNetConfig;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

/// Everything the study does, from the database to the equity matches.
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

/// A player of the experiment's board size (its `ckpt:` evaluators are
/// checked against it).
pub(super) fn player(
    cfg: &AmazonsExperimentConfig,
    spec: &str,
) -> Result<Arc<dyn Player<Amazons>>> {
    let ctx = PlayerContext {
        size: cfg.size,
        eval: EvalContext::default(),
    };
    Ok(player_from_spec_in::<Amazons>(spec, &ctx)?)
}

/// The encoder `name` at the experiment's board size.
pub(super) fn encoder_of(
    cfg: &AmazonsExperimentConfig,
    name: &str,
) -> Result<Arc<dyn Encoder<Amazons>>> {
    Amazons::encoder(name, cfg.size)
        .map(Arc::from)
        .map_err(|e| AmazonsExperimentError::Config {
            field: "encoders",
            why: e.to_string(),
        })
}

/// Refuses settings the study cannot use, naming the field, before any
/// stage writes a file.
pub(super) fn check(cfg: &AmazonsExperimentConfig) -> Result<()> {
    let bad = |field, why: &str| {
        Err(AmazonsExperimentError::Config {
            field,
            why: why.into(),
        })
    };
    if let Err(e) = <Amazons as crate::game::Game>::with_size(cfg.size) {
        return bad("size", &e.to_string());
    }
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
