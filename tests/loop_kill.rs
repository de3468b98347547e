//! `plies loop` killed at seeded random instants and resumed ends with the
//! bytes of an uninterrupted run (datasets with policy targets, networks,
//! gates, ratings); the datasets hold policy targets that are visit shares.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{delays, text};
use plies::dataset::Dataset;

fn plies() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plies"));
    c.env("RAYON_NUM_THREADS", "2")
        .env("CANDLE_NUM_THREADS", "1");
    c
}

fn args(config: &Path, out: &Path) -> Vec<String> {
    [
        "loop",
        "--game",
        "tictactoe",
        "--quiet",
        "--config",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// A loop small enough for CI: two generations of Tic-tac-toe.
const CONFIG: &str = r#"{
  "game": "tictactoe",
  "generations": 2,
  "window": 2,
  "seed": 5,
  "threads": 2,
  "selfplay": { "games": 24, "sims": 24, "bootstrap_sims": 48, "temperature_plies": 3 },
  "train": { "model": "resnet-tiny", "epochs": 2, "batch": 32 },
  "gate": { "games": 6, "sims": 24 },
  "anchors": { "players": ["random"], "games": 4 }
}"#;

/// Every file whose bytes a run with the same seed must reproduce: all but
/// the timings and what shows them (the tables, the trainer's metrics, and
/// a checkpoint's card and config, which record its epochs' seconds).
fn outputs(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    // The trainer's resumable state (and its swap) is not an output.
    let enter = |name: &str| !name.starts_with("run-state");
    let keep = |name: &str| {
        !(name == "timing.json"
            || name == "generations.csv"
            || name.ends_with(".lock")
            || name.starts_with('.')
            || name == "metrics.csv"
            || name == "metrics.jsonl"
            || name == "README.md"
            || name == "config.json")
    };
    common::files_under(dir, &enter, &keep)
        .into_iter()
        .map(|(rel, p)| {
            let mut bytes = std::fs::read(&p).unwrap();
            // The window's manifest names its sources by path.
            if p.extension().is_some_and(|e| e == "json") {
                let text = String::from_utf8(bytes).unwrap();
                bytes = text.replace(dir.to_str().unwrap(), "DIR").into_bytes();
            }
            (rel, bytes)
        })
        .collect()
}

#[test]
fn a_killed_loop_resumes_to_the_bytes_of_an_uninterrupted_one() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("loop.json");
    std::fs::write(&config, CONFIG).unwrap();
    let whole = tmp.path().join("whole");
    let o = plies().args(args(&config, &whole)).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));

    // Policy targets: the root's visit shares, one per searched position.
    let data = Dataset::open(whole.join("gen-001/data")).unwrap();
    data.verify().unwrap();
    let rows = data.rows(None).unwrap();
    let with_policy = rows.iter().filter(|r| r.policy.is_some()).count();
    let with_move = rows.iter().filter(|r| r.move_played.is_some()).count();
    assert_eq!(
        with_policy, with_move,
        "every searched position has a target"
    );
    for r in rows.iter().filter_map(|r| r.policy.as_ref()) {
        assert!(r.index.iter().all(|&i| i < 9));
        assert!((r.prob.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    }
    for f in [
        "elo.csv",
        "elo.png",
        "gen-001/net/model.safetensors",
        "gen-001/net/README.md",
    ] {
        assert!(whole.join(f).exists(), "{f}");
    }

    let killed = tmp.path().join("killed");
    for ms in delays(21, 5, 1200) {
        let mut c = plies();
        c.args(args(&config, &killed));
        common::kill_after(c, 50 + ms);
    }
    let o = plies().args(args(&config, &killed)).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let (a, b) = (outputs(&whole), outputs(&killed));
    let names = |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b));
    for ((p, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{} differs after kills", p.display());
    }

    // Another configuration on the same directory is refused by name.
    std::fs::write(&config, CONFIG.replace("\"seed\": 5", "\"seed\": 6")).unwrap();
    let o = plies().args(args(&config, &killed)).output().unwrap();
    assert!(!o.status.success());
    assert!(text(&o).contains("`seed`"), "{}", text(&o));
}

/// A loop resumed with more generations than it was started with goes on
/// from where it stopped and ends with the bytes of a loop run that long
/// from the start; its stored configuration then holds the new count.
#[test]
fn a_loop_resumed_for_more_generations_ends_as_one_run_that_long() {
    let tmp = tempfile::tempdir().unwrap();
    let two = tmp.path().join("two.json");
    std::fs::write(&two, CONFIG).unwrap();
    let one = tmp.path().join("one.json");
    std::fs::write(
        &one,
        CONFIG.replace("\"generations\": 2", "\"generations\": 1"),
    )
    .unwrap();
    let whole = tmp.path().join("whole");
    let o = plies().args(args(&two, &whole)).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));

    let grown = tmp.path().join("grown");
    let o = plies().args(args(&one, &grown)).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(!grown.join("gen-001").exists());
    let o = plies().args(args(&two, &grown)).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let (a, b) = (outputs(&whole), outputs(&grown));
    let names = |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b));
    for ((p, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{} differs after growing the loop", p.display());
    }
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(grown.join("loop.json")).unwrap()).unwrap();
    assert_eq!(stored["generations"], 2);
}
