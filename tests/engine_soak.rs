//! Soak tests of both engine binaries: thousands of seeded random protocol
//! lines (real commands with random arguments, garbage, long lines, bytes
//! that are not UTF-8) without a panic or an exit; afterwards each engine
//! still answers and ends cleanly when told to.

mod common;

use plies::game::arimaa::Setup;
use plies::game::{Arimaa, Game, Side};
use plies::protocol::short_board;
use plies::util::{seeded_rng, SeededRng};
use rand::RngExt;
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// Lines each soak sends.
const LINES: usize = 3000;

/// An engine process whose stdout lines arrive on a channel and whose
/// stderr is kept for the end.
struct Soaked {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<(Instant, String)>,
}

impl Soaked {
    fn spawn(args: &[&str]) -> Soaked {
        let common::Piped {
            child,
            stdin,
            lines,
        } = common::spawn_piped(args, |c| {
            c.stderr(Stdio::piped());
        });
        Soaked {
            child,
            stdin,
            lines,
        }
    }

    /// Writes one line; an engine that has gone away fails the test with
    /// its stderr and the line it died on.
    fn send(&mut self, bytes: &[u8]) {
        let sent = self
            .stdin
            .write_all(bytes)
            .and_then(|()| self.stdin.write_all(b"\n"));
        if let Err(e) = sent {
            let status = self.child.wait().unwrap();
            let mut stderr = String::new();
            if let Some(mut s) = self.child.stderr.take() {
                s.read_to_string(&mut stderr).unwrap();
            }
            panic!(
                "the engine went away ({e}, {status}) by the line {:?}: {stderr}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            );
        }
    }

    /// Waits for a line starting with `prefix`, draining the others.
    fn wait_for(&self, prefix: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((_, l)) if l.starts_with(prefix) => return l,
                Ok(_) => {}
                Err(e) => panic!("no '{prefix}' line from the engine: {e}"),
            }
        }
    }

    /// Sends the closing command and checks a clean exit without a panic.
    fn close(mut self, last: &str) {
        self.send(last.as_bytes());
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            e.read_to_string(&mut stderr).unwrap();
        }
        assert!(status.success(), "{status}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// Noise: random printable text, a very long line, or bytes that are not
/// UTF-8.
fn garbage(rng: &mut SeededRng) -> Vec<u8> {
    match rng.random_range(0..4) {
        0 => (0..rng.random_range(0..40))
            .map(|_| rng.random_range(32u8..127))
            .collect(),
        1 => vec![b'x'; rng.random_range(1000..20_000)],
        2 => (0..rng.random_range(1..30)).map(|_| rng.random()).collect(),
        _ => Vec::new(),
    }
}

/// A random number as text: small, negative, huge, fractional or not one.
fn number(rng: &mut SeededRng) -> String {
    match rng.random_range(0..6) {
        0 => rng.random_range(0..30).to_string(),
        1 => format!("-{}", rng.random_range(0..1000)),
        2 => u64::MAX.to_string(),
        3 => format!("{}.{}", rng.random_range(0..9), rng.random_range(0..99)),
        4 => "1e308".into(),
        _ => "nan".into(),
    }
}

fn aei_line(rng: &mut SeededRng, game: &mut Arimaa) -> Vec<u8> {
    let options = [
        "tcmove",
        "tcreserve",
        "greserve",
        "sreserve",
        "depth",
        "setup",
        "hash",
        "rated",
        "bogus",
    ];
    let text = match rng.random_range(0..14) {
        0 => "aei".to_string(),
        1 => "isready".into(),
        2 => {
            *game = Arimaa::new();
            "newgame".into()
        }
        3 => {
            let side = if rng.random() {
                Side::First
            } else {
                Side::Second
            };
            format!("makemove {}", Setup::random(side, rng).to_notation())
        }
        4 | 5 => match game.random_move(rng, &mut Vec::new()) {
            Some(mv) => {
                let text = game.move_to_string(mv);
                game.play(mv);
                format!("makemove {text}")
            }
            None => "makemove Ee2n".into(),
        },
        6 => format!(
            "setposition {} {}",
            if rng.random() { 'g' } else { 's' },
            short_board(game.position())
        ),
        7 => format!(
            "setoption name {} value {}",
            options[rng.random_range(0..options.len())],
            number(rng)
        ),
        8 => "go".into(),
        9 => "go ponder".into(),
        10 => "stop".into(),
        11 => format!("makemove {}", String::from_utf8_lossy(&garbage(rng))),
        12 => format!("setposition g [{}]", "x".repeat(rng.random_range(0..70))),
        _ => return garbage(rng),
    };
    text.into_bytes()
}

#[test]
fn the_aei_engine_survives_thousands_of_random_lines() {
    let mut engine = Soaked::spawn(&["engine", "aei", "--player", "random", "--seed", "3"]);
    let mut rng = seeded_rng(17, 0);
    let mut game = Arimaa::new();
    for _ in 0..LINES {
        let line = aei_line(&mut rng, &mut game);
        // `quit` would end the session: it is sent once, at the end.
        if line.trim_ascii() != b"quit" {
            engine.send(&line);
        }
    }
    engine.send(b"stop");
    engine.send(b"isready");
    engine.wait_for("readyok");
    engine.close("quit");
}

fn gomocup_line(rng: &mut SeededRng) -> Vec<u8> {
    let keys = [
        "timeout_turn",
        "timeout_match",
        "time_left",
        "rule",
        "max_memory",
        "bogus",
    ];
    let coords =
        |rng: &mut SeededRng| format!("{},{}", rng.random_range(0..22), rng.random_range(0..22));
    let text = match rng.random_range(0..14) {
        0 => format!("START {}", rng.random_range(3..22)),
        1 => format!(
            "RECTSTART {},{}",
            rng.random_range(3..22),
            rng.random_range(3..22)
        ),
        2 => "RESTART".into(),
        3 => "BEGIN".into(),
        4..=6 => format!("TURN {}", coords(rng)),
        7 => {
            let mut block = String::from("BOARD");
            for _ in 0..rng.random_range(0..12) {
                block.push_str(&format!("\n{},{}", coords(rng), rng.random_range(0..5)));
            }
            if rng.random_range(0..4) > 0 {
                block.push_str("\nDONE");
            }
            block
        }
        8 => format!("TAKEBACK {}", coords(rng)),
        9 => format!(
            "INFO {} {}",
            keys[rng.random_range(0..keys.len())],
            number(rng)
        ),
        10 => "ABOUT".into(),
        11 => format!("TURN {}", String::from_utf8_lossy(&garbage(rng))),
        _ => return garbage(rng),
    };
    text.into_bytes()
}

#[test]
fn the_gomocup_engine_survives_thousands_of_random_lines() {
    let mut engine = Soaked::spawn(&["engine", "gomocup", "--player", "naive", "--seed", "3"]);
    let mut rng = seeded_rng(19, 0);
    for _ in 0..LINES {
        let line = gomocup_line(&mut rng);
        // `END` would end the session: it is sent once, at the end.
        if !line.trim_ascii().eq_ignore_ascii_case(b"end") {
            engine.send(&line);
        }
    }
    // A BOARD block left open ends at the next command.
    engine.send(b"ABOUT");
    engine.wait_for("name=\"plies\"");
    engine.close("END");
}
