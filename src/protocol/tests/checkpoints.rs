//! Players with a checkpoint as their evaluator, and checkpoints the
//! engine refuses before it serves.

use super::driver::{bestmove, info, opening_driver, self_play, Driver};
use super::fixtures::{arimaa_checkpoint, free_cat};
use crate::game::arimaa::Arimaa;
use crate::game::{Game, Side};
use crate::protocol::{run_aei, short_board, AeiConfig};
use std::io;

#[test]
fn mcts_with_a_checkpoint_plays_a_game_and_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let cnn = arimaa_checkpoint(&tmp.path().join("cnn3"), true);
    // Two threads share one batched service in front of the model.
    let spec = format!("mcts:sims=40,threads=2,eval=ckpt:{cnn},setup=standard");
    let game = self_play(&spec, 1, 6);
    assert_eq!(game.ply(), 6);
    // What a move's search reports.
    let d = opening_driver(&format!("mcts:sims=30,eval=ckpt:{cnn}"));
    let lines = d.go_lines();
    assert_eq!(info(&lines, "simulations"), Some("30"), "{lines:?}");
    assert_eq!(info(&lines, "nodes"), Some("30"), "{lines:?}");
    assert_eq!(info(&lines, "reused"), Some("0"), "{lines:?}");
    let visits: u32 = info(&lines, "bestvisits").unwrap().parse().unwrap();
    assert!(visits >= 1, "{lines:?}");
    let value: f64 = info(&lines, "bestvalue").unwrap().parse().unwrap();
    assert!((-1.0..=1.0).contains(&value), "{lines:?}");
    info(&lines, "score").unwrap().parse::<i64>().unwrap();
    let mv = bestmove(lines.last().unwrap());
    assert_eq!(info(&lines, "pv"), Some(mv.as_str()));
    Arimaa::new().parse_move(&mv).unwrap();
    d.send("quit");
    d.join().unwrap();
}

#[test]
fn checkpoint_players_take_a_free_piece() {
    let tmp = tempfile::tempdir().unwrap();
    let linear = arimaa_checkpoint(&tmp.path().join("linear"), false);
    let board = short_board(free_cat().position());
    for spec in [
        format!("greedy:eval=ckpt:{linear}"),
        format!("alphabeta:depth=1,eval=ckpt:{linear}"),
        format!("mcts:sims=600,eval=ckpt:{linear}"),
        "mcts:sims=600,eval=material".to_string(),
    ] {
        let d = Driver::open(&spec, 1);
        d.send(&format!("setposition g {board}"));
        let lines = d.go_lines();
        let mv = bestmove(lines.last().unwrap());
        let mut g = free_cat();
        g.play_str(&mv)
            .unwrap_or_else(|e| panic!("{spec}: illegal {mv}: {e}"));
        let cats =
            g.position().material(Side::Second)[crate::game::arimaa::PieceType::Cat as usize];
        assert_eq!(cats, 0, "{spec}: {mv}\n{lines:?}");
        let score: i64 = info(&lines, "score").unwrap().parse().unwrap();
        assert!(score > 0, "{spec}: {lines:?}");
        d.send("quit");
        d.join().unwrap();
    }
    // Whole games go on legally with the checkpoint.
    self_play(&format!("greedy:eval=ckpt:{linear}"), 2, 6);
    self_play(
        &format!("alphabeta:depth=1,eval=ckpt:{linear},setup=standard"),
        3,
        4,
    );
}

#[test]
fn a_bad_checkpoint_stops_the_engine_before_it_serves() {
    let ttt = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/checkpoints/tictactoe-mlp80-td"
    );
    for (spec, why) in [
        (
            "greedy:eval=ckpt:/no/such/checkpoint".to_string(),
            "/no/such/checkpoint",
        ),
        (
            "mcts:sims=10,eval=ckpt:/no/such/checkpoint".to_string(),
            "/no/such/checkpoint",
        ),
        (
            format!("alphabeta:depth=1,eval=ckpt:{ttt}"),
            "for game 'tictactoe', not 'arimaa'",
        ),
    ] {
        let config = AeiConfig::new(spec.parse().unwrap(), 1);
        let mut out = Vec::new();
        let err = run_aei("aei\nisready\n".as_bytes(), &mut out, &config).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{spec}");
        let out = String::from_utf8(out).unwrap();
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(
            out.starts_with(&format!(
                "log Error: cannot start the engine: player spec '{spec}'"
            )) && out.contains(why),
            "{out}"
        );
        assert!(config.player().is_err());
    }
}
