//! `plies engine aei` against the reference AEI controller: whole games
//! between the binary cargo built and pyrimaa's simple_engine, run by
//! pyrimaa's own EngineController and Game (`scripts/aei_match.py`).
//!
//! Python: `$PLIES_ARIMAA_PYTHON`, else `.venv-arimaa/bin/python` in the
//! crate root (`python3 -m venv .venv-arimaa && .venv-arimaa/bin/pip install
//! aei==1.4.1`; the tests do this themselves when neither exists). If that
//! fails too the tests print a note and pass, unless `PLIES_REQUIRE_PYTHON=1`
//! (as in CI), when they fail.
//!
//! Also: `mcts` with a seeded cnn3 checkpoint playing one short game the
//! same way, and bad checkpoints or specs refused before the engine answers.

use plies::checkpoint::{self, CheckpointConfig, TrainingInfo};
use plies::model::{seeded_tensors, Cnn3Config, Cnn3NetConfig, InputShape, ModelConfig};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Sets up `.venv-arimaa` with pip when no Python with pyrimaa exists yet, so
/// that `cargo test` on a fresh machine runs these tests too.
fn install_venv(root: &std::path::Path) -> Option<PathBuf> {
    let venv = root.join(".venv-arimaa");
    let ok = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "aei==1.4.1"])
            .status()
            .is_ok_and(|s| s.success());
    ok.then(|| venv.join("bin/python"))
}

fn python() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND.get_or_init(find_python).clone()
}

fn find_python() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        std::env::var_os("PLIES_ARIMAA_PYTHON").map(PathBuf::from),
        Some(root.join(".venv-arimaa/bin/python")),
    ];
    let found = candidates
        .into_iter()
        .flatten()
        .find(|p| p.exists())
        .or_else(|| install_venv(&root));
    if found.is_none() {
        let required = std::env::var("PLIES_REQUIRE_PYTHON").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "PLIES_REQUIRE_PYTHON=1 but no Python with pyrimaa: set PLIES_ARIMAA_PYTHON or run \
             `python3 -m venv .venv-arimaa && .venv-arimaa/bin/pip install aei==1.4.1`"
        );
        eprintln!("skipped: no Python with pyrimaa and pip could not install aei==1.4.1");
    }
    found
}

/// Runs the match script and returns its JSON summary, failing on any
/// protocol problem it reports.
fn play(python: &PathBuf, player: &str, games: u32, extra: &[&str]) -> serde_json::Value {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(python)
        .arg(format!("{root}/scripts/aei_match.py"))
        .args(["--engine", env!("CARGO_BIN_EXE_plies")])
        .args(["--player", player])
        .args(["--games", &games.to_string()])
        .args(["--seed", "7"])
        .args(extra)
        .current_dir(root)
        .output()
        .expect("run the match script");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON from aei_match.py ({e}); status {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            out.status
        )
    });
    assert!(
        out.status.success() && summary["ok"] == true,
        "protocol problems with {player}: {}\nstderr:\n{stderr}",
        serde_json::to_string_pretty(&summary["errors"]).unwrap()
    );
    assert_eq!(summary["games"], games);
    let results = summary["results"].as_array().unwrap();
    assert_eq!(results.len(), games as usize);
    for r in results {
        let reason = r["reason"].as_str().unwrap_or("none");
        assert!(
            ["g", "e", "m", "limit"].contains(&reason),
            "game {} ended by '{reason}': {r}",
            r["game"]
        );
        // Two setups and at least one move each.
        assert!(r["plies"].as_u64().unwrap() >= 4, "{r}");
    }
    eprintln!(
        "{player}: wins {} reasons {} plies {:?}",
        summary["wins"],
        summary["reasons"],
        results
            .iter()
            .map(|r| r["plies"].as_u64().unwrap())
            .collect::<Vec<_>>()
    );
    summary
}

