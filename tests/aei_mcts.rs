//! `plies engine aei` with the search players and a checkpoint, as a
//! program: one short game of `mcts` (two threads, a seeded cnn3
//! checkpoint, a time limit per move) against pyrimaa's simple_engine,
//! run by pyrimaa's own controller (`scripts/aei_match.py`), and a bad
//! checkpoint refused before the engine answers anything.
//!
//! Python as in `tests/arimaa_aei.rs`: `$PLIES_ARIMAA_PYTHON`, else
//! `.venv-arimaa/bin/python`, else one made with pip; without any the
//! pyrimaa test prints a note and passes, unless `PLIES_REQUIRE_PYTHON=1`.

use plies::checkpoint::{self, CheckpointConfig, TrainingInfo};
use plies::model::{seeded_tensors, Cnn3Config, Cnn3NetConfig, InputShape, ModelConfig};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn install_venv(root: &Path) -> Option<PathBuf> {
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
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let found = [
        std::env::var_os("PLIES_ARIMAA_PYTHON").map(PathBuf::from),
        Some(root.join(".venv-arimaa/bin/python")),
    ]
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
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(&py)
        .arg(format!("{root}/scripts/aei_match.py"))
        .args(["--engine", env!("CARGO_BIN_EXE_plies")])
        .args(["--player", &player])
        .args(["--games", "1", "--seed", "7"])
        .args(["--tc", "2s/10s/100/20s", "--max-turns", "8"])
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
        "protocol problems: {}\nstderr:\n{stderr}",
        serde_json::to_string_pretty(&summary["errors"]).unwrap()
    );
    let r = &summary["results"][0];
    let reason = r["reason"].as_str().unwrap_or("none");
    assert!(["g", "e", "m", "limit"].contains(&reason), "{r}");
    // Two setups and at least a few moves, every one legal to pyrimaa.
    assert!(r["plies"].as_u64().unwrap() >= 6, "{r}");
    // time=0.2 bounds every move well inside the clock.
    let slowest = r["plies_move_seconds_max"].as_f64().unwrap();
    assert!(slowest < 1.5, "slowest move {slowest} s: {r}");
    eprintln!("{player}: {r}");
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
            "unknown setting 'evl' for mcts".to_string(),
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
