//! The generations of a loop, each stage resumable: a stage whose output
//! is complete is skipped, one cut short by a kill starts again (self-play,
//! the replay window, the gate, the anchors) or resumes (training).
//!
//! ```text
//! DIR/loop.json                   the configuration (a resume must match it)
//! DIR/gen-NNN/data/               the generation's self-play, with policy targets
//! DIR/gen-NNN/window/             the last `window` generations' data (hard links)
//! DIR/gen-NNN/net/                the network trained on it: a checkpoint with its card
//! DIR/gen-NNN/gate.json           the new network against the current one
//! DIR/gen-NNN/anchors.json        the new network against each anchor
//! DIR/gen-NNN/timing.json         wall and CPU seconds per stage (not reproducible)
//! DIR/elo.csv, elo.png            Elo against each anchor by generation
//! DIR/generations.csv             the gate's decisions and the CPU share by generation
//! ```
//!
//! The network of generation `g` learns from the window ending at `g`,
//! starting from generation `g - 1`'s weights; self-play is played by the
//! current network (the last one promoted by its gate), generation 0 and
//! every generation before the first promotion by the bootstrap search (or
//! the bootstrap player the configuration names).

use super::generation::{play_generation, GenerationPlayer, Searcher};
use super::{LoopConfig, LoopError};
use crate::arena::{build_players, play_match_from, EloEstimate, MatchResult, StartConfig};
use crate::checkpoint;
use crate::dataset::{Dataset, MANIFEST_FILE};
use crate::games::GameSupport;
use crate::infer::Evaluator;
use crate::model::ModelConfig;
use crate::optim::{AdamWConfig, OptimizerConfig};
use crate::report::{LineChart, Table};
use crate::search::evaluators::{evaluator_by_name, EvalContext};
use crate::search::game_player::PlayerContext;
use crate::train::{fit, resolve_model, FitConfig, ScheduleSpec};
use crate::util::run_dir::{check_fingerprint, Depth, JsonLayout, RunDir, RunDirError};
use crate::util::{derive_seed, parse_device};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The configuration file in a loop directory.
pub const CONFIG_FILE: &str = "loop.json";
/// Elo values shown for a perfect or null score in the plot.
const ELO_PLOT_LIMIT: f64 = 800.0;

/// Seed streams of the stages.
const SELFPLAY_STREAM: u64 = 0x7365_6c66;
const TRAIN_STREAM: u64 = 0x7472_6169;
const GATE_STREAM: u64 = 0x6761_7465;
const ANCHOR_STREAM: u64 = 0x616e_6368;

/// The gate's decision.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateResult {
    pub generation: u32,
    /// What the new network played against (a player spec).
    pub opponent: String,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub score: f64,
    /// `score - z * se`, the lower confidence bound the gate uses.
    pub lower_bound: f64,
    pub promoted: bool,
}

/// One generation's network against one anchor.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AnchorResult {
    pub generation: u32,
    pub anchor: String,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub score: f64,
}

impl AnchorResult {
    /// The network's Elo over the anchor with its 95% interval (infinite
    /// for a perfect or null score, which is why it is not stored in JSON).
    pub fn elo(&self) -> EloEstimate {
        EloEstimate::from_wdl(self.wins, self.draws, self.losses).unwrap_or(EloEstimate {
            elo: 0.0,
            lo: 0.0,
            hi: 0.0,
        })
    }
}

/// Wall and CPU seconds of one generation's stages.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StageTimes {
    pub selfplay_wall: f64,
    pub selfplay_cpu: f64,
    pub train_wall: f64,
    pub train_cpu: f64,
    pub matches_wall: f64,
    pub matches_cpu: f64,
}

impl StageTimes {
    /// Self-play's share of the CPU time of self-play and training.
    pub fn selfplay_share(&self) -> f64 {
        let total = self.selfplay_cpu + self.train_cpu;
        if total > 0.0 {
            self.selfplay_cpu / total
        } else {
            0.0
        }
    }
}

/// CPU seconds this process has used (user + system).
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Runs `f`, adding its wall and CPU seconds to `wall` and `cpu`.
fn timed<T>(wall: &mut f64, cpu: &mut f64, f: impl FnOnce() -> T) -> T {
    let (w, c) = (Instant::now(), cpu_seconds());
    let out = f();
    *wall += w.elapsed().as_secs_f64();
    *cpu += cpu_seconds() - c;
    out
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LoopError + '_ {
    move |source| LoopError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, LoopError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| LoopError::Config {
                path: path.to_path_buf(),
                why: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
    }
}

