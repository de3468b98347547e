//! Controlling a running search: `stop`, `makemove` during a search,
//! pondering, the clock, and the end of the input during a search.

use super::driver::{bestmove, opening_driver, ponder_answers_when_stopped};
use crate::game::arimaa::Arimaa;
use crate::game::Game;
use crate::protocol::short_board;
use std::time::{Duration, Instant};

#[test]
fn stop_answers_promptly() {
    let d = opening_driver("alphabeta:time=60,depth=20");
    d.send("go");
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    d.send("stop");
    let lines = d.until("bestmove");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    Arimaa::new()
        .parse_move(&bestmove(lines.last().unwrap()))
        .unwrap();
    // Nothing left running: a second stop (one that crossed the answer on
    // the wire) is harmless.
    d.send("stop");
    assert_eq!(d.sync(), vec!["log Debug: stop: no search is running"]);
    d.send("go");
    d.send("go");
    let lines = d.sync();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("a search is already running")),
        "{lines:?}"
    );
    d.send("quit");
    d.join().unwrap();
}

#[test]
fn makemove_cancels_a_search_without_an_answer() {
    let d = opening_driver("alphabeta:time=60,depth=20");
    d.send("go");
    std::thread::sleep(Duration::from_millis(100));
    d.send("makemove Ee2n Ee3n Ee4n Ee5n");
    let lines = d.sync();
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "{lines:?}"
    );
    // Now silver moves; its answer is legal there.
    d.send("go");
    std::thread::sleep(Duration::from_millis(100));
    d.send("stop");
    let mv = bestmove(d.until("bestmove").last().unwrap());
    let mut g = Arimaa::new();
    g.play_str("Ee2n Ee3n Ee4n Ee5n").unwrap();
    g.parse_move(&mv).unwrap();
    d.send("quit");
    d.join().unwrap();
}

#[test]
fn ponder_answers_only_when_stopped() {
    for spec in ["random", "alphabeta:depth=1"] {
        let d = opening_driver(spec);
        ponder_answers_when_stopped(&d, spec, 300);
        // A ponder dropped by makemove says nothing.
        d.send("go ponder");
        d.send("makemove Ee2n Ee3n");
        let lines = d.sync();
        assert!(
            lines.iter().all(|l| l.starts_with("info ")),
            "{spec}: {lines:?}"
        );
        d.send("quit");
        d.join().unwrap();
    }
}

#[test]
fn the_clock_bounds_the_think_time() {
    // Without a clock this spec would think for ages (20 turns deep).
    let d = opening_driver("alphabeta:depth=20");
    // 1 s a move and no reserve: about 0.4 s of thought.
    d.send("setoption name tcmove value 1");
    d.send("setoption name tcreserve value 0");
    d.send("setoption name tcpercent value 100");
    d.send("setoption name greserve value 0");
    d.send("setoption name sreserve value 0");
    d.send("setoption name moveused value 0");
    d.send("setoption name opponent value someone");
    d.send("setoption name rated value 0");
    d.send("setoption name hash value 64");
    assert!(d.sync().is_empty());
    let t = Instant::now();
    let mv = d.go();
    let took = t.elapsed();
    assert!(took < Duration::from_secs(3), "{took:?}");
    Arimaa::new().parse_move(&mv).unwrap();
    // A fixed depth in steps: 4 steps is one turn, answered without waiting.
    d.send("setoption name depth value 4");
    d.send(&format!(
        "setposition g {}",
        short_board(Arimaa::new().position())
    ));
    d.send("go");
    let lines = d.until("bestmove");
    assert!(lines.iter().any(|l| l == "info depth 4"), "{lines:?}");
    assert!(!lines.iter().any(|l| l == "info depth 8"), "{lines:?}");
    d.send("quit");
    d.join().unwrap();
}

#[test]
fn end_of_input_lets_a_search_answer() {
    let d = opening_driver("alphabeta:depth=1");
    d.send("go");
    let mut d = d;
    d.tx = None; // the end of the input
    let lines = d.until("bestmove");
    Arimaa::new()
        .parse_move(&bestmove(lines.last().unwrap()))
        .unwrap();
    d.join().unwrap();
}
