//! Schaul & Schmidhuber (2008), "A scalable neural network architecture
//! for board games": MDRNNs trained on small Atari-Go and Gomoku boards by
//! evolution against NAIVE and by coevolution, then measured against
//! RANDOM and NAIVE on every board size, to see whether what was learned on
//! 5x5 and 7x7 carries to 19x19.
//!
//! Output directory: `train/<game>-<size>-<method>/` (each an ordinary
//! `plies evolve` / `plies coevolve` run, resumed where it stopped),
//! `cells/` (one JSON file per measured cell, kept, so a killed run
//! measures only what is missing), `transfer.csv`/`transfer.json` (win
//! rates with Wilson 95% intervals), `cost.csv` (training games and
//! seconds), and one chart per game and opponent, `transfer-<game>-<opponent>.png`:
//! win rate against board size, one line per training size and method.
//!
//! The run holds its folder ([`RunDir::claim`]) while it works; the
//! `train/` runs below claim their own folders, whose locks sit inside it.
//! `experiment.json` holds what the trained networks, and so every stored
//! cell, depend on without being named by: the seed, the hidden size and
//! the training budgets and step sizes (`Fingerprint`). A later start
//! with other values is refused, naming the first: a `train/` run would go
//! on to more generations while the cells measured on its earlier network
//! stayed. What names its own files may change: games, board sizes,
//! opponents and the ES strategy (each network has its `train/` folder and
//! each cell its file), and `eval_games` (a cell of another count is
//! measured again).

use crate::arena::{play_game_from, Wdl};
use crate::evolve::fitness::game_stream;
use crate::evolve::strategy::default_lambda;
use crate::evolve::{
    run_coevolve, run_evolve, CoevolveConfig, EvolveConfig, EvolveError, StrategyKind,
};
use crate::game::{Outcome, Side};
use crate::games::{GameKind, GameSupport};
use crate::model::{MdrnnConfig, ModelConfig};
use crate::report::{write_json, LineChart, Table};
use crate::search::evaluators::EvalContext;
use crate::search::game_player::{player_from_spec_in, PlayerContext};
use crate::util::run_dir::{check_fingerprint, Depth, JsonLayout, RunDir};
use crate::util::seeded_rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Clone, Debug, Serialize)]
pub struct MdrnnExperimentConfig {
    #[serde(serialize_with = "game_names")]
    pub games: Vec<GameKind>,
    pub train_sizes: Vec<usize>,
    pub eval_sizes: Vec<usize>,
    pub opponents: Vec<String>,
    pub hidden: usize,
    /// The evolution strategy against NAIVE (SNES by default: on 7x7
    /// Atari-Go it reached a fitness of 0.7 where (1+1)-ES, given the same
    /// games, stayed near 0.1).
    pub es_strategy: StrategyKind,
    /// ES generations against NAIVE (0: no ES networks).
    pub es_generations: u64,
    /// Fitness games per evaluation (the paper: 100).
    pub fitness_games: usize,
    pub sigma: f64,
    /// The bootstrap (the paper's motivation: train on small boards, then
    /// go on on a larger one): the ES network of the largest training
    /// board goes on evolving on this board, `bootstrap_generations`
    /// generations (0: none) from step size `bootstrap_sigma`.
    pub bootstrap_size: usize,
    pub bootstrap_generations: u64,
    pub bootstrap_sigma: f64,
    /// Coevolution generations (0: no coevolved networks).
    pub coevolve_generations: u64,
    pub population: usize,
    /// Games per measured cell.
    pub eval_games: usize,
    pub seed: u64,
    pub out: PathBuf,
}

impl MdrnnExperimentConfig {
    /// The default budget, about 50 minutes on two cores when measured
    /// (two hours was the aim): SNES for 1,000 generations of 18 x 100
    /// games (on 7x7 Atari-Go the large-board win rates stopped rising
    /// after about 900 generations), 200 bootstrap generations on 9x9,
    /// 200 generations of coevolution, then the cells.
    pub fn default_budget(out: PathBuf) -> Self {
        MdrnnExperimentConfig {
            games: vec![GameKind::AtariGo, GameKind::Gomoku],
            train_sizes: vec![5, 7],
            eval_sizes: vec![5, 7, 9, 11, 13, 15, 19],
            opponents: vec!["random".into(), "naive".into()],
            hidden: 10,
            es_strategy: StrategyKind::Snes,
            es_generations: 1000,
            fitness_games: 100,
            sigma: 0.3,
            bootstrap_size: 9,
            bootstrap_generations: 200,
            bootstrap_sigma: 0.15,
            coevolve_generations: 200,
            population: 10,
            eval_games: 200,
            seed: 1,
            out,
        }
    }
}