/// Locks the loop directory for this process and writes `cfg` to it, or
/// checks it against the configuration there, naming the first field that
/// differs.
fn claim(dir: &Path, cfg: &LoopConfig) -> Result<RunDir, LoopError> {
    let path = dir.join(CONFIG_FILE);
    let now = serde_json::to_value(cfg).map_err(|e| LoopError::Config {
        path: path.clone(),
        why: e.to_string(),
    })?;
    let run_dir = RunDir::claim(dir).map_err(run_dir_error)?;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    check_fingerprint(&path, &now, Depth::Nested, JsonLayout::PrettyLine).map_err(run_dir_error)?;
    Ok(run_dir)
}

/// The loop's error for what claiming its directory met.
fn run_dir_error(e: RunDirError) -> LoopError {
    match e {
        RunDirError::Mismatch { path, difference } => {
            // A field only one configuration has shows as `Some(..)`/`None`.
            let (was, now) = match (&difference.saved, &difference.given) {
                (Some(a), Some(b)) => (a.to_string(), b.to_string()),
                (a, b) => (format!("{:?}", a.as_ref()), format!("{:?}", b.as_ref())),
            };
            LoopError::Mismatch {
                path,
                field: difference.field,
                was,
                now,
            }
        }
        RunDirError::Io { path, source } => LoopError::Io { path, source },
        RunDirError::Unreadable { path, why } => LoopError::Config { path, why },
        RunDirError::Write(e) => LoopError::Report(e.into()),
        RunDirError::Locked(e) => LoopError::Locked(e),
    }
}

/// A generation's directory.
pub fn generation_dir(dir: &Path, g: u32) -> PathBuf {
    dir.join(format!("gen-{g:03}"))
}

/// Removes what a kill left of a stage's output directory.
fn clear_partial(path: &Path) -> Result<(), LoopError> {
    if path.exists() {
        std::fs::remove_dir_all(path).map_err(io(path))?;
    }
    Ok(())
}

/// What a finished loop did.
#[derive(Clone, Debug, Serialize)]
pub struct LoopSummary {
    pub gates: Vec<GateResult>,
    pub anchors: Vec<AnchorResult>,
    pub times: Vec<StageTimes>,
    /// The last promoted network (`None`: no network passed a gate).
    pub best: Option<PathBuf>,
}

impl LoopSummary {
    /// One row per generation: the gate and the CPU share.
    pub fn table(&self) -> Table {
        let mut t = Table::with_headers([
            "generation",
            "gate W-D-L",
            "gate score",
            "lower bound",
            "promoted",
            "self-play CPU s",
            "training CPU s",
            "self-play share",
        ]);
        for (gate, time) in self.gates.iter().zip(&self.times) {
            t.push_row([
                gate.generation.to_string(),
                format!("{}-{}-{}", gate.wins, gate.draws, gate.losses),
                format!("{:.3}", gate.score),
                format!("{:.3}", gate.lower_bound),
                gate.promoted.to_string(),
                format!("{:.1}", time.selfplay_cpu),
                format!("{:.1}", time.train_cpu),
                format!("{:.1}%", 100.0 * time.selfplay_share()),
            ]);
        }
        t
    }

    /// Elo against each anchor by generation.
    pub fn elo_table(&self) -> Table {
        let mut t = Table::with_headers([
            "generation",
            "anchor",
            "W-D-L",
            "score",
            "elo",
            "elo 95% low",
            "elo 95% high",
        ]);
        for a in &self.anchors {
            let e = a.elo();
            t.push_row([
                a.generation.to_string(),
                a.anchor.clone(),
                format!("{}-{}-{}", a.wins, a.draws, a.losses),
                format!("{:.3}", a.score),
                format!("{:.0}", e.elo),
                format!("{:.0}", e.lo),
                format!("{:.0}", e.hi),
            ]);
        }
        t
    }
}

fn bar(len: u64, msg: String, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(len);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} games (eta {eta})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(msg);
    pb
}

/// The spec of a network's MCTS player at `sims` simulations.
pub fn network_spec(net: &Path, sims: u64, decisive: bool) -> String {
    let decisive = if decisive { ",decisive=on" } else { "" };
    format!(
        "mcts:sims={sims},eval=ckpt:{},reuse=off{decisive}",
        net.display()
    )
}

