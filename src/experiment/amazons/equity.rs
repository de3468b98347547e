//! Tables 4 and 5: every evaluator with no lookahead, alpha-beta and MCTS
//! against the simple and the good player. The cells are planned first
//! ([`plan_cells`]: the cheap ones first, each with its seed and the key of
//! what it plays), then played where `OUT/matches/CELL.json` does not hold
//! a result of the same key.

use super::config::{player, AmazonsExperimentConfig};
use super::error::Result;
use super::networks::{NetResult, TrainedNet};
use super::thesis::{is_thesis_net, thesis_equity, SEARCHES, THESIS_ERRORS};
use crate::arena::{play_match_from, StartConfig, Wdl};
use crate::experiment::amazons_value::ValueNet;
use crate::experiment::match_cache::{file_key, read_cached_match, write_cached_match};
use crate::game::{hash_of, Amazons};
use crate::util::derive_seed;
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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

/// An evaluator of tables 4 and 5 and where it plays.
pub(super) struct Contender {
    pub(super) name: String,
    /// Its `eval=` name.
    pub(super) eval: String,
    /// The file whose bytes key its cached cells.
    pub(super) weights: Option<PathBuf>,
    /// The columns it plays.
    pub(super) searches: Vec<usize>,
    pub(super) plays_good: bool,
}

/// The evaluators of tables 4 and 5: the hand ones, the TD networks (each
/// configuration's result and its best run's checkpoint), then the value
/// networks.
pub(super) fn contenders(
    cfg: &AmazonsExperimentConfig,
    nets: &[(&NetResult, &Path)],
    value_nets: &[ValueNet],
) -> Vec<Contender> {
    let all: Vec<usize> = (0..SEARCHES.len()).collect();
    // Table 4 has one row for the thesis' networks, which lost every game
    // to the good player: of them only the one of lowest test error plays
    // it (all play the simple player, as in table 5).
    let best_thesis_net = nets
        .iter()
        .filter(|(n, _)| is_thesis_net(&n.name))
        .min_by(|(a, _), (b, _)| a.best_error().total_cmp(&b.best_error()))
        .map(|(n, _)| n.name.clone());
    let mut contenders: Vec<Contender> = THESIS_ERRORS
        .iter()
        .map(|(n, _)| Contender {
            name: n.to_string(),
            eval: n.to_string(),
            weights: None,
            searches: all.clone(),
            plays_good: true,
        })
        .collect();
    for (n, best_dir) in nets {
        let name = &n.name;
        contenders.push(Contender {
            name: name.clone(),
            eval: format!("ckpt:{}", best_dir.display()),
            weights: Some(best_dir.join("model.safetensors")),
            searches: all.clone(),
            plays_good: !is_thesis_net(name) || best_thesis_net.as_ref() == Some(name),
        });
    }
    for v in value_nets {
        contenders.push(Contender {
            name: v.name.clone(),
            eval: format!("ckpt:{}", v.dir.display()),
            weights: Some(v.dir.join("model.safetensors")),
            searches: if v.native {
                all.clone()
            } else {
                cfg.value_net_searches.clone()
            },
            plays_good: true,
        });
    }
    contenders
}

/// One cell of tables 4 and 5, ready to play or to read back.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Cell {
    pub(super) evaluator: String,
    /// Its column (index into [`SEARCHES`]).
    pub(super) search: usize,
    /// `simple` or `good`.
    pub(super) opponent: &'static str,
    pub(super) opponent_spec: String,
    /// The evaluator's player.
    pub(super) spec: String,
    /// The name of its result file in `OUT/matches/`.
    pub(super) name: String,
    pub(super) seed: u64,
    /// What was played; a cached result of another key is played again.
    pub(super) key: String,
}

/// Every cell played, the cheap ones first (no lookahead, then alpha-beta,
/// then MCTS; against simple before good; evaluators in their order).
pub(super) fn plan_cells(cfg: &AmazonsExperimentConfig, contenders: &[Contender]) -> Vec<Cell> {
    let searches = [
        "greedy".to_string(),
        cfg.alphabeta.clone(),
        cfg.mcts.clone(),
    ];
    let opponents = [("simple", cfg.simple.as_str()), ("good", cfg.good.as_str())];
    let mut cells = Vec::new();
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
            } in contenders.iter().filter(plays)
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
                cells.push(Cell {
                    evaluator: name.clone(),
                    search: s,
                    opponent: opp_name,
                    opponent_spec: opp_spec.to_string(),
                    spec,
                    name: cell,
                    seed,
                    key,
                });
            }
        }
    }
    cells
}

/// A cell's row of the tables from its games.
pub(super) fn equity_row(cell: &Cell, wdl: &Wdl) -> EquityRow {
    let (lo, hi) = equity_interval(wdl);
    EquityRow {
        evaluator: cell.evaluator.clone(),
        search: SEARCHES[cell.search].to_string(),
        opponent: cell.opponent.to_string(),
        spec: cell.spec.clone(),
        games: wdl.games(),
        wins: wdl.wins,
        draws: wdl.draws,
        losses: wdl.losses,
        equity: wdl.equity(),
        equity_lo: lo,
        equity_hi: hi,
        thesis: thesis_equity(&cell.evaluator, cell.search, cell.opponent),
    }
}

/// Tables 4 and 5: every planned cell, read back from `OUT/matches/` or
/// played (and cached there).
pub(super) fn play_equities(
    cfg: &AmazonsExperimentConfig,
    nets: &[TrainedNet],
    value_nets: &[ValueNet],
    progress: &dyn Fn(u64, &str) -> ProgressBar,
    say: &dyn Fn(&str),
) -> Result<Vec<EquityRow>> {
    let results: Vec<(&NetResult, &Path)> = nets
        .iter()
        .map(|n| (&n.result, n.best_dir.as_path()))
        .collect();
    let contenders = contenders(cfg, &results, value_nets);
    let start = StartConfig {
        size: cfg.size,
        ..StartConfig::standard::<Amazons>()
    }
    .with_random_opening(cfg.equity_random_opening);
    let starter = start.starter::<Amazons>();
    let mut rows = Vec::new();
    for cell in plan_cells(cfg, &contenders) {
        let path = cfg.out.join("matches").join(format!("{}.json", cell.name));
        let wdl = match read_cached_match(&path, &cell.key) {
            Some(wdl) => wdl,
            None => {
                say(&format!(
                    "equity: {} vs {} ({}), {} games",
                    cell.spec, cell.opponent, cell.opponent_spec, cfg.equity_games
                ));
                let a = player(cfg, &cell.spec)?;
                let b = player(cfg, &cell.opponent_spec)?;
                let pb = progress(cfg.equity_games as u64, "games");
                let r = play_match_from(
                    a.as_ref(),
                    b.as_ref(),
                    &starter,
                    cfg.equity_games,
                    cell.seed,
                    None,
                    Some(&pb),
                )?;
                pb.finish_and_clear();
                let t = r.total;
                write_cached_match(&path, &cell.key, &t)?;
                t
            }
        };
        rows.push(equity_row(&cell, &wdl));
    }
    Ok(rows)
}
