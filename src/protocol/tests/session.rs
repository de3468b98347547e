//! A session from the handshake to the end: whole games, random setups,
//! `setposition`, garbled input, and the end of the input.

use super::driver::{self_play, Driver, WAIT};
use crate::game::arimaa::{Arimaa, Setup};
use crate::game::{Game, Side};
use crate::protocol::short_board;
use crate::util::seeded_rng;
use rand::RngExt;
use std::time::{Duration, Instant};

#[test]
fn handshake_and_quit() {
    let d = Driver::start("random", 1);
    d.send("aei");
    let lines = d.until("aeiok");
    assert_eq!(lines[0], "protocol-version 1");
    assert!(
        lines.contains(&"id name plies random".to_string()),
        "{lines:?}"
    );
    assert!(lines.contains(&"id author plies".to_string()), "{lines:?}");
    assert!(d.sync().is_empty());
    d.send("quit");
    d.join().unwrap();
}

#[test]
fn a_whole_random_game() {
    let game = self_play("random", 3, 3000);
    assert!(game.outcome().is_some(), "{}", game.render());
    assert!(game.termination().unwrap().is_on_board());
}

#[test]
fn alphabeta_plays_legal_moves_quickly() {
    let start = Instant::now();
    let game = self_play("alphabeta:depth=1,setup=standard", 5, 12);
    assert_eq!(game.ply(), 12);
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn random_setups_depend_on_the_seed() {
    let a = Driver::open("random", 1);
    let b = Driver::open("random", 1);
    let c = Driver::open("random", 2);
    for d in [&a, &b, &c] {
        d.send("newgame");
    }
    let (sa, sb, sc) = (a.go(), b.go(), c.go());
    assert_eq!(sa, sb);
    assert_ne!(sa, sc);
    Setup::parse(Side::First, &sa).unwrap();
}

#[test]
fn setposition_round_trip() {
    // A position some random moves into a game.
    let mut game = Arimaa::new();
    let mut rng = seeded_rng(11, 0);
    let mut moves = Vec::new();
    for _ in 0..9 {
        game.legal_moves(&mut moves);
        game.play(moves[rng.random_range(0..moves.len())]);
    }
    assert_eq!(game.side_to_move(), Side::Second);
    let board = short_board(game.position());
    let d = Driver::open("alphabeta:depth=1", 1);
    d.send(&format!("setposition s {board}"));
    assert!(d.sync().is_empty());
    let mv = d.go();
    let here = Arimaa::from_position(*game.position(), 2);
    here.parse_move(&mv).unwrap();
    // Playing on from there keeps the two copies in step.
    d.send(&format!("makemove {mv}"));
    let mut after = here.clone();
    after.play_str(&mv).unwrap();
    let reply = d.go();
    after.parse_move(&reply).unwrap();

    // An empty board is gold's setup; gold's pieces alone, silver's.
    d.send(&format!("setposition g [{}]", " ".repeat(64)));
    let gold = d.go();
    let gold_setup = Setup::parse(Side::First, &gold).unwrap();
    let mut pos = crate::game::arimaa::Position::empty(Side::Second);
    gold_setup.place_on(&mut pos).unwrap();
    d.send(&format!("setposition s {}", short_board(&pos)));
    let silver = d.go();
    Setup::parse(Side::Second, &silver).unwrap();
    // The older w/b side letters are read too.
    d.send(&format!("setposition b {board}"));
    here.parse_move(&d.go()).unwrap();
    d.send("quit");
    d.join().unwrap();
}

#[test]
fn garbled_input_is_logged_and_the_engine_keeps_serving() {
    let d = Driver::start("random", 1);
    let expect_error = |line: &str, needle: &str| {
        d.send(line);
        let lines = d.sync();
        assert_eq!(lines.len(), 1, "{line}: {lines:?}");
        assert!(lines[0].starts_with("log Error: "), "{line}: {lines:?}");
        assert!(lines[0].contains(needle), "{line}: {lines:?}");
    };
    // Before the session is open (isready is refused too, so look at the
    // single line this gives).
    d.send("hello");
    let l = d.next(WAIT).unwrap();
    assert!(l.starts_with("log Error: expected 'aei'"), "{l}");
    d.send("aei");
    d.until("aeiok");
    expect_error("frobnicate now", "unknown command 'frobnicate now'");
    expect_error("go", "go: no game yet");
    expect_error("makemove Ed2n", "no game yet");
    expect_error("setposition g [abc]", "64 squares");
    expect_error("setposition q [abc]", "side 'q'");
    expect_error("setposition", "expected 'setposition");
    expect_error(
        "setposition g rrrrrrrrdhcemchd................................DHCMECHDRRRRRRRR | Ed2n",
        "'| steps'",
    );
    expect_error("setoption tcmove 3", "expected 'setoption name");
    expect_error(
        "setoption name tcmove value abc",
        "tcmove=abc: expected a number",
    );
    expect_error("setoption name tcmove", "a value is required");
    expect_error("setoption name tcmove 3", "expected 'value <x>'");
    expect_error("setoption name tcreserve value -5", "cannot be negative");
    expect_error("setoption name setup value clever", "random or standard");
    d.send("setoption name colour value blue");
    let lines = d.sync();
    assert_eq!(
        lines,
        vec!["log Warning: setoption: unrecognized option 'colour'"]
    );
    d.send_raw(b"\xff\xfe\x00garbage\n");
    let lines = d.sync();
    assert!(
        lines.len() == 1 && lines[0].starts_with("log Error: unknown command"),
        "{lines:?}"
    );

    d.send("newgame");
    expect_error("makemove Zz9q", "not a legal gold setup");
    expect_error("makemove Ra1 Rb1", "found 2R");
    expect_error(
        "makemove ra8 rb8 rc8 rd8 re8 rf8 rg8 rh8 da7 hb7 cc7 ed7 me7 cf7 hg7 dh7",
        "own pieces",
    );
    expect_error("go sideways", "go: expected 'go' or 'go ponder'");
    d.send("setoption name setup value standard");
    let gold = d.go();
    d.send(&format!("makemove {gold}"));
    let silver = d.go();
    d.send(&format!("makemove {silver}"));
    expect_error("makemove Ee2n Ee3n Ee4n Ee5n Ee6n", "at most 4 steps");
    expect_error("makemove ee7s", "illegal move");
    expect_error("makemove Ra2n", "a2 holds 'D'");
    // After all that, a normal game goes on.
    let mv = d.go();
    let mut game = Arimaa::new();
    game.play_str(&mv).unwrap();
    d.send(&format!("makemove {mv}"));
    assert!(d.sync().is_empty());
    d.send("quit");
    d.join().unwrap();
}

#[test]
fn closing_the_input_without_quit_ends_the_loop() {
    let d = Driver::open("random", 1);
    d.close().unwrap();
}