/// Runs (or resumes) the loop `cfg` in `dir`.
pub fn run_loop<G: GameSupport>(
    dir: &Path,
    cfg: &LoopConfig,
    quiet: bool,
) -> Result<LoopSummary, LoopError> {
    let size = cfg.size.unwrap_or(G::DEFAULT_SIZE);
    G::with_size(size)?;
    let device = parse_device(&cfg.device)?;
    let ctx = PlayerContext {
        size,
        eval: EvalContext {
            device: device.clone(),
            ..EvalContext::default()
        },
    };
    let encoder: Arc<dyn crate::encode::Encoder<G>> = Arc::from(G::encoder(&cfg.encoder, size)?);
    // A bad anchor (an unknown spec, OpenSpiel's bot without its Python)
    // fails now, before the run directory is claimed, not after a
    // generation's self-play and training.
    build_players::<G>(&cfg.anchors.players, &ctx, |i| format!("anchor {i}"))?;
    let bootstrap = match &cfg.selfplay.bootstrap {
        Some(spec) => spec.clone(),
        None => format!(
            "mcts:sims={}{}",
            cfg.selfplay.bootstrap_sims,
            if cfg.selfplay.decisive {
                ",decisive=on"
            } else {
                ""
            }
        ),
    };
    // The bootstrap player too, and only it plays before any network.
    let bootstrap_player = match &cfg.selfplay.bootstrap {
        Some(spec) => Some(
            build_players::<G>(std::slice::from_ref(spec), &ctx, |_| {
                "selfplay.bootstrap".into()
            })?
            .remove(0),
        ),
        None => None,
    };
    // Held until the loop returns: one writer per loop directory.
    let _run_dir = claim(dir, cfg)?;
    let threads = cfg.threads;
    let mut summary = LoopSummary {
        gates: Vec::new(),
        anchors: Vec::new(),
        times: Vec::new(),
        best: None,
    };
    for g in 0..cfg.generations {
        let gdir = generation_dir(dir, g);
        std::fs::create_dir_all(&gdir).map_err(io(&gdir))?;
        let timing_path = gdir.join("timing.json");
        let mut times: StageTimes = read_json(&timing_path)?.unwrap_or_default();

        // 1. Self-play by the current network.
        let data = gdir.join("data");
        if !data.join(MANIFEST_FILE).exists() {
            let eval: Option<Arc<dyn Evaluator<G>>> = match &summary.best {
                Some(net) => Some(evaluator_by_name::<G>(
                    &format!("ckpt:{}", net.display()),
                    size,
                    &ctx.eval,
                )?),
                None => None,
            };
            let eval = match (eval, cfg.selfplay.batch) {
                (Some(e), b) if b > 0 => {
                    let opts = crate::infer::BatchOptions {
                        max_batch: b,
                        workers: crate::infer::BatchOptions::workers_on(!ctx.eval.device.is_cpu()),
                        ..Default::default()
                    };
                    Some(Arc::new(
                        crate::infer::BatchedEvaluator::new(e, opts)
                            .map_err(|e| LoopError::Pool(e.to_string()))?,
                    ) as Arc<dyn Evaluator<G>>)
                }
                (e, _) => e,
            };
            let player = match (eval, &bootstrap_player) {
                (None, Some(p)) => GenerationPlayer::Player(p.clone()),
                (eval, _) => GenerationPlayer::Search(Searcher::new(&cfg.selfplay, eval)),
            };
            let pb = bar(
                cfg.selfplay.games,
                format!("generation {g}: self-play ({})", player.describe()),
                quiet,
            );
            let start = || G::with_size(size).unwrap_or_else(|_| G::new());
            timed(&mut times.selfplay_wall, &mut times.selfplay_cpu, || {
                play_generation(
                    &data,
                    &player,
                    &cfg.selfplay,
                    &start,
                    encoder.clone(),
                    derive_seed(derive_seed(cfg.seed, SELFPLAY_STREAM), g as u64),
                    &format!("gen{g:03}"),
                    threads,
                    &pb,
                )
            })?;
            pb.finish_and_clear();
            crate::report::write_json(&timing_path, &times)?;
        }

        // 2. The replay window: this and the previous generations' data.
        let window = gdir.join("window");
        if !window.join(MANIFEST_FILE).exists() {
            clear_partial(&window)?;
            let first = (g + 1).saturating_sub(cfg.window);
            let sources: Vec<PathBuf> = (first..=g)
                .map(|k| generation_dir(dir, k).join("data"))
                .collect();
            crate::dataset::merge(&sources, &window)?;
        }

        // 3. Training, from the previous generation's weights.
        let net = gdir.join("net");
        let previous = g.checked_sub(1).map(|k| generation_dir(dir, k).join("net"));
        let dataset = Dataset::open(&window)?;
        let model_source = match &previous {
            Some(p) => p.display().to_string(),
            None => cfg.train.model.clone(),
        };
        let (mut model, init_weights) = resolve_model(&model_source, &dataset)?;
        if let ModelConfig::Resnet(r) = &mut model {
            r.policy = true;
            r.policy_planes = G::POLICY_PLANES;
        }
        let fit_cfg = FitConfig {
            data: window.clone(),
            out: net.clone(),
            model,
            model_source,
            init_weights,
            optimizer: cfg
                .train
                .optimizer
                .unwrap_or(OptimizerConfig::AdamW(AdamWConfig {
                    lr: cfg.train.lr,
                    weight_decay: cfg.train.weight_decay,
                    ..AdamWConfig::default()
                })),
            loss: crate::train::loss::LossKind::Mse,
            l1: 0.0,
            l2: 0.0,
            clip: Some(5.0),
            schedule: ScheduleSpec::Constant,
            warmup_steps: 0,
            epochs: cfg.train.epochs,
            batch_size: cfg.train.batch,
            buffer_rows: 65_536,
            seed: derive_seed(derive_seed(cfg.seed, TRAIN_STREAM), g as u64),
            patience: None,
            save_every: 50,
            device_name: cfg.device.clone(),
            resume: true,
            overwrite: false,
            quiet,
            comparison: None,
            policy_weight: cfg.train.policy_weight,
            augment: false,
        };
        if !crate::train::run_state::finished(&net) {
            if !quiet {
                eprintln!(
                    "generation {g}: training {} on {}",
                    fit_cfg.model.describe(),
                    window.display()
                );
            }
            timed(&mut times.train_wall, &mut times.train_cpu, || {
                fit(&fit_cfg, &device)
            })?;
            crate::report::write_json(&timing_path, &times)?;
        }
        checkpoint::load(&net, Some(G::NAME), None).map_err(crate::train::FitError::from)?;

        // 4. The gate: the new network against the current player.
        let gate_path = gdir.join("gate.json");
        let gate = match read_json::<GateResult>(&gate_path)? {
            Some(r) => r,
            None => {
                let current = match &summary.best {
                    Some(b) => network_spec(b, cfg.gate.sims, cfg.selfplay.decisive),
                    None => bootstrap.clone(),
                };
                let specs = [
                    network_spec(&net, cfg.gate.sims, cfg.selfplay.decisive),
                    current.clone(),
                ];
                let players = build_players::<G>(&specs, &ctx, |i| ["new", "current"][i].into())?;
                let pb = bar(
                    cfg.gate.games as u64,
                    format!("generation {g}: gate"),
                    quiet,
                );
                let r = timed(&mut times.matches_wall, &mut times.matches_cpu, || {
                    play_from_random_openings(
                        players[0].as_ref(),
                        players[1].as_ref(),
                        cfg.gate.games,
                        cfg.gate.random_plies,
                        size,
                        derive_seed(derive_seed(cfg.seed, GATE_STREAM), g as u64),
                        &pb,
                    )
                })?;
                pb.finish_and_clear();
                let gate = decide(g, current, &r, cfg.gate.margin, cfg.gate.z);
                crate::report::write_json(&gate_path, &gate)?;
                crate::report::write_json(&timing_path, &times)?;
                gate
            }
        };
        if gate.promoted {
            summary.best = Some(net.clone());
        }

        // 5. Ratings against the fixed anchors.
        let anchors_path = gdir.join("anchors.json");
        let anchors = match read_json::<Vec<AnchorResult>>(&anchors_path)? {
            Some(a) => a,
            None => {
                let mut out = Vec::new();
                for (k, anchor) in cfg.anchors.players.iter().enumerate() {
                    let specs = [
                        network_spec(&net, cfg.gate.sims, cfg.selfplay.decisive),
                        anchor.clone(),
                    ];
                    let players =
                        build_players::<G>(&specs, &ctx, |i| ["network", "anchor"][i].into())?;
                    let pb = bar(
                        cfg.anchors.games as u64,
                        format!("generation {g}: against {anchor}"),
                        quiet,
                    );
                    let seed = derive_seed(derive_seed(cfg.seed, ANCHOR_STREAM), g as u64);
                    let r = timed(&mut times.matches_wall, &mut times.matches_cpu, || {
                        play_from_random_openings(
                            players[0].as_ref(),
                            players[1].as_ref(),
                            cfg.anchors.games,
                            cfg.gate.random_plies,
                            size,
                            derive_seed(seed, k as u64),
                            &pb,
                        )
                    })?;
                    pb.finish_and_clear();
                    out.push(anchor_result(g, anchor, &r));
                }
                crate::report::write_json(&anchors_path, &out)?;
                crate::report::write_json(&timing_path, &times)?;
                out
            }
        };
        if !quiet {
            eprintln!(
                "generation {g}: gate {}-{}-{} against {} (score {:.3}, bound {:.3}): {}",
                gate.wins,
                gate.draws,
                gate.losses,
                gate.opponent,
                gate.score,
                gate.lower_bound,
                if gate.promoted {
                    "promoted"
                } else {
                    "kept the current network"
                }
            );
        }
        summary.gates.push(gate);
        summary.anchors.extend(anchors);
        summary.times.push(times);
        write_reports(dir, &summary)?;
    }
    Ok(summary)
}

