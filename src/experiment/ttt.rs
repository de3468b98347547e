//! The Tic-tac-toe study of Patist & Wiering (2004) as replicated by
//! Fugers (2017, section 4): an Elliott MLP learns by TD(lambda), either
//! on-line against RANDOM (Experiment I) or from a database of games that a
//! learning network played against EXPERT (Experiment II); its equity
//! against EXPERT is measured as it learns, averaged over simulations.
//!
//! The run holds its folder ([`RunDir::claim`]) while it works. It stores
//! no fingerprint of its settings: no stored result is read back, as every
//! run computes every output again from the seed and rewrites it, so no
//! setting can leave a stale one in use, and refusing other settings would
//! only stop reruns into the default folder. Each Experiment II database is
//! rebuilt whole, beside its folder, and swapped in, so a kill leaves the
//! last complete one at `sim-NN/db`.

use crate::arena::{play_match, MatchResult, Wdl};
use crate::checkpoint::{self, CheckpointConfig, TrainingInfo};
use crate::dataset::{Dataset, SplitRule, MANIFEST_FILE};
use crate::encode::{tictactoe_encoder, Encoder};
use crate::game::TicTacToe;
use crate::infer::mlp_evaluator;
use crate::model::{Activation, MlpConfig, ModelConfig, NativeMlp, WeightInit};
use crate::report::{write_json, LineChart, Series, Table};
use crate::search::{ExpertPlayer, GreedyPlayer, RandomPlayer};
use crate::selfplay::{generate_database, DatabaseConfig, LearningNetwork, SideSpec};
use crate::train::{rows_to_td_game, TdConfig, TdGame, TdLearner};
use crate::util::run_dir::RunDir;
use crate::util::{derive_seed, seeded_rng};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use rand::seq::SliceRandom;
use rayon::prelude::*;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

type AnyError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Clone, Debug, Serialize)]
pub struct TttExperimentConfig {
    /// 1: on-line against RANDOM; 2: from a database.
    pub exp: u8,
    pub hidden: Vec<usize>,
    pub sims: usize,
    pub seed: u64,
    /// Training games (I: 40,000) or games drawn from the database (II: 160,000).
    pub examples: usize,
    /// Equity is measured after every this many examples.
    pub eval_every: usize,
    /// Games against EXPERT per equity measurement.
    pub eval_games: usize,
    /// Games in each simulation's database (II: 40,000).
    pub db_games: usize,
    /// Hidden units of the network that plays the database games.
    pub db_hidden: usize,
    pub beta: f64,
    pub init: f64,
    pub td: TdConfig,
    /// Let NETWORK score finished positions by their result (false = the
    /// published player, which trusts its evaluator everywhere).
    pub exact_terminal: bool,
    pub encoder: String,
    pub out: PathBuf,
}

impl TttExperimentConfig {
    /// The published settings of Experiment I or II.
    pub fn published(exp: u8, out: PathBuf) -> Self {
        TttExperimentConfig {
            exp,
            hidden: vec![40, 60, 80],
            sims: 10,
            seed: 1,
            examples: if exp == 1 { 40_000 } else { 160_000 },
            eval_every: if exp == 1 { 2_000 } else { 10_000 },
            eval_games: 1_000,
            db_games: 40_000,
            db_hidden: 80,
            beta: 5.0,
            init: 0.2,
            td: TdConfig::default(),
            exact_terminal: false,
            encoder: "tictactoe-9".into(),
            out,
        }
    }

    fn mlp(&self, hidden: usize, inputs: usize) -> MlpConfig {
        MlpConfig {
            inputs,
            hidden: vec![hidden],
            activation: Activation::Elliott { beta: self.beta },
            init: WeightInit::Uniform { a: self.init },
        }
    }
}

