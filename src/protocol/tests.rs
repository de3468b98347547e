//! The AEI loop driven in-process, line by line, as a controller would.

use super::{run_aei, short_board, AeiConfig};
use crate::game::arimaa::{Arimaa, Setup};
use crate::game::{Game, Side};
use crate::util::seeded_rng;
use rand::RngExt;
use std::io::{self, BufReader, Read, Write};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Input fed line by line from a channel; closing the channel is the end
/// of the input.
struct ChanReader {
    rx: Receiver<String>,
    buf: Vec<u8>,
    pos: usize,
}

impl Read for ChanReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.buf.len() {
            match self.rx.recv() {
                Ok(s) => {
                    self.buf = s.into_bytes();
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Output split into lines onto a channel.
struct ChanWriter {
    tx: Sender<String>,
    partial: Vec<u8>,
}

impl Write for ChanWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.partial.extend_from_slice(data);
        while let Some(i) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=i).collect();
            let text = String::from_utf8_lossy(&line[..i]).into_owned();
            let _ = self.tx.send(text);
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

const WAIT: Duration = Duration::from_secs(20);

/// An engine on a thread, with a controller's view of it.
struct Driver {
    tx: Option<Sender<String>>,
    rx: Receiver<String>,
    handle: Option<JoinHandle<io::Result<()>>>,
}

impl Driver {
    fn start(spec: &str, seed: u64) -> Driver {
        let (in_tx, in_rx) = channel::<String>();
        let (out_tx, out_rx) = channel::<String>();
        let config = AeiConfig::new(spec.parse().unwrap(), seed);
        let handle = std::thread::spawn(move || {
            let reader = BufReader::new(ChanReader {
                rx: in_rx,
                buf: Vec::new(),
                pos: 0,
            });
            let writer = ChanWriter {
                tx: out_tx,
                partial: Vec::new(),
            };
            run_aei(reader, writer, &config)
        });
        Driver {
            tx: Some(in_tx),
            rx: out_rx,
            handle: Some(handle),
        }
    }

    /// Starts an engine and opens the session.
    fn open(spec: &str, seed: u64) -> Driver {
        let d = Driver::start(spec, seed);
        d.send("aei");
        d.until("aeiok");
        d
    }

    fn send(&self, line: &str) {
        self.send_raw(format!("{line}\n").as_bytes());
    }

    fn send_raw(&self, bytes: &[u8]) {
        self.tx.as_ref().expect("open").send(lossy(bytes)).unwrap();
    }

    fn next(&self, timeout: Duration) -> Option<String> {
        match self.rx.recv_timeout(timeout) {
            Ok(l) => Some(l),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Lines up to and including the first that starts with `prefix`.
    fn until(&self, prefix: &str) -> Vec<String> {
        let end = Instant::now() + WAIT;
        let mut seen = Vec::new();
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.next(left) {
                Some(l) => {
                    let done = l.starts_with(prefix);
                    seen.push(l);
                    if done {
                        return seen;
                    }
                }
                None => panic!("no '{prefix}' line; saw {seen:?}"),
            }
        }
    }

    /// `isready`, returning what came before `readyok`.
    fn sync(&self) -> Vec<String> {
        self.send("isready");
        let mut lines = self.until("readyok");
        lines.pop();
        lines
    }

    /// `go` and the move it answers with.
    fn go(&self) -> String {
        bestmove(self.go_lines().last().unwrap())
    }

    /// `go` and every line up to its `bestmove`, which contain no error.
    fn go_lines(&self) -> Vec<String> {
        self.send("go");
        let lines = self.until("bestmove");
        let errors: Vec<&String> = lines
            .iter()
            .filter(|l| l.starts_with("log Error"))
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        lines
    }

    /// Waits for the loop to end (after `quit` or closing the input).
    fn join(mut self) -> io::Result<()> {
        let h = self.handle.take().unwrap();
        let end = Instant::now() + WAIT;
        while !h.is_finished() {
            assert!(Instant::now() < end, "the engine did not stop");
            std::thread::sleep(Duration::from_millis(5));
        }
        h.join().unwrap()
    }

    fn close(mut self) -> io::Result<()> {
        self.tx = None;
        self.join()
    }
}

/// The channel carries `String`s; invalid UTF-8 reaches the engine as the
/// replacement character, which is garbage all the same.
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn bestmove(line: &str) -> String {
    line.strip_prefix("bestmove ")
        .unwrap_or_else(|| panic!("not a bestmove: {line}"))
        .to_string()
}

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

/// Plays a whole game with one engine on both sides, checking every answer
/// against our own copy of the game.
fn self_play(spec: &str, seed: u64, max_plies: u32) -> Arimaa {
    let d = Driver::open(spec, seed);
    d.send("newgame");
    let gold = d.go();
    let gold_setup = Setup::parse(Side::First, &gold).unwrap();
    d.send(&format!("makemove {gold}"));
    let silver = d.go();
    let silver_setup = Setup::parse(Side::Second, &silver).unwrap();
    d.send(&format!("makemove {silver}"));
    let mut game = Arimaa::from_setups(&gold_setup, &silver_setup).unwrap();
    while game.outcome().is_none() && game.ply() < max_plies {
        let mv = d.go();
        let parsed = game.parse_move(&mv).unwrap_or_else(|e| {
            panic!(
                "{spec} played an illegal move at {}: {e}",
                game.turn_label()
            )
        });
        assert_eq!(game.move_to_string(parsed), mv);
        game.play(parsed);
        d.send(&format!("makemove {mv}"));
    }
    assert!(d.sync().is_empty());
    if game.outcome().is_some() {
        d.send("go");
        let lines = d.sync();
        assert!(
            lines[0].starts_with("log Error: go: the game is over"),
            "{lines:?}"
        );
    }
    d.send("quit");
    d.join().unwrap();
    game
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

/// A position where gold has an ordinary turn ahead.
fn opening_driver(spec: &str) -> Driver {
    let d = Driver::open(spec, 1);
    d.send(&format!(
        "setposition g {}",
        short_board(Arimaa::new().position())
    ));
    d
}

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

/// `go ponder` from the opening says nothing for `wait_ms`, then `stop`
/// answers a legal move.
fn ponder_answers_when_stopped(d: &Driver, spec: &str, wait_ms: u64) {
    d.send("go ponder");
    std::thread::sleep(Duration::from_millis(wait_ms));
    assert!(
        !d.sync().iter().any(|l| l.starts_with("bestmove")),
        "{spec}"
    );
    d.send("stop");
    let mv = bestmove(d.until("bestmove").last().unwrap());
    Arimaa::new().parse_move(&mv).unwrap();
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

#[test]
fn closing_the_input_without_quit_ends_the_loop() {
    let d = Driver::open("random", 1);
    d.close().unwrap();
}

/// Writes a seeded Arimaa checkpoint into `dir` and returns its path:
/// Zaffetti's cnn3 (untrained) or the piece-square table started from
/// material values (`arimaa-6x8x8` encoder either way).
fn arimaa_checkpoint(dir: &std::path::Path, cnn: bool) -> String {
    use crate::checkpoint::{self, CheckpointConfig, TrainingInfo};
    use crate::model::{
        seeded_tensors, Cnn3Config, Cnn3NetConfig, InputShape, LinearConfig, ModelConfig,
    };
    let encoder = crate::encode::arimaa_encoder("arimaa-6x8x8")
        .unwrap()
        .spec();
    let model = if cnn {
        ModelConfig::Cnn3(Cnn3NetConfig::new(
            InputShape::new(encoder.shape, encoder.globals),
            Cnn3Config::default(),
        ))
    } else {
        ModelConfig::Linear(LinearConfig::arimaa_material())
    };
    let tensors = seeded_tensors(&model, &mut seeded_rng(5, 0), &candle_core::Device::Cpu).unwrap();
    let ck = CheckpointConfig::new("arimaa", encoder, model, TrainingInfo::default());
    checkpoint::save(dir, &ck, &tensors).unwrap();
    dir.display().to_string()
}

/// Gold's elephant on d4 can push the silver cat on d3 onto trap c3 and
/// capture it.
pub(super) fn free_cat() -> Arimaa {
    Arimaa::from_text(&format!(
        "g {}",
        "r......r\
         ........\
         ........\
         ........\
         ...E....\
         ...c....\
         ........\
         R......R"
    ))
    .unwrap()
}

/// The value of `name` in the `info name value` lines.
fn info<'a>(lines: &'a [String], name: &str) -> Option<&'a str> {
    let prefix = format!("info {name} ");
    lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
}

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

/// The Arimaa players the engine serves, built as every consumer builds
/// them, searching `free_cat` with a stop flag in the budget as the
/// engine does.
fn takes_the_cat(spec: &str) -> crate::search::Searched<crate::game::arimaa::Move> {
    use crate::search::{Budget, StopFlag};
    let game = free_cat();
    let config = AeiConfig::new(spec.parse().unwrap(), 1);
    let player = config.player().unwrap();
    let budget = Budget {
        depth: Some(1),
        stop: Some(StopFlag::new()),
        ..Budget::UNLIMITED
    };
    let mut depths = Vec::new();
    let searched = player
        .session()
        .search(&game, &budget, &mut seeded_rng(1, 0), &mut |i| {
            depths.extend(i.depth)
        })
        .unwrap();
    let mut after = game.clone();
    after.play(searched.mv);
    let silver = after.position().material(Side::Second);
    assert_eq!(
        silver[crate::game::arimaa::PieceType::Cat as usize],
        0,
        "{spec}: {}",
        game.move_to_string(searched.mv)
    );
    assert_eq!(depths.is_empty(), searched.info.depth.is_none(), "{spec}");
    searched
}

#[test]
fn every_player_kind_takes_a_free_piece_and_says_what_it_saw() {
    use super::aei_spec::centi_rabbits;
    let ab = takes_the_cat("alphabeta").info;
    assert_eq!(ab.depth, Some(1));
    assert!(ab.nodes.unwrap() > 0);
    assert!(centi_rabbits(ab.score.unwrap()) >= 150, "{ab:?}");
    let greedy = takes_the_cat("greedy:eval=material").info;
    assert_eq!(greedy.nodes, greedy.planned);
    assert!(centi_rabbits(greedy.score.unwrap()) >= 150, "{greedy:?}");
    let mcts = takes_the_cat("mcts:sims=600,eval=material").info;
    assert_eq!(mcts.nodes, Some(600));
    let tree = mcts.tree.unwrap();
    assert_eq!(tree.reused, 0);
    assert!(tree.best_visits > 0 && tree.best_value > 0.0, "{tree:?}");
}