/// A match from the standard start at `size` followed by `random_plies`
/// random moves (drawn from each game's stream), A first in even games.
fn play_from_random_openings<G: GameSupport>(
    a: &dyn crate::search::Player<G>,
    b: &dyn crate::search::Player<G>,
    games: usize,
    random_plies: u32,
    size: usize,
    seed: u64,
    pb: &indicatif::ProgressBar,
) -> Result<MatchResult, LoopError> {
    let start = StartConfig {
        size,
        ..StartConfig::standard::<G>()
    }
    .with_random_opening(random_plies as usize);
    let starter = start.starter::<G>();
    Ok(play_match_from(
        a,
        b,
        &starter,
        games,
        seed,
        None,
        Some(pb),
    )?)
}

/// The gate's decision on match `r` (the new network as A).
pub fn decide(g: u32, opponent: String, r: &MatchResult, margin: f64, z: f64) -> GateResult {
    let w = &r.total;
    let n = w.games().max(1) as f64;
    let s = w.score();
    let var = (w.wins as f64 * (1.0 - s).powi(2)
        + w.draws as f64 * (0.5 - s).powi(2)
        + w.losses as f64 * s.powi(2))
        / n;
    let lower_bound = s - z * (var / n).sqrt();
    GateResult {
        generation: g,
        opponent,
        wins: w.wins,
        draws: w.draws,
        losses: w.losses,
        score: s,
        lower_bound,
        promoted: s >= 0.5 + margin && lower_bound > 0.5,
    }
}

