//! `plies train` killed (SIGKILL) at arbitrary moments and resumed ends with
//! exactly the weights of an uninterrupted run.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn plies() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plies"));
    // Same thread counts in every run: candle's matrix products split work
    // by thread count.
    c.env("RAYON_NUM_THREADS", "2")
        .env("CANDLE_NUM_THREADS", "1");
    c
}

fn dataset(dir: &Path) -> PathBuf {
    let out = dir.join("selfplay");
    let o = plies()
        .args(["selfplay", "--game", "arimaa", "--white", "random-steps"])
        .args(["--black", "random-steps", "--games", "300", "--seed", "5"])
        .args(["--dataset", "arimaa-6x8x8", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::text(&o));
    out.join("dataset")
}

fn train_args(data: &Path, model: &Path, out: &Path) -> Vec<String> {
    [
        "train",
        "--data",
        &data.display().to_string(),
        "--model",
        &model.display().to_string(),
        "--out",
        &out.display().to_string(),
        "--optimizer",
        "nesterov",
        "--lr",
        "0.02",
        "--l2",
        "0.0001",
        "--clip",
        "5",
        "--schedule",
        "cosine",
        "--epochs",
        "3",
        "--batch",
        "32",
        "--buffer-rows",
        "4096",
        "--save-every",
        "37",
        "--seed",
        "11",
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn step_of(out: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(out.join("run-state/state.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["step"].as_u64()
}

/// Starts a run and kills it once its saved step has passed `after`;
/// returns the step it was killed at, or None when it finished first.
fn run_and_kill(args: &[String], out: &Path, after: u64) -> Option<u64> {
    let mut child = plies()
        .args(args)
        .arg("--resume")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        if let Some(s) = step_of(out) {
            if s > after {
                child.kill().unwrap();
                child.wait().unwrap();
                return Some(s);
            }
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        assert!(t0.elapsed() < Duration::from_secs(300), "run hangs");
        std::thread::sleep(Duration::from_micros(300));
    }
}

/// Writes a model config `name` into `dir`.
fn model_file(dir: &Path, name: &str, json: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, json).unwrap();
    path
}

/// Trains without interruption into `out`; returns the final weights.
fn train_straight(data: &Path, model: &Path, out: &Path) -> Vec<u8> {
    let o = plies().args(train_args(data, model, out)).output().unwrap();
    assert!(o.status.success(), "{}", common::text(&o));
    std::fs::read(out.join("model.safetensors")).unwrap()
}

/// Kills a run at several points (mid-epoch and around epoch ends) until
/// it finishes; returns the steps it was killed at.
fn kill_until_done(args: &[String], out: &Path, total: u64) -> Vec<u64> {
    let mut kills = Vec::new();
    let mut after = 0;
    while let Some(s) = run_and_kill(args, out, after) {
        kills.push(s);
        after = s + total / 5;
        assert!(kills.len() < 20, "never finishes: {kills:?}");
    }
    assert!(!kills.is_empty(), "the run was never killed");
    kills
}

/// The residual net's training path (the fused block, batch-norm running
/// statistics saved with the weights) resumes exactly too.
#[test]
fn a_killed_residual_net_run_resumes_to_the_same_weights() {
    killed_residual_net_resumes(2, 16, &[]);
}

/// bf16 mixed precision resumes exactly: the run state holds the f32
/// masters, and the bf16 copies are refreshed from them every step. (A
/// smaller net: bf16 runs candle's stock ops on the CPU, several times
/// slower than the f32 kernels.)
#[test]
fn a_killed_bf16_run_resumes_to_the_same_weights() {
    killed_residual_net_resumes(1, 8, &["--precision", "bf16"]);
}

/// A residual net of `blocks` x `channels` trained straight and trained
/// killed and resumed, with `extra` flags, end with the same weights.
fn killed_residual_net_resumes(blocks: usize, channels: usize, extra: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset(tmp.path());
    let model = model_file(
        tmp.path(),
        "resnet.json",
        &format!(
            r#"{{"kind": "resnet", "blocks": {blocks}, "channels": {channels}, "value_hidden": 16}}"#
        ),
    );
    let args = |out: &Path| {
        let mut a = train_args(&data, &model, out);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let straight = tmp.path().join("straight");
    let o = plies().args(args(&straight)).output().unwrap();
    assert!(o.status.success(), "{}", common::text(&o));
    let want = std::fs::read(straight.join("model.safetensors")).unwrap();
    let total = step_of(&straight).unwrap();
    let killed = tmp.path().join("killed");
    let kills = kill_until_done(&args(&killed), &killed, total);
    let got = std::fs::read(killed.join("model.safetensors")).unwrap();
    assert!(
        got == want,
        "resumed weights differ {extra:?} (killed at steps {kills:?})"
    );
}

#[test]
fn a_killed_run_resumes_to_the_same_weights() {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset(tmp.path());
    let model = model_file(
        tmp.path(),
        "cnn3.json",
        r#"{"kind": "cnn3", "filters": 16, "kernel": [4, 4], "hidden": 32, "output": "sigmoid"}"#,
    );
    let straight = tmp.path().join("straight");
    let want = train_straight(&data, &model, &straight);
    let total = step_of(&straight).unwrap();

    let killed = tmp.path().join("killed");
    let args = train_args(&data, &model, &killed);
    let kills = kill_until_done(&args, &killed, total);
    let got = std::fs::read(killed.join("model.safetensors")).unwrap();
    assert!(
        got == want,
        "resumed weights differ (killed at steps {kills:?})"
    );
    assert_eq!(step_of(&killed), Some(total));
    let best_a = std::fs::read(straight.join("best/model.safetensors")).unwrap();
    let best_b = std::fs::read(killed.join("best/model.safetensors")).unwrap();
    assert!(best_a == best_b, "best checkpoints differ");
    let lines = |d: &Path| {
        std::fs::read_to_string(d.join("metrics.jsonl"))
            .unwrap()
            .lines()
            .count()
    };
    assert_eq!(lines(&killed), 3);
    assert_eq!(lines(&straight), 3);
    eprintln!("killed at steps {kills:?} of {total}");

    // A finished run resumed again does nothing and keeps the weights.
    let o = plies().args(&args).arg("--resume").output().unwrap();
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(std::fs::read(killed.join("model.safetensors")).unwrap() == want);

    // Other arguments on resume are refused, naming the field.
    let mut other = args.clone();
    let i = other.iter().position(|a| a == "0.02").unwrap();
    other[i] = "0.03".into();
    let o = plies().args(&other).arg("--resume").output().unwrap();
    assert!(!o.status.success());
    let t = common::text(&o);
    assert!(t.contains("optimizer.lr") && t.contains("0.02"), "{t}");

    // Without --resume (or --overwrite) an existing run is not replaced.
    let o = plies().args(&args).output().unwrap();
    assert!(!o.status.success());
    assert!(
        common::text(&o).contains("--resume"),
        "{}",
        common::text(&o)
    );
}

#[test]
fn a_killed_run_with_dropout_repeats_and_resumes_to_the_same_weights() {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset(tmp.path());
    let model = model_file(
        tmp.path(),
        "cnn3-dropout.json",
        r#"{"kind": "cnn3", "filters": 8, "kernel": [4, 4], "hidden": 16, "dropout": 0.3}"#,
    );
    let a = tmp.path().join("a");
    let want = train_straight(&data, &model, &a);
    assert!(
        train_straight(&data, &model, &tmp.path().join("b")) == want,
        "two runs with dropout differ"
    );
    let total = step_of(&a).unwrap();

    let killed = tmp.path().join("killed");
    let kills = kill_until_done(&train_args(&data, &model, &killed), &killed, total);
    assert!(
        std::fs::read(killed.join("model.safetensors")).unwrap() == want,
        "resumed weights with dropout differ (killed at steps {kills:?})"
    );

    // Dropout changes the training (the masks are not all ones).
    let plain = model_file(
        tmp.path(),
        "plain.json",
        r#"{"kind": "cnn3", "filters": 8, "kernel": [4, 4], "hidden": 16}"#,
    );
    assert!(train_straight(&data, &plain, &tmp.path().join("plain")) != want);
}
