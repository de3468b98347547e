//! Tic-tac-toe against OpenSpiel: every ply of 2,000 random games
//! (tests/fixtures/tictactoe_oracle.jsonl, made by
//! scripts/gen_oracle_fixtures.sh) must agree on the board, side to move,
//! terminal flag, returns and the sorted legal-move list.

use plies::game::{Game, TicTacToe};
use plies::record::{replay_file, RecordError};
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tictactoe_oracle.jsonl")
}

#[test]
fn engine_agrees_with_openspiel_on_every_ply() {
    let s = replay_file::<TicTacToe>(&fixture()).expect("engine and oracle differ");
    assert_eq!(s.games, 2000);
    assert!(s.plies > 15_000, "{s:?}");
    // The fixture covers most of the 5,478 reachable positions.
    let mut seen = std::collections::HashSet::new();
    for line in std::fs::read_to_string(fixture()).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for p in v["plies"].as_array().unwrap() {
            seen.insert(p["board"].as_str().unwrap().to_string());
        }
    }
    assert!(seen.len() > 4000, "{}", seen.len());
}

fn mutated(name: &str, f: impl Fn(&str) -> String) -> PathBuf {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let mut lines: Vec<String> = text.lines().take(5).map(String::from).collect();
    lines[3] = f(&lines[3]);
    let dir = tempfile::tempdir().unwrap().keep();
    let p = dir.join(name);
    std::fs::write(&p, lines.join("\n")).unwrap();
    p
}

#[test]
fn a_wrong_legal_list_is_reported_with_line_and_ply() {
    let p = mutated("legal.jsonl", |l| {
        l.replacen("\"legal\": [\"a1\", ", "\"legal\": [", 1)
    });
    match replay_file::<TicTacToe>(&p) {
        Err(RecordError::Mismatch { line, field, .. }) => {
            assert_eq!(line, 4);
            assert_eq!(field, "legal moves");
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

#[test]
fn a_wrong_terminal_flag_is_reported() {
    let p = mutated("terminal.jsonl", |l| {
        l.replace("\"terminal\": true", "\"terminal\": false")
    });
    let e = replay_file::<TicTacToe>(&p).unwrap_err().to_string();
    assert!(e.contains(":4:") && e.contains("terminal"), "{e}");
}

#[test]
fn a_malformed_move_names_the_token() {
    let p = mutated("move.jsonl", |l| {
        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
        v["moves"][2] = "z9".into();
        v.to_string()
    });
    let e = replay_file::<TicTacToe>(&p).unwrap_err().to_string();
    assert!(
        e.contains("'z9'") && e.contains("ply 2") && e.contains(":4:"),
        "{e}"
    );
}

#[test]
fn a_broken_json_line_names_the_line() {
    let p = mutated("json.jsonl", |l| l[..l.len() / 2].to_string());
    let e = replay_file::<TicTacToe>(&p).unwrap_err().to_string();
    assert!(e.contains("json.jsonl:4"), "{e}");
}

#[test]
fn every_reachable_position_round_trips_through_text() {
    // Walk the whole game tree: 5,478 distinct positions.
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![TicTacToe::new()];
    let mut moves = Vec::new();
    while let Some(g) = stack.pop() {
        if !seen.insert(g.to_text()) {
            continue;
        }
        assert_eq!(TicTacToe::from_text(&g.to_text()).unwrap(), g);
        g.legal_moves(&mut moves);
        for &m in &moves {
            let mut c = g;
            c.play(m);
            stack.push(c);
        }
    }
    assert_eq!(seen.len(), 5478);
}