fn anchor_result(g: u32, anchor: &str, r: &MatchResult) -> AnchorResult {
    let w = &r.total;
    AnchorResult {
        generation: g,
        anchor: anchor.to_string(),
        wins: w.wins,
        draws: w.draws,
        losses: w.losses,
        score: w.score(),
    }
}

/// `generations.csv`, `elo.csv` and the Elo chart `elo.png`.
fn write_reports(dir: &Path, s: &LoopSummary) -> Result<(), LoopError> {
    s.table().write_csv(dir.join("generations.csv"))?;
    s.elo_table().write_csv(dir.join("elo.csv"))?;
    let mut chart = LineChart::new(
        "Elo of each generation's network against fixed anchors",
        "generation",
        "Elo over the anchor (clamped to +-800)",
    )
    .with_reference_line("even", 0.0);
    let mut names: Vec<&str> = s.anchors.iter().map(|a| a.anchor.as_str()).collect();
    names.dedup();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let points = s.anchors.iter().filter(|a| a.anchor == name).map(|a| {
            (
                a.generation as f64,
                a.elo().elo.clamp(-ELO_PLOT_LIMIT, ELO_PLOT_LIMIT),
            )
        });
        chart = chart.with_series(name, points);
    }
    chart.write_png(dir.join("elo.png"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_directory_has_one_writer_and_one_configuration() {
        let (_tmp, dir) = crate::util::scratch("loop");
        let cfg: LoopConfig = serde_json::from_str(r#"{"game": "connect-four"}"#).unwrap();
        let held = claim(&dir, &cfg).unwrap();
        let stored = std::fs::read_to_string(dir.join(CONFIG_FILE)).unwrap();
        assert!(stored.ends_with("}\n"), "{stored}");
        let e = claim(&dir, &cfg).unwrap_err().to_string();
        assert!(e.contains("another writer holds it"), "{e}");
        drop(held);
        // Resumed with the same configuration.
        drop(claim(&dir, &cfg).unwrap());
        let other = LoopConfig {
            seed: cfg.seed + 1,
            ..cfg.clone()
        };
        let e = claim(&dir, &other).unwrap_err().to_string();
        assert!(e.contains("`seed` was"), "{e}");
        // A field only one configuration has.
        let e = run_dir_error(RunDirError::Mismatch {
            path: dir.join(CONFIG_FILE),
            difference: crate::util::run_dir::Difference {
                field: "extra".into(),
                saved: None,
                given: Some(serde_json::json!(1)),
            },
        })
        .to_string();
        assert!(e.contains("`extra` was None, now Some(Number(1))"), "{e}");
    }
}
