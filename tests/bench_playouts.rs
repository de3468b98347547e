//! `plies bench playouts --json`: the fields are there and the counts add up
//! (no timing assertions).

use std::process::Command;

fn playouts(game: &str, size: &str, games: &str) -> serde_json::Value {
    let o = Command::new(env!("CARGO_BIN_EXE_plies"))
        .args([
            "bench", "playouts", "--game", game, "--size", size, "--games", games, "--json",
        ])
        .output()
        .expect("run plies");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

fn check(v: &serde_json::Value, game: &str, size: u64, games: u64, len: (f64, f64)) {
    assert_eq!(v["engine"], "plies");
    assert_eq!(v["game"], game);
    assert_eq!(v["size"].as_u64(), Some(size));
    assert_eq!(v["games"].as_u64(), Some(games));
    for key in ["seconds", "games_per_s", "moves_per_s", "mean_length"] {
        let x = v[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key} missing: {v}"));
        assert!(x.is_finite() && x > 0.0, "{key} = {x}");
    }
    let moves = v["moves"].as_u64().unwrap();
    let mean = v["mean_length"].as_f64().unwrap();
    assert!((mean - moves as f64 / games as f64).abs() < 1e-9, "{v}");
    assert!(mean >= len.0 && mean <= len.1, "mean length {mean}: {v}");
    let results: u64 = ["first_wins", "second_wins", "draws"]
        .iter()
        .map(|k| v[k].as_u64().unwrap())
        .sum();
    assert_eq!(results, games, "{v}");
}

#[test]
fn gomoku_9_playouts_report_every_game() {
    let v = playouts("gomoku", "9", "20");
    // A win needs at least 9 moves; a 9x9 board holds 81.
    check(&v, "gomoku", 9, 20, (9.0, 81.0));
}

#[test]
fn tictactoe_playouts_report_every_game() {
    let v = playouts("tictactoe", "3", "50");
    check(&v, "tictactoe", 3, 50, (5.0, 9.0));
}

#[test]
fn arimaa_is_refused_clearly() {
    let o = Command::new(env!("CARGO_BIN_EXE_plies"))
        .args(["bench", "playouts", "--game", "arimaa", "--games", "1"])
        .output()
        .expect("run plies");
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("arimaa"));
}
