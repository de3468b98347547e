//! `plies experiment mdrnn`, `pentago` and `ttt` on tiny budgets: each is
//! run once uninterrupted, then again in another folder killed (SIGKILL)
//! at a few points spread over the run and rerun to completion; both
//! folders must end with the same result files, timings left out.
#![cfg(unix)]

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

mod common;
use common::{delays, files_under, text};

/// `plies experiment ARGS --out out` run in `dir`: the relative folder
/// keeps the paths the reports hold the same in both runs.
fn experiment(dir: &Path, args: &[&str]) -> Command {
    std::fs::create_dir_all(dir).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_plies"));
    c.current_dir(dir)
        .env("RAYON_NUM_THREADS", "2")
        .env("CANDLE_NUM_THREADS", "1")
        .arg("experiment")
        .args(args)
        .args(["--quiet", "--out", "out"]);
    c
}

/// Runs to the end and says how long it took, in milliseconds.
fn timed(dir: &Path, args: &[&str]) -> u64 {
    let t = Instant::now();
    let o = experiment(dir, args).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    (t.elapsed().as_millis() as u64).max(8)
}

/// `json` without its `seconds` fields (wall-clock times).
fn without_seconds(json: &mut Value) {
    match json {
        Value::Object(m) => {
            m.remove("seconds");
            m.values_mut().for_each(without_seconds);
        }
        Value::Array(v) => v.iter_mut().for_each(without_seconds),
        _ => {}
    }
}

/// `csv` without its `seconds` column (wall-clock times).
fn csv_without_seconds(csv: &str) -> Vec<Vec<String>> {
    let rows: Vec<Vec<String>> = csv
        .lines()
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    let timed = rows
        .first()
        .and_then(|h| h.iter().position(|c| c == "seconds"));
    rows.into_iter()
        .map(|mut r| {
            if let Some(i) = timed {
                if i < r.len() {
                    r.remove(i);
                }
            }
            r
        })
        .collect()
}

/// A result file's contents, timings left out.
#[derive(Debug, PartialEq)]
enum Contents {
    Json(Value),
    Csv(Vec<Vec<String>>),
    Text(String),
}

/// The result files (JSON, CSV, text) under `out`, timings left out; the
/// hidden files (locks, temporaries, staging folders) are not results.
fn results(out: &Path) -> Vec<(std::path::PathBuf, Contents)> {
    let visible = |name: &str| !name.starts_with('.');
    let result =
        |name: &str| visible(name) && [".json", ".csv", ".txt"].iter().any(|e| name.ends_with(e));
    files_under(out, &visible, &result)
        .into_iter()
        .map(|(rel, path)| {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let name = rel.to_string_lossy();
            let contents = if name.ends_with(".json") {
                let mut v: Value = serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                without_seconds(&mut v);
                Contents::Json(v)
            } else if name.ends_with(".csv") {
                Contents::Csv(csv_without_seconds(&text))
            } else {
                Contents::Text(text)
            };
            (rel, contents)
        })
        .collect()
}

/// The hidden entries (locks, temporaries, staging folders) under `dir`.
fn hidden_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_name().to_string_lossy().starts_with('.') {
            found.push(p.display().to_string());
        } else if p.is_dir() {
            found.extend(hidden_under(&p));
        }
    }
    found
}

/// How the job picks up after a kill.
#[derive(Clone, Copy)]
enum Restart {
    /// Where the last run was cut: each kill comes after an eighth to three
    /// eighths of a whole run's time, so three kills fall over the run.
    Resumes,
    /// From the beginning: the kills come in the first, second and last
    /// third of the run.
    StartsOver,
}

/// Runs `args` uninterrupted in `ROOT/whole`, then in `ROOT/killed` killed
/// at three points and once more to the end; the two folders must hold
/// the same results, and nothing a kill left behind may remain.
fn killed_and_rerun_ends_as_uninterrupted(args: &[&str], restart: Restart, seed: u64) {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let took = timed(&whole, args);
    let killed = tmp.path().join("killed");
    let at: Vec<u64> = match restart {
        Restart::Resumes => delays(seed, 3, took / 4)
            .into_iter()
            .map(|ms| took / 8 + ms)
            .collect(),
        Restart::StartsOver => delays(seed, 3, took / 3)
            .into_iter()
            .zip(0..)
            .map(|(ms, third)| third * took / 3 + ms)
            .collect(),
    };
    for ms in at {
        common::kill_after(experiment(&killed, args), ms);
    }
    timed(&killed, args);
    let (a, b) = (results(&whole.join("out")), results(&killed.join("out")));
    let names = |r: &[(std::path::PathBuf, Contents)]| -> Vec<String> {
        r.iter()
            .map(|(p, _)| p.display().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&b), names(&a), "the result files after kills");
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert_eq!(y, x, "{} after kills", name.display());
    }
    // No lock, temporary file or half-built replacement is left.
    let left = hidden_under(&killed);
    assert!(left.is_empty(), "left after the rerun: {left:?}");
}

#[test]
fn mdrnn_killed_and_rerun_ends_as_an_uninterrupted_run() {
    killed_and_rerun_ends_as_uninterrupted(
        &[
            "mdrnn",
            "--games",
            "atari-go",
            "--train-sizes",
            "5",
            "--eval-sizes",
            "5,7",
            "--es-generations",
            "25",
            "--bootstrap-size",
            "7",
            "--bootstrap-generations",
            "6",
            "--coevolve-generations",
            "10",
            "--fitness-games",
            "4",
            "--population",
            "4",
            "--eval-games",
            "40",
            "--threads",
            "2",
        ],
        Restart::Resumes,
        11,
    );
}

#[test]
fn pentago_killed_and_rerun_ends_as_an_uninterrupted_run() {
    killed_and_rerun_ends_as_uninterrupted(
        &[
            "pentago",
            "--games",
            "20",
            "--mdp-games",
            "1000",
            "--buckets",
            "300",
            "--curve-every",
            "250",
            "--curve-games",
            "10",
            "--perturb-iterations",
            "40",
            "--spsa-iterations",
            "30",
            "--mcts-sims",
            "30",
            "--threads",
            "2",
        ],
        Restart::Resumes,
        12,
    );
}

#[test]
fn ttt_killed_and_rerun_ends_as_an_uninterrupted_run() {
    killed_and_rerun_ends_as_uninterrupted(
        &[
            "ttt",
            "--exp",
            "2",
            "--hidden",
            "10,20",
            "--sims",
            "2",
            "--db-games",
            "10000",
            "--examples",
            "20000",
            "--eval-every",
            "5000",
            "--eval-games",
            "300",
        ],
        Restart::StartsOver,
        13,
    );
}