/// The settings stored in `experiment.json` (see the module docs).
#[derive(Serialize)]
struct Fingerprint {
    seed: u64,
    hidden: usize,
    fitness_games: usize,
    sigma: f64,
    es_generations: u64,
    bootstrap_generations: u64,
    bootstrap_sigma: f64,
    coevolve_generations: u64,
    population: usize,
}

impl Fingerprint {
    fn of(cfg: &MdrnnExperimentConfig) -> Self {
        Fingerprint {
            seed: cfg.seed,
            hidden: cfg.hidden,
            fitness_games: cfg.fitness_games,
            sigma: cfg.sigma,
            es_generations: cfg.es_generations,
            bootstrap_generations: cfg.bootstrap_generations,
            bootstrap_sigma: cfg.bootstrap_sigma,
            coevolve_generations: cfg.coevolve_generations,
            population: cfg.population,
        }
    }
}

/// Where the run's `Fingerprint` is stored.
pub const FINGERPRINT_FILE: &str = "experiment.json";

fn game_names<S: serde::Serializer>(games: &[GameKind], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(games.iter().map(|g| g.name()))
}

/// One measured cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub game: String,
    pub network: String,
    pub train_size: usize,
    pub method: String,
    pub opponent: String,
    pub size: usize,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub win_rate: f64,
    pub lo: f64,
    pub hi: f64,
}

