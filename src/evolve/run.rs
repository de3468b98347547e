//! `plies evolve`: an evolution strategy over a model's weights, the
//! fitness of each point its mean game score against a fixed opponent.
//!
//! The output directory holds `state.json` (the configuration, the
//! strategy's state, the champion and the history; written atomically after
//! every generation), `history.csv`/`history.json` (per generation: best
//! and mean fitness, step size, games, seconds), `learning_curve.png`, and
//! two ordinary checkpoints: `best/` (the point with the best fitness seen)
//! and `final/` (the strategy's current answer). Run again with the same
//! options and a higher `--generations` and it continues where it stopped:
//! a run killed at any moment and resumed ends as the uninterrupted one.

use super::fitness::{scores_over_sizes, NetworkPlay, SizedPlayers};
use super::{EvolveError, Strategy, StrategyKind};
use crate::checkpoint::{self, CheckpointConfig, TrainingInfo};
use crate::games::GameSupport;
use crate::infer::{flat_from_tensors, tensors_from_flat};
use crate::model::{seeded_tensors, ModelConfig};
use crate::report::{write_json, LineChart, Table};
use crate::search::evaluators::EvalContext;
use crate::search::game_player::{player_from_spec_in, PlayerContext};
use crate::util::run_dir::{first_difference, Depth, RunDir};
use crate::util::seeded_rng;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Stream of the starting weights.
const INIT_STREAM: u64 = 0x1217;

/// What a run is; everything but `generations` and `out` must match when
/// a run resumes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvolveConfig {
    pub game: String,
    pub size: usize,
    /// More board sizes the fitness games are spread over, besides `size`
    /// ([`board_of_game`](super::fitness::board_of_game)); empty in the
    /// paper's runs, so their saved states read as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_sizes: Vec<usize>,
    /// A checkpoint whose weights the run starts from instead of the
    /// paper's N(0, 1) draws: a network evolved on a small board goes on
    /// learning on a larger one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<PathBuf>,
    pub encoder: String,
    pub model: ModelConfig,
    pub strategy: StrategyKind,
    /// Step size at the start.
    pub sigma: f64,
    /// Parents of `mu-lambda`.
    pub mu: usize,
    /// Children a generation (`mu-lambda`, `snes`).
    pub lambda: usize,
    /// Games per fitness evaluation (the paper: 100).
    pub games: usize,
    /// The fixed opponent, a player spec (the paper: naive).
    pub opponent: String,
    pub temperature: f64,
    pub seed: u64,
    #[serde(skip)]
    pub generations: u64,
    #[serde(skip)]
    pub out: PathBuf,
}

/// The best point seen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Champion {
    pub generation: u64,
    pub fitness: f64,
    pub weights: Vec<f64>,
}

/// One generation's line of the history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerationRecord {
    pub generation: u64,
    pub best: f64,
    pub mean: f64,
    pub step: f64,
    /// Games played so far.
    pub games: u64,
    /// Wall seconds so far (the one thing a resumed run does not repeat).
    pub seconds: f64,
}

/// Everything a run needs to go on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvolveState {
    pub config: EvolveConfig,
    /// Generations done.
    pub generation: u64,
    pub strategy: Strategy,
    pub champion: Option<Champion>,
    pub history: Vec<GenerationRecord>,
}

pub const STATE_FILE: &str = "state.json";