#[test]
fn random_plays_whole_games_against_simple_engine() {
    let Some(py) = python() else { return };
    let summary = play(&py, "random", 2, &[]);
    // Colours alternate.
    let sides: Vec<&str> = summary["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["plies_side"].as_str().unwrap())
        .collect();
    assert_eq!(sides, ["g", "s"]);
}

#[test]
fn alphabeta_plays_a_whole_game_within_its_time() {
    let Some(py) = python() else { return };
    // 2 s a move and a 10 s reserve from the controller; the spec caps the
    // thought at 0.2 s.
    let summary = play(
        &py,
        "alphabeta:time=0.2",
        1,
        &["--tc", "2s/10s/100/20s", "--max-turns", "150"],
    );
    let r = &summary["results"][0];
    let slowest = r["plies_move_seconds_max"].as_f64().unwrap();
    assert!(slowest < 1.5, "slowest move {slowest} s: {r}");
}

#[test]
fn the_default_player_plays_a_whole_game_inside_the_clock() {
    let Some(py) = python() else { return };
    // No --player: alpha-beta on the shipped table, at 2 s a move, the
    // clock the engine ladder chose it at. What a turn leaves of its 2 s
    // goes to a reserve of at most 10 s, which the engine may spend where
    // its search finds the position critical; the controller ends the game
    // on time if a move overruns (`play` refuses any such ending).
    let summary = play(&py, "", 1, &["--tc", "2s/0s/100/10s", "--max-turns", "40"]);
    let r = &summary["results"][0];
    let slowest = r["plies_move_seconds_max"].as_f64().unwrap();
    let mean = r["plies_move_seconds_mean"].as_f64().unwrap();
    assert!(slowest < 12.0, "slowest move {slowest} s: {r}");
    // Most turns spend about their own time, well inside 2 s.
    assert!(mean < 2.0, "mean move {mean} s: {r}");
}

/// A seeded (untrained) cnn3 for Arimaa's `arimaa-6x8x8` planes in `dir`.
fn cnn3_checkpoint(dir: &Path) -> String {
    let encoder = plies::encode::arimaa_encoder("arimaa-6x8x8")
        .unwrap()
        .spec();
    let model = ModelConfig::Cnn3(Cnn3NetConfig::new(
        InputShape::new(encoder.shape, encoder.globals),
        Cnn3Config::default(),
    ));
    let tensors = seeded_tensors(
        &model,
        &mut plies::util::seeded_rng(5, 0),
        &candle_core::Device::Cpu,
    )
    .unwrap();
    let ck = CheckpointConfig::new("arimaa", encoder, model, TrainingInfo::default());
    checkpoint::save(dir, &ck, &tensors).unwrap();
    dir.display().to_string()
}

#[test]
fn mcts_with_a_checkpoint_plays_simple_engine_through_pyrimaa() {
    let Some(py) = python() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cnn = cnn3_checkpoint(&tmp.path().join("cnn3"));
    let player = format!("mcts:time=0.2,threads=2,eval=ckpt:{cnn}");
    let extra = ["--tc", "2s/10s/100/20s", "--max-turns", "8"];
    let summary = play(&py, &player, 1, &extra);
    let r = &summary["results"][0];
    assert!(r["plies"].as_u64().unwrap() >= 6, "{r}");
    // time=0.2 bounds every move well inside the clock.
    let slowest = r["plies_move_seconds_max"].as_f64().unwrap();
    assert!(slowest < 1.5, "slowest move {slowest} s: {r}");
}

#[test]
fn a_bad_checkpoint_is_refused_before_the_engine_answers() {
    for (spec, why) in [
        (
            "mcts:sims=10,eval=ckpt:/no/such/checkpoint".to_string(),
            "/no/such/checkpoint".to_string(),
        ),
        (
            format!(
                "greedy:eval=ckpt:{}/checkpoints/tictactoe-mlp80-td",
                env!("CARGO_MANIFEST_DIR")
            ),
            "for game 'tictactoe', not 'arimaa'".to_string(),
        ),
        (
            "mcts:sims=10,evl=material".to_string(),
            "unknown option 'evl' for mcts".to_string(),
        ),
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_plies"))
            .args(["engine", "aei", "--player", &spec])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The engine may be gone before it reads this.
        let _ = child.stdin.take().unwrap().write_all(b"aei\nisready\n");
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{spec}: {stderr}");
        assert!(out.stdout.is_empty(), "{spec}: {:?}", out.stdout);
        assert!(
            stderr.contains(&spec) && stderr.contains(&why),
            "{spec}: {stderr}"
        );
    }
}

/// The setup the engine answers a new game with.
fn engine_setup(seed: Option<u64>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_plies"));
    cmd.args(["engine", "aei", "--player", "random"]);
    if let Some(s) = seed {
        cmd.args(["--seed", &s.to_string()]);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"aei\nnewgame\ngo\nquit\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        seed.is_none(),
        stderr.contains("replays this session"),
        "{stderr}"
    );
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("bestmove "))
        .unwrap_or_else(|| panic!("no bestmove: {stdout}"))
        .to_string()
}

#[test]
fn each_session_without_a_seed_gets_its_own_random_setup() {
    let drawn: std::collections::HashSet<String> = (0..4).map(|_| engine_setup(None)).collect();
    // Four uniform setups out of 64,864,800 all equal by chance: never.
    assert!(drawn.len() > 1, "{drawn:?}");
    assert_eq!(engine_setup(Some(5)), engine_setup(Some(5)));
}