/// A trained network and what it cost.
#[derive(Clone, Debug, Serialize)]
pub struct Trained {
    pub game: String,
    pub train_size: usize,
    pub method: String,
    pub dir: PathBuf,
    pub checkpoint: PathBuf,
    pub games: u64,
    pub seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct MdrnnExperimentReport {
    pub config: MdrnnExperimentConfig,
    pub trained: Vec<Trained>,
    pub cells: Vec<Cell>,
    pub seconds: f64,
}

/// Wilson's 95% interval of `wins` in `n`.
pub fn wilson(wins: u64, n: u64) -> (f64, f64) {
    crate::arena::wilson_interval(wins, n)
}

/// An ES run of the experiment: against naive, `plies evolve`'s defaults
/// for the population sizes.
fn es_config<G: GameSupport>(
    cfg: &MdrnnExperimentConfig,
    size: usize,
    out: PathBuf,
    init: Option<PathBuf>,
    sigma: f64,
    generations: u64,
) -> EvolveConfig {
    let model = ModelConfig::Mdrnn(MdrnnConfig::stones(size, cfg.hidden));
    let (mu, lambda) = match cfg.es_strategy {
        StrategyKind::OnePlusOne => (1, 1),
        StrategyKind::MuLambda => (5, 20),
        StrategyKind::Snes => (1, default_lambda(model.num_params())),
    };
    EvolveConfig {
        game: G::NAME.into(),
        size,
        also_sizes: Vec::new(),
        init,
        encoder: "stones-2".into(),
        model,
        strategy: cfg.es_strategy,
        sigma,
        mu,
        lambda,
        games: cfg.fitness_games,
        opponent: "naive".into(),
        temperature: 0.0,
        seed: cfg.seed,
        generations,
        out,
    }
}

/// Runs (or resumes) `es` and says what it made.
fn evolved<G: GameSupport>(
    es: &EvolveConfig,
    train_size: usize,
    method: String,
    progress: bool,
) -> Result<Trained, EvolveError> {
    let r = run_evolve::<G>(es, progress)?;
    let last = r.state.history.last();
    Ok(Trained {
        game: G::KIND.name().into(),
        train_size,
        method,
        checkpoint: r.final_dir,
        dir: es.out.clone(),
        games: last.map_or(0, |h| h.games),
        seconds: last.map_or(0.0, |h| h.seconds),
    })
}

/// The paper's bootstrap: the ES network of the largest training board
/// goes on evolving on `cfg.bootstrap_size`, from its weights.
fn bootstrap<G: GameSupport>(
    cfg: &MdrnnExperimentConfig,
    nets: &[Trained],
    progress: bool,
) -> Result<Option<Trained>, EvolveError> {
    let method = cfg.es_strategy.name();
    let Some(from) = nets
        .iter()
        .filter(|n| n.method == method)
        .max_by_key(|n| n.train_size)
    else {
        return Ok(None);
    };
    if cfg.bootstrap_generations == 0 || cfg.bootstrap_size <= from.train_size {
        return Ok(None);
    }
    let size = cfg.bootstrap_size;
    let label = format!("{method}-from-{}", from.train_size);
    let dir = cfg
        .out
        .join("train")
        .join(format!("{}-{size}-{label}", G::NAME));
    if progress {
        eprintln!(
            "training {} {size}x{size} by {method} from the {}x{} network",
            G::NAME,
            from.train_size,
            from.train_size
        );
    }
    let es = es_config::<G>(
        cfg,
        size,
        dir,
        Some(from.checkpoint.clone()),
        cfg.bootstrap_sigma,
        cfg.bootstrap_generations,
    );
    evolved::<G>(&es, size, label, progress).map(Some)
}

fn train<G: GameSupport>(
    cfg: &MdrnnExperimentConfig,
    size: usize,
    progress: bool,
) -> Result<Vec<Trained>, EvolveError> {
    let model = ModelConfig::Mdrnn(MdrnnConfig::stones(size, cfg.hidden));
    let mut out = Vec::new();
    if cfg.es_generations > 0 {
        let method = cfg.es_strategy.name();
        let dir = cfg
            .out
            .join("train")
            .join(format!("{}-{size}-{method}", G::NAME));
        if progress {
            eprintln!("training {} {size}x{size} by {method}", G::NAME);
        }
        let es = es_config::<G>(cfg, size, dir, None, cfg.sigma, cfg.es_generations);
        out.push(evolved::<G>(&es, size, method.into(), progress)?);
    }
    if cfg.coevolve_generations > 0 {
        let dir = cfg
            .out
            .join("train")
            .join(format!("{}-{size}-coevolve", G::NAME));
        let co = CoevolveConfig {
            game: G::NAME.into(),
            size,
            encoder: "stones-2".into(),
            model,
            population: cfg.population,
            mu: (cfg.population / 4).max(1),
            sample: 4,
            hall: 2,
            games: 2,
            sigma: cfg.sigma,
            temperature: 0.0,
            monitor: "naive".into(),
            monitor_games: 20,
            seed: cfg.seed,
            generations: cfg.coevolve_generations,
            out: dir.clone(),
        };
        if progress {
            eprintln!("training {} {size}x{size} by coevolution", G::NAME);
        }
        let r = run_coevolve::<G>(&co, progress)?;
        let last = r.state.history.last();
        out.push(Trained {
            game: G::KIND.name().into(),
            train_size: size,
            method: "coevolve".into(),
            checkpoint: r.best_dir,
            dir,
            games: last.map_or(0, |h| h.games),
            seconds: last.map_or(0.0, |h| h.seconds),
        });
    }
    Ok(out)
}

/// Measures `net` against `opponent` on `size`: `games` games, starts
/// alternating, each seeded from the cell and its index.
fn measure<G: GameSupport>(
    cfg: &MdrnnExperimentConfig,
    net: &Trained,
    opponent: &str,
    size: usize,
    cell_key: u64,
) -> Result<Cell, EvolveError> {
    let ctx = PlayerContext {
        size,
        eval: EvalContext::default(),
    };
    let spec = format!("policy:ckpt={}", net.checkpoint.display());
    let me = player_from_spec_in::<G>(&spec, &ctx)?;
    let them = player_from_spec_in::<G>(opponent, &ctx)?;
    let outcomes = (0..cfg.eval_games)
        .into_par_iter()
        .map(|i| {
            let mut rng = seeded_rng(cfg.seed, game_stream(&[cell_key, i as u64]));
            let start =
                G::with_size(size).map_err(|e| EvolveError::option("sizes", e.to_string()))?;
            let first = i % 2 == 0;
            let (a, b) = if first {
                (me.as_ref(), them.as_ref())
            } else {
                (them.as_ref(), me.as_ref())
            };
            let g = play_game_from(start, a, b, i, &mut rng, None)?;
            let side = if first { Side::First } else { Side::Second };
            Ok((g.outcome.unwrap_or(Outcome::Draw), side))
        })
        .collect::<Result<Vec<_>, EvolveError>>()?;
    let mut wdl = Wdl::default();
    for (o, side) in outcomes {
        wdl.add(o, side);
    }
    let (lo, hi) = wilson(wdl.wins, wdl.games());
    Ok(Cell {
        game: net.game.clone(),
        network: format!("{}-{}", net.train_size, net.method),
        train_size: net.train_size,
        method: net.method.clone(),
        opponent: opponent.into(),
        size,
        games: wdl.games(),
        wins: wdl.wins,
        draws: wdl.draws,
        losses: wdl.losses,
        win_rate: wdl.wins as f64 / wdl.games().max(1) as f64,
        lo,
        hi,
    })
}

fn cell_path(out: &Path, net: &Trained, opponent: &str, size: usize) -> PathBuf {
    out.join("cells").join(format!(
        "{}-{}-{}-vs-{opponent}-{size}.json",
        net.game, net.train_size, net.method
    ))
}

fn run_game<G: GameSupport>(
    cfg: &MdrnnExperimentConfig,
    progress: bool,
    trained: &mut Vec<Trained>,
    cells: &mut Vec<Cell>,
) -> Result<(), EvolveError> {
    let mut nets = Vec::new();
    for &size in &cfg.train_sizes {
        nets.extend(train::<G>(cfg, size, progress)?);
    }
    if let Some(net) = bootstrap::<G>(cfg, &nets, progress)? {
        nets.push(net);
    }
    for (n, net) in nets.iter().enumerate() {
        for (o, opponent) in cfg.opponents.iter().enumerate() {
            for &size in &cfg.eval_sizes {
                let path = cell_path(&cfg.out, net, opponent, size);
                let saved = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|t| serde_json::from_str::<Cell>(&t).ok())
                    .filter(|c| c.games == cfg.eval_games as u64);
                let cell = match saved {
                    Some(c) => c,
                    None => {
                        let started = Instant::now();
                        let key = game_stream(&[n as u64, o as u64, size as u64]);
                        let c = measure::<G>(cfg, net, opponent, size, key)?;
                        write_json(&path, &c)?;
                        if progress {
                            eprintln!(
                                "{} {}x{} {} vs {opponent} on {size}x{size}: {:.3} [{:.3}, {:.3}] ({:.0} s)",
                                net.game,
                                net.train_size,
                                net.train_size,
                                net.method,
                                c.win_rate,
                                c.lo,
                                c.hi,
                                started.elapsed().as_secs_f64()
                            );
                        }
                        c
                    }
                };
                cells.push(cell);
            }
        }
    }
    trained.extend(nets);
    Ok(())
}

