//! MCTS in the engine: its tree kept through `makemove`, `stop` and
//! pondering on a search, and the clock.

use super::driver::{bestmove, info, opening_driver, ponder_answers_when_stopped, Driver};
use super::fixtures::{arimaa_checkpoint, free_cat};
use crate::game::arimaa::Arimaa;
use crate::game::Game;
use crate::protocol::short_board;
use std::time::{Duration, Instant};

#[test]
fn mcts_keeps_its_tree_through_makemove() {
    let d = Driver::open("mcts:sims=2000,eval=material", 1);
    d.send(&format!(
        "setposition g {}",
        short_board(free_cat().position())
    ));
    let lines = d.go_lines();
    assert_eq!(info(&lines, "reused"), Some("0"));
    let visits = info(&lines, "bestvisits").unwrap().to_string();
    assert!(visits.parse::<u32>().unwrap() > 1, "{lines:?}");
    // The engine's own move played: its subtree is searched on.
    let mv = bestmove(lines.last().unwrap());
    d.send(&format!("makemove {mv}"));
    let lines = d.go_lines();
    assert_eq!(info(&lines, "reused"), Some(visits.as_str()), "{lines:?}");
    let mut g = free_cat();
    g.play_str(&mv).unwrap();
    g.parse_move(&bestmove(lines.last().unwrap())).unwrap();
    // A new position starts afresh.
    d.send(&format!(
        "setposition g {}",
        short_board(free_cat().position())
    ));
    let lines = d.go_lines();
    assert_eq!(info(&lines, "reused"), Some("0"));
    // reuse=off never keeps one.
    let d2 = Driver::open("mcts:sims=300,eval=material,reuse=off", 1);
    d2.send(&format!(
        "setposition g {}",
        short_board(free_cat().position())
    ));
    let mv = d2.go();
    d2.send(&format!("makemove {mv}"));
    assert_eq!(info(&d2.go_lines(), "reused"), Some("0"));
    for d in [d, d2] {
        d.send("quit");
        d.join().unwrap();
    }
}

#[test]
fn stop_ends_an_mcts_search_promptly() {
    let tmp = tempfile::tempdir().unwrap();
    let cnn = arimaa_checkpoint(&tmp.path().join("cnn3"), true);
    for spec in [
        "mcts:time=60,eval=material".to_string(),
        format!("mcts:time=60,threads=2,eval=ckpt:{cnn}"),
    ] {
        let d = opening_driver(&spec);
        d.send("go");
        std::thread::sleep(Duration::from_millis(300));
        let t = Instant::now();
        d.send("stop");
        let lines = d.until("bestmove");
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "{spec}: {:?}",
            t.elapsed()
        );
        Arimaa::new()
            .parse_move(&bestmove(lines.last().unwrap()))
            .unwrap();
        let sims: u64 = info(&lines, "simulations").unwrap().parse().unwrap();
        assert!(sims > 0, "{spec}: {lines:?}");
        // A ponder answers only when stopped, then a legal move too.
        ponder_answers_when_stopped(&d, &spec, 200);
        // makemove drops a running search without an answer.
        d.send("go");
        std::thread::sleep(Duration::from_millis(100));
        d.send("makemove Ee2n Ee3n Ee4n Ee5n");
        let lines = d.sync();
        assert!(
            !lines.iter().any(|l| l.starts_with("bestmove")),
            "{lines:?}"
        );
        d.send("quit");
        d.join().unwrap();
    }
}

#[test]
fn the_clock_bounds_mcts() {
    for spec in ["mcts:time=60,eval=material", "mcts:sims=100000000"] {
        let d = opening_driver(spec);
        d.send("setoption name tcmove value 1");
        d.send("setoption name tcreserve value 0");
        d.send("setoption name greserve value 0");
        d.send("setoption name sreserve value 0");
        assert!(d.sync().is_empty());
        let t = Instant::now();
        let mv = d.go();
        assert!(
            t.elapsed() < Duration::from_secs(3),
            "{spec}: {:?}",
            t.elapsed()
        );
        Arimaa::new().parse_move(&mv).unwrap();
        d.send("quit");
        d.join().unwrap();
    }
}
