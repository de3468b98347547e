//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// Runs the `plies` binary cargo built.
pub fn plies(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plies"))
        .args(args)
        .output()
        .expect("run plies")
}

/// The `arimaa-6x8x8` dataset of `games` Arimaa self-play games between
/// the player specs `white` and `black` (`extra`: more `plies selfplay`
/// flags), made under `dir/selfplay`; its path.
pub fn arimaa_selfplay_dataset(
    dir: &Path,
    [white, black]: [&str; 2],
    games: u32,
    seed: u64,
    extra: &[&str],
) -> PathBuf {
    let out = dir.join("selfplay");
    let (games, seed) = (games.to_string(), seed.to_string());
    let mut args = vec![
        "selfplay",
        "--game",
        "arimaa",
        "--white",
        white,
        "--black",
        black,
        "--games",
        &games,
        "--seed",
        &seed,
        "--dataset",
        "arimaa-6x8x8",
    ];
    args.extend_from_slice(extra);
    args.extend(["--out", out.to_str().expect("a UTF-8 path")]);
    let o = plies(&args);
    assert!(o.status.success(), "{}", text(&o));
    out.join("dataset")
}

/// stdout and stderr together.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `tests/fixtures/STEM.jsonl`, unpacked into `dir` first when only
/// `STEM.jsonl.gz` is stored (fixtures over ~3 MB are kept gzipped).
pub fn oracle_fixture(stem: &str, dir: &Path) -> PathBuf {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let plain = base.join(format!("{stem}.jsonl"));
    if plain.exists() {
        return plain;
    }
    let gz = base.join(format!("{stem}.jsonl.gz"));
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(&gz)
        .output()
        .unwrap_or_else(|e| panic!("gzip -dc {}: {e}", gz.display()));
    assert!(out.status.success(), "gzip -dc {} failed", gz.display());
    let path = dir.join(format!("{stem}.jsonl"));
    std::fs::write(&path, out.stdout).unwrap();
    path
}

/// A Python environment a test needs: `env_var` names an interpreter,
/// else `venv` (under the crate root) is used, created with pip and the
/// `packages` when missing; `import` is the check that it works.
pub struct PythonEnv {
    pub env_var: &'static str,
    pub venv: &'static str,
    pub import: &'static str,
    pub packages: &'static [&'static str],
}

impl PythonEnv {
    fn works(&self, python: &Path) -> bool {
        Command::new(python)
            .args(["-c", &format!("import {}", self.import)])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn install(&self, root: &Path) -> Option<PathBuf> {
        let venv = root.join(self.venv);
        let python = venv.join("bin/python");
        let ok = (python.exists()
            || Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .status()
                .is_ok_and(|s| s.success()))
            && Command::new(venv.join("bin/pip"))
                .args(["install", "--quiet"])
                .args(self.packages)
                .status()
                .is_ok_and(|s| s.success());
        (ok && self.works(&python)).then_some(python)
    }

    /// The interpreter, or `None` (with a note) when none can be had;
    /// with `PLIES_REQUIRE_PYTHON=1` (CI) that is a failure instead.
    pub fn find(&self) -> Option<PathBuf> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let candidates = [
            std::env::var_os(self.env_var).map(PathBuf::from),
            Some(root.join(self.venv).join("bin/python")),
        ];
        let found = candidates
            .into_iter()
            .flatten()
            .find(|p| p.exists() && self.works(p))
            .or_else(|| self.install(&root));
        if found.is_none() {
            let required = std::env::var("PLIES_REQUIRE_PYTHON").is_ok_and(|v| v == "1");
            let how = format!(
                "set {} or run `python3 -m venv {v} && {v}/bin/pip install {}`",
                self.env_var,
                self.packages.join(" "),
                v = self.venv
            );
            assert!(
                !required,
                "PLIES_REQUIRE_PYTHON=1 but no Python that can import {}: {how}",
                self.import
            );
            eprintln!(
                "skipped: no Python that can import {}, and pip could not install it ({how})",
                self.import
            );
        }
        found
    }
}

/// Seeded delays in milliseconds below `max` (SplitMix64).
pub fn delays(seed: u64, n: usize, max: u64) -> Vec<u64> {
    let mut z = seed;
    (0..n)
        .map(|_| {
            z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut x = z;
            x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (x ^ (x >> 31)) % max
        })
        .collect()
}

/// Starts `cmd` with its output discarded and SIGKILLs it after `ms`
/// milliseconds, if it is still running.
pub fn kill_after(mut cmd: Command, ms: u64) {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start plies");
    std::thread::sleep(Duration::from_millis(ms));
    let _ = child.kill();
    child.wait().expect("wait for plies");
}

/// The files under `dir` (in folders whose name satisfies `enter`) whose
/// name satisfies `keep`, as (path relative to `dir`, path), sorted: what
/// the kill tests compare between a killed run and an uninterrupted one.
pub fn files_under(
    dir: &Path,
    enter: &dyn Fn(&str) -> bool,
    keep: &dyn Fn(&str) -> bool,
) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if enter(&name) {
                    stack.push(p);
                }
            } else if keep(&name) {
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), p));
            }
        }
    }
    out.sort();
    out
}

/// The moves of a uniformly random game of `G` on its `size` board, from
/// `seeded_rng(seed, 0)`, stopped after `max_plies`, and how it ended
/// (`None`: cut short).
pub fn random_game<G: plies::game::Game>(
    size: usize,
    seed: u64,
    max_plies: usize,
) -> (Vec<String>, Option<plies::game::Outcome>) {
    let mut g = G::with_size(size).unwrap();
    let mut rng = plies::util::seeded_rng(seed, 0);
    let (mut scratch, mut moves) = (Vec::new(), Vec::new());
    while g.outcome().is_none() && moves.len() < max_plies {
        let Some(mv) = g.random_move(&mut rng, &mut scratch) else {
            break;
        };
        moves.push(g.move_to_string(mv));
        g.play(mv);
    }
    (moves, g.outcome())
}

/// `plies loop --game GAME --quiet` with the configuration file `config`
/// into `out`, on two threads.
pub fn run_loop(game: &str, config: &Path, out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plies"))
        .env("RAYON_NUM_THREADS", "2")
        .env("CANDLE_NUM_THREADS", "1")
        .args(["loop", "--game", game, "--quiet", "--config"])
        .arg(config)
        .arg("--out")
        .arg(out)
        .output()
        .expect("run plies loop")
}

/// A `plies` process talking over pipes: what the engine tests drive.
pub struct Piped {
    pub child: Child,
    pub stdin: ChildStdin,
    /// Its stdout lines (lossy UTF-8, line ends stripped), each stamped
    /// with the instant the reader saw it; a reader thread fills it, so a
    /// test waits with a timeout instead of hanging on a silent engine.
    pub lines: Receiver<(Instant, String)>,
}

/// Spawns `plies ARGS` (with whatever `configure` sets: environment,
/// stderr) with stdin and stdout piped.
pub fn spawn_piped(args: &[&str], configure: impl FnOnce(&mut Command)) -> Piped {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_plies"));
    cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped());
    configure(&mut cmd);
    let mut child = cmd.spawn().expect("spawn plies");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).split(b'\n') {
            let Ok(line) = line else { break };
            let at = Instant::now();
            let text = String::from_utf8_lossy(&line);
            let text = text.strip_suffix('\r').unwrap_or(&text).to_string();
            if tx.send((at, text)).is_err() {
                break;
            }
        }
    });
    Piped {
        child,
        stdin,
        lines,
    }
}
