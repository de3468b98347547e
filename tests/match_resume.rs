//! `plies match --out DIR`: a match killed part way and run again ends with
//! the result of an uninterrupted one, and a finished match given more games
//! plays only the new ones.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const GAMES: &str = "200";

/// A match of about 2.5 s on 2 cores: long enough to be killed part way.
fn match_args(out: &Path, games: &str) -> Vec<String> {
    [
        "match",
        "--game",
        "connect-four",
        "--a",
        "mcts:sims=2000,reuse=off",
        "--b",
        "naive",
        "--games",
        games,
        "--seed",
        "4",
        "--json",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([out.display().to_string()])
    .collect()
}

fn plies(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plies"))
        .env("RAYON_NUM_THREADS", "2")
        .args(args)
        .output()
        .unwrap()
}

fn result(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap()
}

fn recorded(out: &Path) -> usize {
    std::fs::read_to_string(out.join("games.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
fn a_killed_match_resumes_to_the_uninterrupted_result() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let o = plies(&match_args(&whole, GAMES));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(recorded(&whole), 200);
    assert_eq!(printed["total"], result(&whole)["total"]);

    let cut = tmp.path().join("cut");
    let mut child = Command::new(env!("CARGO_BIN_EXE_plies"))
        .env("RAYON_NUM_THREADS", "2")
        .args(match_args(&cut, GAMES))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while recorded(&cut) < 10 && t0.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = recorded(&cut);
    assert!(
        (10..60).contains(&before),
        "{before} games recorded at the kill"
    );
    assert!(!cut.join("result.json").exists());
    let o = plies(&match_args(&cut, GAMES));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(result(&cut), result(&whole));

    // Other settings on the same folder are refused by name.
    let mut other = match_args(&cut, GAMES);
    let seed = other.iter().position(|a| a == "--seed").unwrap();
    other[seed + 1] = "5".into();
    let o = plies(&other);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("`seed`"), "{err}");
}

#[test]
fn a_finished_match_grows_by_the_new_games_only() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    assert!(plies(&match_args(&whole, "24")).status.success());
    let grown = tmp.path().join("grown");
    assert!(plies(&match_args(&grown, "10")).status.success());
    assert_eq!(recorded(&grown), 10);
    assert!(plies(&match_args(&grown, "24")).status.success());
    assert_eq!(recorded(&grown), 24);
    assert_eq!(result(&grown), result(&whole));
}
