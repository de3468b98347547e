//! The generations of a loop, each stage resumable: a stage whose output
//! is complete is skipped, one cut short by a kill starts again (self-play,
//! the replay window, the gate, the anchors) or resumes (training).
//!
//! ```text
//! DIR/loop.json                   the configuration (a resume must match it, but for `generations`)
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

mod network;
mod stages;
mod summary;

pub use network::{LoopPlayer, Network};
pub use summary::{decide, AnchorResult, GateResult, LoopSummary, StageTimes};

use super::{LoopConfig, LoopError};
use crate::arena::{play_match_from, MatchResult, StartConfig};
use crate::games::GameSupport;
use crate::search::game_player::PlayerContext;
use crate::util::run_dir::{check_fingerprint_except, Depth, JsonLayout, RunDir, RunDirError};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use summary::write_reports;

/// The configuration file in a loop directory.
pub const CONFIG_FILE: &str = "loop.json";

/// Seed streams of the stages.
const SELFPLAY_STREAM: u64 = 0x7365_6c66;
const TRAIN_STREAM: u64 = 0x7472_6169;
const GATE_STREAM: u64 = 0x6761_7465;
const ANCHOR_STREAM: u64 = 0x616e_6368;

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
/// checks it against the configuration there (all but `generations`),
/// naming the first field that differs.
fn claim(dir: &Path, cfg: &LoopConfig) -> Result<RunDir, LoopError> {
    let path = dir.join(CONFIG_FILE);
    let now = serde_json::to_value(cfg).map_err(|e| LoopError::Config {
        path: path.clone(),
        why: e.to_string(),
    })?;
    let run_dir = RunDir::claim(dir).map_err(run_dir_error)?;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    // A generation depends on the ones before it, not on how many follow:
    // a loop may be resumed to run more generations (or stop sooner).
    check_fingerprint_except(
        &path,
        &now,
        Depth::Nested,
        JsonLayout::PrettyLine,
        &["generations"],
    )
    .map_err(run_dir_error)?;
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

/// What every stage of a loop shares.
struct Loop<'a, G: GameSupport> {
    dir: &'a Path,
    cfg: &'a LoopConfig,
    quiet: bool,
    size: usize,
    device: candle_core::Device,
    ctx: PlayerContext,
    encoder: Arc<dyn crate::encode::Encoder<G>>,
    /// What plays self-play and the gate until a network is promoted.
    bootstrap: LoopPlayer<G>,
    /// Whether the bootstrap was named in the configuration (it then
    /// plays self-play as itself, not as the bootstrap search).
    bootstrap_named: bool,
}

/// Runs (or resumes) the loop `cfg` in `dir`.
pub fn run_loop<G: GameSupport>(
    dir: &Path,
    cfg: &LoopConfig,
    quiet: bool,
) -> Result<LoopSummary, LoopError> {
    let run = Loop::<G>::prepare(dir, cfg, quiet)?;
    // Held until the loop returns: one writer per loop directory.
    let _run_dir = claim(dir, cfg)?;
    let mut summary = LoopSummary {
        gates: Vec::new(),
        anchors: Vec::new(),
        times: Vec::new(),
        best: None,
    };
    // The current network: the last one its gate promoted.
    let mut best: Option<Network<G>> = None;
    for g in 0..cfg.generations {
        let gdir = generation_dir(dir, g);
        std::fs::create_dir_all(&gdir).map_err(io(&gdir))?;
        let timing_path = gdir.join("timing.json");
        let mut times: StageTimes = read_json(&timing_path)?.unwrap_or_default();
        run.selfplay(g, best.as_ref(), &mut times)?;
        let window = run.window(g)?;
        let net = run.train(g, &window, &mut times)?;
        let gate = run.gate(g, &net, best.as_ref(), &mut times)?;
        let anchors = run.anchors(g, &net, &mut times)?;
        if gate.promoted {
            summary.best = Some(net.path.clone());
            best = Some(net);
        }
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