/// Runs (or resumes) the experiment.
pub fn run(
    cfg: &MdrnnExperimentConfig,
    progress: bool,
) -> Result<MdrnnExperimentReport, EvolveError> {
    let started = Instant::now();
    let _run_dir = RunDir::claim(&cfg.out)?;
    std::fs::create_dir_all(&cfg.out).map_err(|e| EvolveError::State {
        path: cfg.out.clone(),
        why: e.to_string(),
    })?;
    check_fingerprint(
        &cfg.out.join(FINGERPRINT_FILE),
        &Fingerprint::of(cfg),
        Depth::TopLevel,
        JsonLayout::PrettyLine,
    )?;
    let mut trained = Vec::new();
    let mut cells = Vec::new();
    for &game in &cfg.games {
        with_game!(game, G => run_game::<G>(cfg, progress, &mut trained, &mut cells))?;
    }
    let report = MdrnnExperimentReport {
        config: cfg.clone(),
        trained,
        cells,
        seconds: started.elapsed().as_secs_f64(),
    };
    write_outputs(&report)?;
    Ok(report)
}

pub fn transfer_table(cells: &[Cell]) -> Table {
    let mut t = Table::with_headers([
        "game",
        "trained",
        "opponent",
        "board",
        "games",
        "wins",
        "draws",
        "losses",
        "win rate",
        "95% interval",
    ]);
    for c in cells {
        t.push_row([
            c.game.clone(),
            c.network.clone(),
            c.opponent.clone(),
            format!("{0}x{0}", c.size),
            c.games.to_string(),
            c.wins.to_string(),
            c.draws.to_string(),
            c.losses.to_string(),
            format!("{:.3}", c.win_rate),
            format!("[{:.3}, {:.3}]", c.lo, c.hi),
        ]);
    }
    t
}

