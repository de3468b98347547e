//! An engine on a thread with a controller's view of it: input fed line by
//! line from a channel, output read back line by line, and the exchanges
//! the tests share (a whole game, pondering, the `info` lines).

use crate::game::arimaa::{Arimaa, Setup};
use crate::game::{Game, Side};
use crate::protocol::{run_aei, short_board, AeiConfig};
use std::io::{self, BufReader, Read, Write};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Input fed line by line from a channel; closing the channel is the end
/// of the input.
struct ChanReader {
    pub(super) rx: Receiver<String>,
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
    pub(super) tx: Sender<String>,
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

pub(super) const WAIT: Duration = Duration::from_secs(20);

/// An engine on a thread, with a controller's view of it.
pub(super) struct Driver {
    pub(super) tx: Option<Sender<String>>,
    pub(super) rx: Receiver<String>,
    pub(super) handle: Option<JoinHandle<io::Result<()>>>,
}

impl Driver {
    pub(super) fn start(spec: &str, seed: u64) -> Driver {
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
    pub(super) fn open(spec: &str, seed: u64) -> Driver {
        let d = Driver::start(spec, seed);
        d.send("aei");
        d.until("aeiok");
        d
    }

    pub(super) fn send(&self, line: &str) {
        self.send_raw(format!("{line}\n").as_bytes());
    }

    pub(super) fn send_raw(&self, bytes: &[u8]) {
        self.tx.as_ref().expect("open").send(lossy(bytes)).unwrap();
    }

    pub(super) fn next(&self, timeout: Duration) -> Option<String> {
        match self.rx.recv_timeout(timeout) {
            Ok(l) => Some(l),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Lines up to and including the first that starts with `prefix`.
    pub(super) fn until(&self, prefix: &str) -> Vec<String> {
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
    pub(super) fn sync(&self) -> Vec<String> {
        self.send("isready");
        let mut lines = self.until("readyok");
        lines.pop();
        lines
    }

    /// `go` and the move it answers with.
    pub(super) fn go(&self) -> String {
        bestmove(self.go_lines().last().unwrap())
    }

    /// `go` and every line up to its `bestmove`, which contain no error.
    pub(super) fn go_lines(&self) -> Vec<String> {
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
    pub(super) fn join(mut self) -> io::Result<()> {
        let h = self.handle.take().unwrap();
        let end = Instant::now() + WAIT;
        while !h.is_finished() {
            assert!(Instant::now() < end, "the engine did not stop");
            std::thread::sleep(Duration::from_millis(5));
        }
        h.join().unwrap()
    }

    pub(super) fn close(mut self) -> io::Result<()> {
        self.tx = None;
        self.join()
    }
}

/// The channel carries `String`s; invalid UTF-8 reaches the engine as the
/// replacement character, which is garbage all the same.
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub(super) fn bestmove(line: &str) -> String {
    line.strip_prefix("bestmove ")
        .unwrap_or_else(|| panic!("not a bestmove: {line}"))
        .to_string()
}

/// Plays a whole game with one engine on both sides, checking every answer
/// against our own copy of the game.
pub(super) fn self_play(spec: &str, seed: u64, max_plies: u32) -> Arimaa {
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

/// A position where gold has an ordinary turn ahead.
pub(super) fn opening_driver(spec: &str) -> Driver {
    let d = Driver::open(spec, 1);
    d.send(&format!(
        "setposition g {}",
        short_board(Arimaa::new().position())
    ));
    d
}

/// `go ponder` from the opening says nothing for `wait_ms`, then `stop`
/// answers a legal move.
pub(super) fn ponder_answers_when_stopped(d: &Driver, spec: &str, wait_ms: u64) {
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

/// The value of `name` in the `info name value` lines.
pub(super) fn info<'a>(lines: &'a [String], name: &str) -> Option<&'a str> {
    let prefix = format!("info {name} ");
    lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
}