/// Reads a run's state file, `None` when there is none.
pub fn read_state<T: for<'de> Deserialize<'de>>(dir: &Path) -> Result<Option<T>, EvolveError> {
    let path = dir.join(STATE_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| EvolveError::State {
                path,
                why: format!("not a run state: {e}"),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(EvolveError::State {
            path,
            why: e.to_string(),
        }),
    }
}

/// Refuses to resume a run made with other options, naming the first that
/// differs with both values.
pub fn check_same_run<T: Serialize>(dir: &Path, saved: &T, now: &T) -> Result<(), EvolveError> {
    let (a, b) = (
        serde_json::to_value(saved).unwrap_or_default(),
        serde_json::to_value(now).unwrap_or_default(),
    );
    let Some(d) = first_difference(&a, &b, Depth::TopLevel) else {
        return Ok(());
    };
    let field = if d.field.is_empty() {
        "the options".into()
    } else {
        format!("{} was {}, now {}", d.field, d.saved_text(), d.given_text())
    };
    Err(EvolveError::State {
        path: dir.join(STATE_FILE),
        why: format!("holds another run ({field}); use another --out or remove it to start afresh"),
    })
}

/// The weights of the checkpoint in `dir` as a starting point for `model`:
/// refused, naming the tensor, unless every tensor has the network's shape
/// (the same model and hidden size; the board size may differ).
pub fn checkpoint_weights<G: GameSupport>(
    dir: &Path,
    model: &ModelConfig,
) -> Result<Vec<f64>, EvolveError> {
    let ckpt = checkpoint::load(dir, Some(G::NAME), None)?;
    for (name, shape) in model.expected_tensors() {
        let found = ckpt.tensors.get(&name).map(|t| t.dims().to_vec());
        if found.as_deref() != Some(shape.as_slice()) {
            return Err(EvolveError::option(
                "init",
                format!(
                    "{}: tensor '{name}' is {}, the evolved network's is {shape:?} \
                     (another model or hidden size)",
                    dir.display(),
                    found.map_or("missing".into(), |d| format!("{d:?}"))
                ),
            ));
        }
    }
    Ok(flat_from_tensors(model, &ckpt.tensors)?
        .into_iter()
        .map(f64::from)
        .collect())
}

/// The starting weights of `model`, drawn as its init plan says (the
/// MDRNN: N(0, 1), as in the paper).
pub fn initial_weights(model: &ModelConfig, seed: u64) -> Result<Vec<f64>, EvolveError> {
    let tensors = seeded_tensors(
        model,
        &mut seeded_rng(seed, INIT_STREAM),
        &candle_core::Device::Cpu,
    )?;
    Ok(flat_from_tensors(model, &tensors)?
        .into_iter()
        .map(f64::from)
        .collect())
}

/// Saves `weights` as an ordinary checkpoint of game `G`.
pub fn save_network<G: GameSupport>(
    dir: &Path,
    play: &NetworkPlay,
    weights: &[f64],
    training: TrainingInfo,
) -> Result<(), EvolveError> {
    let flat: Vec<f32> = weights.iter().map(|&w| w as f32).collect();
    let tensors = tensors_from_flat(&play.model, &flat)?;
    let encoder = G::encoder(&play.encoder, play.size)?.spec();
    let cfg = CheckpointConfig::new(G::NAME, encoder, play.model.clone(), training);
    checkpoint::save(dir, &cfg, &tensors)?;
    Ok(())
}

/// A learning curve: best and mean per generation.
pub fn write_curve(
    dir: &Path,
    title: &str,
    rows: &[(f64, f64, f64)],
    y_label: &str,
) -> Result<(), EvolveError> {
    let chart = LineChart::new(title, "generation", y_label)
        .with_series("best", rows.iter().map(|r| (r.0, r.1)))
        .with_series("mean", rows.iter().map(|r| (r.0, r.2)))
        .with_y_range(-1.0, 1.0);
    chart.write_png(dir.join("learning_curve.png"))?;
    Ok(())
}

impl EvolveConfig {
    fn check(&self) -> Result<(), EvolveError> {
        if !self.model.has_policy() {
            return Err(EvolveError::option(
                "model",
                format!(
                    "a {} has no per-point outputs to play by",
                    self.model.kind()
                ),
            ));
        }
        if self.games == 0 {
            return Err(EvolveError::option("games", "must be at least 1"));
        }
        let sizes = self.fitness_sizes();
        if let Some(dup) = sizes
            .iter()
            .enumerate()
            .find(|(i, s)| sizes[..*i].contains(s))
        {
            return Err(EvolveError::option(
                "also-sizes",
                format!("size {} is given twice", dup.1),
            ));
        }
        if sizes.len() > 1 && self.games < 2 * sizes.len() {
            return Err(EvolveError::option(
                "games",
                format!(
                    "{} games cannot give each of the {} board sizes a game with each start",
                    self.games,
                    sizes.len()
                ),
            ));
        }
        if !(self.sigma.is_finite() && self.sigma > 0.0) {
            return Err(EvolveError::option("sigma", "must be a number > 0"));
        }
        if self.strategy == StrategyKind::MuLambda && self.lambda < self.mu {
            return Err(EvolveError::option(
                "lambda",
                format!("must be at least --mu ({})", self.mu),
            ));
        }
        Ok(())
    }

    /// The board sizes of the fitness games: `size`, then `also_sizes`.
    pub fn fitness_sizes(&self) -> Vec<usize> {
        std::iter::once(self.size)
            .chain(self.also_sizes.iter().copied())
            .collect()
    }

    pub fn play(&self) -> NetworkPlay {
        NetworkPlay {
            model: self.model.clone(),
            encoder: self.encoder.clone(),
            size: self.size,
            temperature: self.temperature,
        }
    }
}

/// What a finished (or resumed and finished) run reports.
#[derive(Clone, Debug, Serialize)]
pub struct EvolveReport {
    pub state: EvolveState,
    pub best_dir: PathBuf,
    pub final_dir: PathBuf,
}

/// Runs (or resumes) `cfg` up to `cfg.generations`; `progress` prints a
/// line per generation on stderr.
pub fn run_evolve<G: GameSupport>(
    cfg: &EvolveConfig,
    progress: bool,
) -> Result<EvolveReport, EvolveError> {
    cfg.check()?;
    // Bad sizes and a bad starting checkpoint are refused before the
    // output directory is made, so they leave nothing behind.
    for (i, &size) in cfg.fitness_sizes().iter().enumerate() {
        G::with_size(size).map_err(|e| {
            EvolveError::option(if i == 0 { "size" } else { "also-sizes" }, e.to_string())
        })?;
    }
    let fresh = !cfg.out.join(STATE_FILE).exists();
    let start = match &cfg.init {
        Some(dir) if fresh => Some(checkpoint_weights::<G>(dir, &cfg.model)?),
        _ => None,
    };
    std::fs::create_dir_all(&cfg.out).map_err(|e| EvolveError::State {
        path: cfg.out.clone(),
        why: e.to_string(),
    })?;
    let _run_dir = RunDir::claim(&cfg.out)?;
    let sizes = cfg.fitness_sizes();
    let opponents = sizes
        .iter()
        .map(|&size| {
            let ctx = PlayerContext {
                size,
                eval: EvalContext::default(),
            };
            player_from_spec_in::<G>(&cfg.opponent, &ctx)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let play = cfg.play();
    let mut state = match read_state::<EvolveState>(&cfg.out)? {
        Some(saved) => {
            check_same_run(&cfg.out, &saved.config, cfg)?;
            saved
        }
        None => {
            let x0 = match (start, &cfg.init) {
                (Some(x), _) => x,
                (None, Some(dir)) => checkpoint_weights::<G>(dir, &cfg.model)?,
                (None, None) => initial_weights(&cfg.model, cfg.seed)?,
            };
            EvolveState {
                config: EvolveConfig {
                    generations: 0,
                    out: PathBuf::new(),
                    ..cfg.clone()
                },
                generation: 0,
                strategy: Strategy::new(cfg.strategy, x0, cfg.sigma, cfg.mu, cfg.lambda),
                champion: None,
                history: Vec::new(),
            }
        }
    };
    let resumed_seconds = state.history.last().map_or(0.0, |r| r.seconds);
    let started = Instant::now();
    while state.generation < cfg.generations {
        let g = state.generation;
        let mut rng = seeded_rng(cfg.seed, g);
        let mut fitness = |points: &[Vec<f64>]| -> Result<Vec<f64>, EvolveError> {
            let boards = sizes
                .iter()
                .zip(&opponents)
                .map(|(&size, opponent)| {
                    let players = points
                        .iter()
                        .enumerate()
                        .map(|(i, p)| play.player_on::<G>(size, p, &format!("g{g}i{i}")))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(SizedPlayers {
                        size,
                        players,
                        opponent: opponent.clone(),
                    })
                })
                .collect::<Result<Vec<_>, EvolveError>>()?;
            scores_over_sizes(&boards, cfg.games, cfg.seed, &[g])
        };
        let stats = state.strategy.generation(&mut rng, &mut fitness)?;
        let games =
            state.history.last().map_or(0, |r| r.games) + (stats.evaluations * cfg.games) as u64;
        if state
            .champion
            .as_ref()
            .is_none_or(|c| stats.best > c.fitness)
        {
            state.champion = Some(Champion {
                generation: g,
                fitness: stats.best,
                weights: stats.best_x.clone(),
            });
        }
        state.generation += 1;
        state.history.push(GenerationRecord {
            generation: g,
            best: stats.best,
            mean: stats.mean,
            step: stats.step,
            games,
            seconds: resumed_seconds + started.elapsed().as_secs_f64(),
        });
        // Outputs before the state, so a kill between them never leaves
        // `best/`, `final/` or the history behind a state that moved on.
        write_outputs::<G>(cfg, &play, &state)?;
        write_json(cfg.out.join(STATE_FILE), &state)?;
        if progress {
            eprintln!(
                "generation {g}: best {:.3} mean {:.3} step {:.4} ({} games, {:.0} s)",
                stats.best,
                stats.mean,
                stats.step,
                games,
                resumed_seconds + started.elapsed().as_secs_f64()
            );
        }
    }
    if state.history.is_empty() {
        write_outputs::<G>(cfg, &play, &state)?;
    }
    Ok(EvolveReport {
        state,
        best_dir: cfg.out.join("best"),
        final_dir: cfg.out.join("final"),
    })
}

/// The history as a table.
pub fn history_table(history: &[GenerationRecord]) -> Table {
    let mut t = Table::with_headers(["generation", "best", "mean", "step", "games", "seconds"]);
    for r in history {
        t.push_row([
            r.generation.to_string(),
            format!("{:.4}", r.best),
            format!("{:.4}", r.mean),
            format!("{:.5}", r.step),
            r.games.to_string(),
            format!("{:.1}", r.seconds),
        ]);
    }
    t
}

fn write_outputs<G: GameSupport>(
    cfg: &EvolveConfig,
    play: &NetworkPlay,
    state: &EvolveState,
) -> Result<(), EvolveError> {
    history_table(&state.history).write_csv(cfg.out.join("history.csv"))?;
    write_json(cfg.out.join("history.json"), &state.history)?;
    let rows: Vec<(f64, f64, f64)> = state
        .history
        .iter()
        .map(|r| (r.generation as f64, r.best, r.mean))
        .collect();
    if !rows.is_empty() {
        write_curve(
            &cfg.out,
            &format!(
                "{} {}: {} against {}",
                cfg.game,
                cfg.fitness_sizes()
                    .iter()
                    .map(|s| format!("{s}x{s}"))
                    .collect::<Vec<_>>()
                    .join("+"),
                cfg.strategy,
                cfg.opponent
            ),
            &rows,
            "fitness (mean game score)",
        )?;
    }
    let evolved = Evolved {
        method: format!("evolve:{}", cfg.strategy),
        seed: cfg.seed,
        hyperparameters: serde_json::to_value(cfg).unwrap_or_default(),
        games: state.history.last().map_or(0, |r| r.games),
        generations: state.generation,
        score_name: "fitness",
    };
    let best = state
        .champion
        .as_ref()
        .map(|c| (c.weights.as_slice(), c.fitness));
    save_best_and_final::<G>(&cfg.out, play, &evolved, best, state.strategy.center())
}

/// What the model cards of an evolved network say about its training.
pub(crate) struct Evolved {
    pub method: String,
    pub seed: u64,
    pub hyperparameters: serde_json::Value,
    pub games: u64,
    pub generations: u64,
    /// The metric the best network's score is recorded under.
    pub score_name: &'static str,
}

/// Writes `best/` (the best network and its score, when there is one) and
/// `final/` (the search's current weights) as ordinary checkpoints.
pub(crate) fn save_best_and_final<G: GameSupport>(
    out: &Path,
    play: &NetworkPlay,
    run: &Evolved,
    best: Option<(&[f64], f64)>,
    current: &[f64],
) -> Result<(), EvolveError> {
    let training = |score: Option<f64>| {
        let mut metrics = serde_json::json!({ "generations": run.generations });
        metrics[run.score_name] = serde_json::json!(score);
        TrainingInfo {
            method: run.method.clone(),
            seed: Some(run.seed),
            examples: run.games,
            hyperparameters: run.hyperparameters.clone(),
            metrics,
            ..TrainingInfo::default()
        }
    };
    if let Some((weights, score)) = best {
        save_network::<G>(&out.join("best"), play, weights, training(Some(score)))?;
    }
    save_network::<G>(&out.join("final"), play, current, training(None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::AtariGo;
    use crate::model::MdrnnConfig;
    use crate::util::scratch;

    fn tiny(out: PathBuf, strategy: StrategyKind, generations: u64) -> EvolveConfig {
        EvolveConfig {
            game: "atari-go".into(),
            size: 5,
            also_sizes: Vec::new(),
            init: None,
            encoder: "stones-2".into(),
            model: ModelConfig::Mdrnn(MdrnnConfig::stones(5, 3)),
            strategy,
            sigma: 0.5,
            mu: 2,
            lambda: 4,
            games: 4,
            opponent: "naive".into(),
            temperature: 0.0,
            seed: 11,
            generations,
            out,
        }
    }

    /// The state without the wall seconds.
    fn replayable(mut s: EvolveState) -> EvolveState {
        s.history.iter_mut().for_each(|r| r.seconds = 0.0);
        s
    }

    #[test]
    fn a_resumed_run_ends_as_the_uninterrupted_one() {
        for strategy in [StrategyKind::OnePlusOne, StrategyKind::Snes] {
            let (_a, whole) = scratch("whole");
            let (_b, parts) = scratch("parts");
            let full = run_evolve::<AtariGo>(&tiny(whole.clone(), strategy, 4), false).unwrap();
            // Stopped after 1 generation, then after 2 more, then finished.
            for g in [1, 3, 4] {
                run_evolve::<AtariGo>(&tiny(parts.clone(), strategy, g), false).unwrap();
            }
            let resumed: EvolveState = read_state(&parts).unwrap().unwrap();
            assert_eq!(resumed.generation, 4);
            assert_eq!(replayable(resumed), replayable(full.state.clone()));
            let weights = |dir: &Path| {
                std::fs::read(dir.join("final").join(checkpoint::WEIGHTS_FILE)).unwrap()
            };
            assert_eq!(weights(&whole), weights(&parts));
            // The best network is an ordinary checkpoint that plays.
            let spec = format!("policy:ckpt={}", whole.join("best").display());
            let ctx = PlayerContext {
                size: 9,
                eval: EvalContext::default(),
            };
            assert!(player_from_spec_in::<AtariGo>(&spec, &ctx).is_ok());
            // Another seed is another run.
            let (_c, other) = scratch("other");
            let mut cfg = tiny(other, strategy, 4);
            cfg.seed = 12;
            let other = run_evolve::<AtariGo>(&cfg, false).unwrap();
            assert_ne!(replayable(other.state), replayable(full.state));
        }
    }

    #[test]
    fn a_run_with_other_options_is_not_resumed() {
        let (_a, out) = scratch("run");
        run_evolve::<AtariGo>(&tiny(out.clone(), StrategyKind::Snes, 1), false).unwrap();
        let mut cfg = tiny(out, StrategyKind::Snes, 2);
        cfg.games = 6;
        let e = run_evolve::<AtariGo>(&cfg, false).unwrap_err().to_string();
        assert!(e.contains("games was 4, now 6"), "{e}");
        // A field only one run sets is named too.
        cfg.games = 4;
        cfg.also_sizes = vec![7];
        let e = run_evolve::<AtariGo>(&cfg, false).unwrap_err().to_string();
        assert!(e.contains("also_sizes was nothing, now [7]"), "{e}");
        // While another writer holds the directory, nothing runs.
        cfg.also_sizes = Vec::new();
        let held = RunDir::claim(&cfg.out).unwrap();
        let e = run_evolve::<AtariGo>(&cfg, false).unwrap_err().to_string();
        assert!(e.contains("another writer holds it"), "{e}");
        drop(held);
        let r = run_evolve::<AtariGo>(&cfg, false).unwrap();
        assert_eq!(r.state.generation, 2);
    }

    #[test]
    fn a_fitness_over_several_sizes_plays_each_and_resumes() {
        let (_a, whole) = scratch("mixed");
        let (_b, parts) = scratch("mixed-parts");
        let mixed = |out: PathBuf, generations| EvolveConfig {
            also_sizes: vec![7],
            ..tiny(out, StrategyKind::Snes, generations)
        };
        let full = run_evolve::<AtariGo>(&mixed(whole.clone(), 2), false).unwrap();
        run_evolve::<AtariGo>(&mixed(parts.clone(), 1), false).unwrap();
        run_evolve::<AtariGo>(&mixed(parts.clone(), 2), false).unwrap();
        let resumed: EvolveState = read_state(&parts).unwrap().unwrap();
        assert_eq!(replayable(resumed), replayable(full.state.clone()));
        // The 7x7 games change the fitness: a 5x5-only run differs.
        let (_c, single) = scratch("single");
        let one =
            run_evolve::<AtariGo>(&tiny(single.clone(), StrategyKind::Snes, 2), false).unwrap();
        assert_ne!(full.state.history[0].best, one.state.history[0].best);
        // Only a mixed run's state names the field, so older states read as before.
        let text = std::fs::read_to_string(whole.join(STATE_FILE)).unwrap();
        assert!(text.contains("also_sizes"));
        let text = std::fs::read_to_string(single.join(STATE_FILE)).unwrap();
        assert!(!text.contains("also_sizes"));
        // Sizes given twice, or too few games for every size and start, are refused.
        let (_d, bad) = scratch("bad");
        let mut cfg = mixed(bad.clone(), 1);
        cfg.also_sizes = vec![5];
        let e = run_evolve::<AtariGo>(&cfg, false).unwrap_err().to_string();
        assert!(e.contains("also-sizes") && e.contains("twice"), "{e}");
        let mut cfg = mixed(bad, 1);
        cfg.also_sizes = vec![7, 9];
        cfg.games = 4;
        let e = run_evolve::<AtariGo>(&cfg, false).unwrap_err().to_string();
        assert!(e.contains("games") && e.contains("3 board sizes"), "{e}");
    }

    #[test]
    fn a_run_can_start_from_a_network_evolved_on_another_board() {
        let (_a, small) = scratch("small");
        let first =
            run_evolve::<AtariGo>(&tiny(small.clone(), StrategyKind::Snes, 2), false).unwrap();
        let (_b, large) = scratch("large");
        let mut cfg = tiny(large.clone(), StrategyKind::Snes, 0);
        cfg.size = 7;
        cfg.model = ModelConfig::Mdrnn(MdrnnConfig::stones(7, 3));
        cfg.init = Some(small.join("final"));
        let r = run_evolve::<AtariGo>(&cfg, false).unwrap();
        // Generation 0 starts where the 5x5 run ended.
        let center = |s: &EvolveState| s.strategy.center().to_vec();
        let stored = |v: &[f64]| v.iter().map(|&w| w as f32 as f64).collect::<Vec<_>>();
        assert_eq!(center(&r.state), stored(&center(&first.state)));
        // Another hidden size is refused, naming the tensor.
        let (_c, other) = scratch("other");
        cfg.out = other;
        cfg.model = ModelConfig::Mdrnn(MdrnnConfig::stones(7, 4));
        let e = run_evolve::<AtariGo>(&cfg, false).unwrap_err().to_string();
        assert!(e.contains("--init") && e.contains("tensor"), "{e}");
        assert!(!cfg.out.exists(), "a refused run left its directory");
        // A size the game refuses is named under its option, and nothing is made.
        cfg.model = ModelConfig::Mdrnn(MdrnnConfig::stones(7, 3));
        cfg.also_sizes = vec![1];
        let e = run_evolve::<AtariGo>(&cfg, false).unwrap_err().to_string();
        assert!(e.contains("--also-sizes") && e.contains("1x1"), "{e}");
        assert!(!cfg.out.exists(), "a refused run left its directory");
    }
}