/// The boards from which transfer is judged: 9x9 and up, every size
/// larger than the training boards.
pub const LARGE_FROM: usize = 9;

/// How one network did on the large boards against one opponent.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TransferSummary {
    pub game: String,
    pub network: String,
    pub opponent: String,
    /// The win rate on the board it was trained on, when measured.
    pub on_training_board: Option<f64>,
    /// Lowest and highest win rate on boards of [`LARGE_FROM`] and up.
    pub large_min: f64,
    pub large_max: f64,
    /// Whether the 95% intervals of every large board share a point: the
    /// win rate is the same on all of them within the intervals.
    pub large_flat: bool,
}

/// One [`TransferSummary`] per network and opponent measured on at least
/// one large board.
pub fn transfer_summaries(cells: &[Cell]) -> Vec<TransferSummary> {
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for c in cells {
        let k = (c.game.as_str(), c.network.as_str(), c.opponent.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .filter_map(|(game, network, opponent)| {
            let of = |c: &&Cell| c.game == game && c.network == network && c.opponent == opponent;
            let large: Vec<&Cell> = cells
                .iter()
                .filter(of)
                .filter(|c| c.size >= LARGE_FROM)
                .collect();
            if large.is_empty() {
                return None;
            }
            let rates = large.iter().map(|c| c.win_rate);
            Some(TransferSummary {
                game: game.into(),
                network: network.into(),
                opponent: opponent.into(),
                on_training_board: cells
                    .iter()
                    .filter(of)
                    .find(|c| c.size == c.train_size)
                    .map(|c| c.win_rate),
                large_min: rates.clone().fold(f64::INFINITY, f64::min),
                large_max: rates.fold(f64::NEG_INFINITY, f64::max),
                large_flat: large.iter().map(|c| c.lo).fold(0.0, f64::max)
                    <= large.iter().map(|c| c.hi).fold(1.0, f64::min),
            })
        })
        .collect()
}

pub fn summary_table(summaries: &[TransferSummary]) -> Table {
    let mut t = Table::with_headers([
        "game",
        "trained",
        "opponent",
        "on its board",
        "min 9x9+",
        "max 9x9+",
        "same within intervals",
    ]);
    for s in summaries {
        t.push_row([
            s.game.clone(),
            s.network.clone(),
            s.opponent.clone(),
            s.on_training_board
                .map_or("-".into(), |r| format!("{r:.3}")),
            format!("{:.3}", s.large_min),
            format!("{:.3}", s.large_max),
            if s.large_flat { "yes" } else { "no" }.into(),
        ]);
    }
    t
}

pub fn cost_table(trained: &[Trained]) -> Table {
    let mut t = Table::with_headers(["game", "board", "method", "games", "seconds", "checkpoint"]);
    for n in trained {
        t.push_row([
            n.game.clone(),
            format!("{0}x{0}", n.train_size),
            n.method.clone(),
            n.games.to_string(),
            format!("{:.0}", n.seconds),
            n.checkpoint.display().to_string(),
        ]);
    }
    t
}

fn write_outputs(report: &MdrnnExperimentReport) -> Result<(), EvolveError> {
    let out = &report.config.out;
    transfer_table(&report.cells).write_csv(out.join("transfer.csv"))?;
    summary_table(&transfer_summaries(&report.cells)).write_csv(out.join("summary.csv"))?;
    cost_table(&report.trained).write_csv(out.join("cost.csv"))?;
    write_json(out.join("transfer.json"), report)?;
    for &game in &report.config.games {
        for opponent in &report.config.opponents {
            let mut chart = LineChart::new(
                format!("MDRNN on {game}: win rate against {opponent} by board size"),
                "board size",
                "win rate",
            )
            .with_y_range(0.0, 1.0);
            for net in report.trained.iter().filter(|n| n.game == game.name()) {
                let points: Vec<(f64, f64)> = report
                    .cells
                    .iter()
                    .filter(|c| {
                        c.game == net.game
                            && c.train_size == net.train_size
                            && c.method == net.method
                            && &c.opponent == opponent
                    })
                    .map(|c| (c.size as f64, c.win_rate))
                    .collect();
                chart = chart.with_series(
                    format!("trained on {0}x{0} ({1})", net.train_size, net.method),
                    points,
                );
            }
            if !chart.series.is_empty() {
                chart.write_png(out.join(format!("transfer-{game}-{opponent}.png")))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(network: &str, size: usize, wins: u64) -> Cell {
        let (lo, hi) = wilson(wins, 100);
        Cell {
            game: "atari-go".into(),
            network: network.into(),
            train_size: 7,
            method: "snes".into(),
            opponent: "naive".into(),
            size,
            games: 100,
            wins,
            draws: 0,
            losses: 100 - wins,
            win_rate: wins as f64 / 100.0,
            lo,
            hi,
        }
    }

    #[test]
    fn transfer_is_flat_when_the_large_boards_intervals_meet() {
        // 90 and 80 in 100: [0.83, 0.94] and [0.71, 0.87] meet; 90 and 70 do not.
        let flat = [cell("a", 7, 99), cell("a", 9, 90), cell("a", 19, 80)];
        let falls = [cell("b", 7, 99), cell("b", 9, 90), cell("b", 19, 70)];
        let all: Vec<Cell> = flat.iter().chain(&falls).cloned().collect();
        let s = transfer_summaries(&all);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].network, "a");
        assert!(s[0].large_flat && !s[1].large_flat);
        assert_eq!(s[0].on_training_board, Some(0.99));
        assert_eq!((s[0].large_min, s[0].large_max), (0.8, 0.9));
        // No large board measured: no summary.
        assert!(transfer_summaries(&[cell("c", 7, 50)]).is_empty());
        let t = summary_table(&s).to_string();
        assert!(t.contains("yes") && t.contains("no"), "{t}");
    }

    fn tiny(out: PathBuf) -> MdrnnExperimentConfig {
        MdrnnExperimentConfig {
            games: vec![GameKind::AtariGo],
            train_sizes: vec![5],
            eval_sizes: vec![5],
            opponents: vec!["random".into()],
            es_generations: 1,
            fitness_games: 2,
            bootstrap_generations: 0,
            coevolve_generations: 0,
            eval_games: 2,
            ..MdrnnExperimentConfig::default_budget(out)
        }
    }

    #[test]
    fn a_folder_another_writer_holds_is_refused_before_anything_runs() {
        let (_d, out) = crate::util::scratch("mdrnn");
        let held = RunDir::claim(&out).unwrap();
        let e = run(&tiny(out.clone()), false).unwrap_err();
        assert!(
            matches!(
                e,
                EvolveError::RunDir(crate::util::run_dir::RunDirError::Locked(_))
            ),
            "{e}"
        );
        crate::util::run_dir::assert_refused_as_held(&e, &out);
        assert!(!out.join(FINGERPRINT_FILE).exists());
        drop(held);
        run(&tiny(out.clone()), false).unwrap();
    }

    #[test]
    fn a_rerun_with_another_budget_is_refused_naming_it() {
        let (_d, out) = crate::util::scratch("mdrnn");
        let cfg = tiny(out.clone());
        run(&cfg, false).unwrap();
        let more = MdrnnExperimentConfig {
            es_generations: 2,
            ..cfg.clone()
        };
        let e = run(&more, false).unwrap_err().to_string();
        assert!(
            e.contains("`es_generations`") && e.contains("had 1, now 2"),
            "{e}"
        );
        // What names its own files may change: the ES strategy, the
        // boards and the games per cell.
        let other = MdrnnExperimentConfig {
            es_strategy: StrategyKind::OnePlusOne,
            eval_sizes: vec![5, 7],
            eval_games: 4,
            ..cfg
        };
        let r = run(&other, false).unwrap();
        assert_eq!(r.cells.len(), 2);
        assert!(out.join("train/atari_go-5-one-plus-one/final").is_dir());
    }

    #[test]
    fn wilson_intervals() {
        let (lo, hi) = wilson(100, 200);
        assert!((lo - 0.4314).abs() < 1e-3 && (hi - 0.5686).abs() < 1e-3);
        let (lo, hi) = wilson(200, 200);
        assert!(hi == 1.0 && (lo - 0.9812).abs() < 1e-3, "{lo}");
    }
}