/// One equity measurement of one simulation.
#[derive(Clone, Debug, Serialize)]
pub struct CurvePoint {
    pub hidden: usize,
    pub sim: usize,
    pub examples: usize,
    pub equity: f64,
    /// Equity in the games where NETWORK moved first / second.
    pub equity_first: f64,
    pub equity_second: f64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

/// The mean over simulations at one point.
#[derive(Clone, Debug, Serialize)]
pub struct MeanPoint {
    pub hidden: usize,
    pub examples: usize,
    pub mean_equity: f64,
    pub sd_equity: f64,
    pub min_equity: f64,
    pub max_equity: f64,
    pub mean_equity_first: f64,
    pub mean_equity_second: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct HiddenSummary {
    pub hidden: usize,
    /// The maximum over measurement points of the equity averaged over
    /// simulations (what the published figures report).
    pub best_mean_equity: f64,
    pub best_at_examples: usize,
    /// The mean over simulations of each simulation's own best equity.
    pub mean_of_sim_best: f64,
    pub final_mean_equity: f64,
    /// At the best point: equity when NETWORK moved first / second.
    pub best_equity_first: f64,
    pub best_equity_second: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct TttExperimentReport {
    pub config: TttExperimentConfig,
    pub published_best: Vec<(String, f64)>,
    pub summary: Vec<HiddenSummary>,
    pub curve: Vec<MeanPoint>,
    pub runs: Vec<CurvePoint>,
    pub database_results: Vec<Wdl>,
    pub seconds: f64,
}

fn bar(mp: &MultiProgress, len: u64, msg: &str) -> ProgressBar {
    let pb = mp.add(ProgressBar::new(len));
    pb.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(msg.to_string());
    pb
}

fn equity_vs_expert(
    net: &NativeMlp,
    encoder: &Arc<dyn Encoder<TicTacToe>>,
    cfg: &TttExperimentConfig,
    seed: u64,
) -> Result<MatchResult, AnyError> {
    let eval = mlp_evaluator(encoder.clone(), net);
    let player = GreedyPlayer::new(Arc::new(eval), cfg.exact_terminal);
    Ok(play_match::<TicTacToe>(
        &player,
        &ExpertPlayer,
        cfg.eval_games,
        seed,
        None,
    )?)
}

/// Runs the experiment, writing CSV, JSON and plots to `cfg.out`.
pub fn run(
    cfg: &TttExperimentConfig,
    show_progress: bool,
) -> Result<TttExperimentReport, AnyError> {
    if cfg.exp != 1 && cfg.exp != 2 {
        return Err(format!("--exp must be 1 or 2, got {}", cfg.exp).into());
    }
    if cfg.hidden.is_empty() || cfg.sims == 0 || cfg.eval_every == 0 {
        return Err("need at least one hidden size, one simulation and eval_every > 0".into());
    }
    let start = std::time::Instant::now();
    let _run_dir = RunDir::claim(&cfg.out)?;
    std::fs::create_dir_all(&cfg.out)?;
    let encoder: Arc<dyn Encoder<TicTacToe>> = Arc::from(tictactoe_encoder(&cfg.encoder)?);
    let inputs = encoder.plane_len() + encoder.spec().globals;
    let mp = if show_progress {
        MultiProgress::new()
    } else {
        MultiProgress::with_draw_target(indicatif::ProgressDrawTarget::hidden())
    };

    // Experiment II: one database per simulation, shared by every hidden size.
    let mut databases: Vec<Arc<Vec<TdGame>>> = Vec::new();
    let mut database_results = Vec::new();
    if cfg.exp == 2 {
        let pb = bar(&mp, (cfg.sims * cfg.db_games) as u64, "databases");
        let made: Vec<Result<(Vec<TdGame>, Wdl), AnyError>> = (0..cfg.sims)
            .into_par_iter()
            .map(|sim| {
                let seed = derive_seed(cfg.seed, 1000 + sim as u64);
                let dir = cfg.out.join(format!("sim-{sim:02}")).join("db");
                let db = RunDir::claim(&dir)?;
                db.recover_interrupted_swap(|p| p.join(MANIFEST_FILE).is_file())?;
                db.discard_staged()?;
                let staged = db.staging_path()?;
                let net = NativeMlp::new(&cfg.mlp(cfg.db_hidden, inputs), &mut seeded_rng(seed, 0))?;
                let learner = LearningNetwork::new(net, encoder.clone(), cfg.td, cfg.exact_terminal);
                let db_cfg = DatabaseConfig {
                    games: cfg.db_games,
                    seed,
                    split: SplitRule::new(0.0, 0.0)?,
                    shard_rows: 100_000,
                };
                let prov = serde_json::json!({"made_by": "plies experiment ttt --exp 2", "simulation": sim});
                let (_, wdl) = generate_database(
                    &staged,
                    SideSpec::Learning(Box::new(learner)),
                    SideSpec::Fixed(Arc::new(ExpertPlayer)),
                    encoder.clone(),
                    &db_cfg,
                    prov,
                    Some(&pb),
                )?;
                db.publish(&staged)?;
                // The trainer reads the database back from disk, as any user would.
                let ds = Dataset::open(&dir)?;
                let games = ds
                    .games(None)?
                    .iter()
                    .map(|rows| rows_to_td_game(rows, encoder.as_ref()))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok((games, wdl))
            })
            .collect();
        pb.finish();
        for m in made {
            let (games, wdl) = m?;
            databases.push(Arc::new(games));
            database_results.push(wdl);
        }
    }

    let points = cfg.examples / cfg.eval_every;
    let jobs: Vec<(usize, usize)> = cfg
        .hidden
        .iter()
        .flat_map(|&h| (0..cfg.sims).map(move |s| (h, s)))
        .collect();
    let pb = bar(&mp, (jobs.len() * (points + 1)) as u64, "training");
    let results: Vec<Result<(Vec<CurvePoint>, NativeMlp), AnyError>> = jobs
        .par_iter()
        .map(|&(hidden, sim)| {
            let seed = derive_seed(cfg.seed, (hidden * 1000 + sim) as u64);
            let mut rng = seeded_rng(seed, 0);
            let net = NativeMlp::new(&cfg.mlp(hidden, inputs), &mut rng)?;
            let mut curve = Vec::new();
            let mut measure = |net: &NativeMlp, examples: usize| -> Result<(), AnyError> {
                let r =
                    equity_vs_expert(net, &encoder, cfg, derive_seed(seed, 7 + examples as u64))?;
                let wdl = r.total;
                curve.push(CurvePoint {
                    hidden,
                    sim,
                    examples,
                    equity: wdl.equity(),
                    equity_first: r.a_first.equity(),
                    equity_second: r.a_second.equity(),
                    wins: wdl.wins,
                    draws: wdl.draws,
                    losses: wdl.losses,
                });
                pb.inc(1);
                Ok(())
            };
            measure(&net, 0)?;
            let final_net = if cfg.exp == 1 {
                let mut learner =
                    LearningNetwork::new(net, encoder.clone(), cfg.td, cfg.exact_terminal);
                for g in 0..cfg.examples {
                    learner.play_and_learn(&RandomPlayer, g % 2 == 0, &mut rng)?;
                    if (g + 1) % cfg.eval_every == 0 {
                        measure(&learner.net, g + 1)?;
                    }
                }
                learner.net
            } else {
                let mut net = net;
                let db = &databases[sim];
                let mut td = TdLearner::new(cfg.td, &net);
                let mut order: Vec<usize> = (0..db.len()).collect();
                for k in 0..cfg.examples {
                    if k % db.len() == 0 {
                        order.shuffle(&mut rng);
                    }
                    td.learn_game(&mut net, &db[order[k % db.len()]]);
                    if (k + 1) % cfg.eval_every == 0 {
                        measure(&net, k + 1)?;
                    }
                }
                net
            };
            Ok((curve, final_net))
        })
        .collect();
    pb.finish();

    let mut runs = Vec::new();
    for (r, &(hidden, sim)) in results.into_iter().zip(&jobs) {
        let (curve, net) = r?;
        runs.extend(curve);
        if sim == 0 {
            save_network(cfg, &net, hidden, encoder.as_ref())?;
        }
    }
    let curve = mean_curve(cfg, &runs);
    let summary = summarise(cfg, &curve, &runs);
    let published_best = if cfg.exp == 1 {
        vec![
            ("Fugers 2017".to_string(), 0.15),
            ("Patist & Wiering 2004".to_string(), 0.14),
        ]
    } else {
        vec![
            ("Fugers 2017".to_string(), 0.30),
            ("Patist & Wiering 2004".to_string(), 0.50),
        ]
    };
    let report = TttExperimentReport {
        config: cfg.clone(),
        published_best,
        summary,
        curve,
        runs,
        database_results,
        seconds: start.elapsed().as_secs_f64(),
    };
    write_outputs(&report)?;
    Ok(report)
}

fn save_network(
    cfg: &TttExperimentConfig,
    net: &NativeMlp,
    hidden: usize,
    encoder: &dyn Encoder<TicTacToe>,
) -> Result<(), AnyError> {
    let dir = cfg
        .out
        .join("checkpoints")
        .join(format!("mlp{hidden}-sim00"));
    let model = ModelConfig::Mlp(cfg.mlp(hidden, net.config().inputs).into());
    let training = TrainingInfo {
        method: if cfg.exp == 1 {
            "td_lambda_online_vs_random"
        } else {
            "td_lambda_from_database"
        }
        .into(),
        seed: Some(cfg.seed),
        dataset_manifest_sha256: None,
        dataset: (cfg.exp == 2).then(|| "sim-00/db".to_string()),
        examples: cfg.examples as u64,
        hyperparameters: serde_json::json!({"lambda": cfg.td.lambda, "lr": cfg.td.lr, "beta": cfg.beta, "init": cfg.init}),
        metrics: serde_json::Value::Null,
    };
    let ck = CheckpointConfig::new("tictactoe", encoder.spec(), model, training);
    checkpoint::save(&dir, &ck, &net.to_tensors(&candle_core::Device::Cpu)?)?;
    Ok(())
}

fn mean_curve(cfg: &TttExperimentConfig, runs: &[CurvePoint]) -> Vec<MeanPoint> {
    let mut out = Vec::new();
    for &h in &cfg.hidden {
        let mut xs: Vec<usize> = runs
            .iter()
            .filter(|p| p.hidden == h)
            .map(|p| p.examples)
            .collect();
        xs.sort_unstable();
        xs.dedup();
        for x in xs {
            let at: Vec<&CurvePoint> = runs
                .iter()
                .filter(|p| p.hidden == h && p.examples == x)
                .collect();
            let e: Vec<f64> = at.iter().map(|p| p.equity).collect();
            let mean_of =
                |f: fn(&CurvePoint) -> f64| at.iter().map(|p| f(p)).sum::<f64>() / at.len() as f64;
            let n = e.len() as f64;
            let mean = e.iter().sum::<f64>() / n;
            let sd =
                (e.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt();
            out.push(MeanPoint {
                hidden: h,
                examples: x,
                mean_equity: mean,
                sd_equity: sd,
                min_equity: e.iter().cloned().fold(f64::INFINITY, f64::min),
                max_equity: e.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
                mean_equity_first: mean_of(|p| p.equity_first),
                mean_equity_second: mean_of(|p| p.equity_second),
            });
        }
    }
    out
}

fn summarise(
    cfg: &TttExperimentConfig,
    curve: &[MeanPoint],
    runs: &[CurvePoint],
) -> Vec<HiddenSummary> {
    cfg.hidden
        .iter()
        .map(|&h| {
            let pts: Vec<&MeanPoint> = curve
                .iter()
                .filter(|p| p.hidden == h && p.examples > 0)
                .collect();
            let best = pts
                .iter()
                .max_by(|a, b| a.mean_equity.total_cmp(&b.mean_equity))
                .copied();
            let sim_best: Vec<f64> = (0..cfg.sims)
                .map(|s| {
                    runs.iter()
                        .filter(|p| p.hidden == h && p.sim == s && p.examples > 0)
                        .map(|p| p.equity)
                        .fold(f64::NEG_INFINITY, f64::max)
                })
                .collect();
            HiddenSummary {
                hidden: h,
                best_mean_equity: best.map(|p| p.mean_equity).unwrap_or(f64::NAN),
                best_at_examples: best.map(|p| p.examples).unwrap_or(0),
                mean_of_sim_best: sim_best.iter().sum::<f64>() / sim_best.len() as f64,
                final_mean_equity: pts.last().map(|p| p.mean_equity).unwrap_or(f64::NAN),
                best_equity_first: best.map(|p| p.mean_equity_first).unwrap_or(f64::NAN),
                best_equity_second: best.map(|p| p.mean_equity_second).unwrap_or(f64::NAN),
            }
        })
        .collect()
}

/// The summary as a table for people.
pub fn summary_table(report: &TttExperimentReport) -> Table {
    let mut t = Table::new(vec![
        "hidden".into(),
        "best mean equity".into(),
        "at examples".into(),
        "mean of per-sim best".into(),
        "final mean equity".into(),
        "best: as x".into(),
        "best: as o".into(),
    ]);
    for s in &report.summary {
        t.push_row(vec![
            s.hidden.to_string(),
            format!("{:+.3}", s.best_mean_equity),
            s.best_at_examples.to_string(),
            format!("{:+.3}", s.mean_of_sim_best),
            format!("{:+.3}", s.final_mean_equity),
            format!("{:+.3}", s.best_equity_first),
            format!("{:+.3}", s.best_equity_second),
        ]);
    }
    t
}

fn write_outputs(report: &TttExperimentReport) -> Result<(), AnyError> {
    let cfg = &report.config;
    let mut curve = Table::new(
        [
            "hidden",
            "examples",
            "mean_equity",
            "sd_equity",
            "min_equity",
            "max_equity",
            "mean_equity_first",
            "mean_equity_second",
            "sims",
        ]
        .map(String::from)
        .to_vec(),
    );
    for p in &report.curve {
        curve.push_row(vec![
            p.hidden.to_string(),
            p.examples.to_string(),
            format!("{:.4}", p.mean_equity),
            format!("{:.4}", p.sd_equity),
            format!("{:.4}", p.min_equity),
            format!("{:.4}", p.max_equity),
            format!("{:.4}", p.mean_equity_first),
            format!("{:.4}", p.mean_equity_second),
            cfg.sims.to_string(),
        ]);
    }
    curve.write_csv(cfg.out.join("equity_curve.csv"))?;
    let mut runs = Table::new(
        [
            "hidden",
            "sim",
            "examples",
            "equity",
            "equity_first",
            "equity_second",
            "wins",
            "draws",
            "losses",
        ]
        .map(String::from)
        .to_vec(),
    );
    for p in &report.runs {
        runs.push_row(vec![
            p.hidden.to_string(),
            p.sim.to_string(),
            p.examples.to_string(),
            format!("{:.4}", p.equity),
            format!("{:.4}", p.equity_first),
            format!("{:.4}", p.equity_second),
            p.wins.to_string(),
            p.draws.to_string(),
            p.losses.to_string(),
        ]);
    }
    runs.write_csv(cfg.out.join("equity_runs.csv"))?;
    write_json(cfg.out.join("summary.json"), report)?;
    let series = cfg
        .hidden
        .iter()
        .map(|&h| Series {
            name: format!("{h} hidden"),
            points: report
                .curve
                .iter()
                .filter(|p| p.hidden == h)
                .map(|p| (p.examples as f64, p.mean_equity))
                .collect(),
        })
        .collect();
    let what = if cfg.exp == 1 {
        "games against RANDOM"
    } else {
        "games drawn from the database"
    };
    let chart = LineChart {
        title: format!(
            "Tic-tac-toe Exp. {}: NETWORK vs EXPERT, mean of {} sims",
            if cfg.exp == 1 { "I" } else { "II" },
            cfg.sims
        ),
        x_label: format!("training examples ({what})"),
        y_label: "equity (w - l) / (w + l + d)".into(),
        series,
        reference_lines: report
            .published_best
            .iter()
            .map(|(who, v)| (format!("{who}: best {v:.2}"), *v))
            .collect(),
        y_range: None,
    };
    chart.write_png(cfg.out.join("equity.png"))?;
    chart.write_svg(cfg.out.join("equity.svg"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::run_dir::RunDirError;

    fn tiny(out: PathBuf) -> TttExperimentConfig {
        TttExperimentConfig {
            hidden: vec![4],
            sims: 1,
            examples: 20,
            eval_every: 10,
            eval_games: 4,
            db_games: 10,
            ..TttExperimentConfig::published(2, out)
        }
    }

    #[test]
    fn a_folder_another_writer_holds_is_refused_before_anything_runs() {
        let (_d, out) = crate::util::scratch("ttt");
        let _held = RunDir::claim(&out).unwrap();
        let e = run(&tiny(out.clone()), false).unwrap_err();
        assert!(
            matches!(
                e.downcast_ref::<RunDirError>(),
                Some(RunDirError::Locked(_))
            ),
            "{e}"
        );
        crate::util::run_dir::assert_refused_as_held(&e, &out);
        assert!(!out.exists());
    }

    #[test]
    fn a_database_is_swapped_in_whole_and_leftovers_of_a_kill_are_cleared() {
        let (_d, out) = crate::util::scratch("ttt");
        let db = out.join("sim-00/db");
        // What a kill leaves: a half-built replacement beside the database.
        let staged = out.join("sim-00/.db.plies-staging");
        std::fs::create_dir_all(&staged).unwrap();
        std::fs::write(staged.join("shard-00000.arrow"), "half").unwrap();
        run(&tiny(out.clone()), false).unwrap();
        assert!(!staged.exists());
        let first = Dataset::open(&db).unwrap();
        assert_eq!(first.manifest().totals.games, 10);
        // A rerun replaces it with the same database.
        let manifest = std::fs::read(db.join(MANIFEST_FILE)).unwrap();
        run(&tiny(out.clone()), false).unwrap();
        Dataset::open(&db).unwrap().verify().unwrap();
        assert_eq!(std::fs::read(db.join(MANIFEST_FILE)).unwrap(), manifest);
    }
}
