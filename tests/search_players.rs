//! The search players from the command line: MCTS and alpha-beta with hand
//! evaluators and with a checkpoint (through the batched evaluator
//! service), and errors that name a bad key.

mod common;
use common::{plies, text};

/// A match's JSON result.
fn match_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["match", "--json", "--quiet"];
    all.extend_from_slice(args);
    let out = plies(&all);
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)))
}

fn wins_losses(v: &serde_json::Value) -> (u64, u64) {
    (
        v["total"]["wins"].as_u64().unwrap(),
        v["total"]["losses"].as_u64().unwrap(),
    )
}

#[test]
fn mcts_beats_random_play_in_every_kind_of_game() {
    for (game, size, spec) in [
        ("gomoku", "7", "mcts:sims=200"),
        ("amazons", "6", "mcts:sims=100,threads=2,eval=mindist"),
        (
            "pentago",
            "6",
            "mcts:sims=100,eval=pentago-features,rollout=2",
        ),
    ] {
        let v = match_json(&[
            "--game", game, "--size", size, "--a", spec, "--b", "random", "--games", "12",
            "--seed", "3",
        ]);
        // Two search threads make the Amazons games differ run to run, and
        // on a busy machine one in a few runs lost a game of 6: 11 of 12
        // allows one such loss (a coin would reach it 0.3% of the time).
        let (w, l) = wins_losses(&v);
        assert!(w >= 11 && l <= 1, "{game} {spec}: {w} wins, {l} losses");
    }
}

#[test]
fn a_checkpoint_evaluates_for_mcts_and_alphabeta() {
    let ck = "eval=ckpt:checkpoints/tictactoe-mlp80-td";
    // Four threads share the model through the batched service.
    for spec in [
        format!("mcts:sims=200,threads=4,{ck}"),
        format!("mcts:sims=200,{ck},batch=0"),
        format!("alphabeta:depth=2,{ck}"),
    ] {
        let v = match_json(&[
            "--game",
            "tictactoe",
            "--a",
            &spec,
            "--b",
            "random",
            "--games",
            "10",
            "--seed",
            "5",
        ]);
        let (w, l) = wins_losses(&v);
        assert!(w >= 6 && l <= 1, "{spec}: {w} wins, {l} losses");
    }
}

#[test]
fn a_malformed_spec_names_the_bad_key_or_value() {
    for (spec, needle) in [
        ("mcts:simz=3", "simz"),
        ("mcts:sims=10,eval=mindst", "mindst"),
        ("mcts:sims=10,threads=zero", "threads=zero"),
        (
            "alphabeta:depth=2,eval=ckpt:/no/such/checkpoint",
            "/no/such/checkpoint",
        ),
        ("spiel-mcts:sims=10,depth=3", "depth"),
    ] {
        let out = plies(&[
            "match", "--game", "amazons", "--size", "6", "--a", spec, "--b", "random", "--games",
            "2",
        ]);
        assert!(!out.status.success(), "{spec} was accepted");
        assert!(text(&out).contains(needle), "{spec}: {}", text(&out));
    }
}
