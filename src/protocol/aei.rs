//! The engine side of the Arimaa Engine Interface (AEI, protocol version 1).
//!
//! [`run_aei`] reads controller messages line by line from any `BufRead`
//! and writes the engine's answers to any `Write`, so the same loop serves
//! stdin/stdout, a socket, or a test driving it in-process. Searches run on
//! a worker thread, so `stop`, `isready` and `makemove` are answered while
//! the engine thinks.
//!
//! Unlike the letter of the AEI document (which says an engine should exit
//! on an unrecognised message), this engine never exits on bad input: an
//! unknown command, a malformed `setposition` or `setoption`, an illegal
//! `makemove`, or a `go` before `newgame` is answered with a
//! `log Error: ...` line that names the command and what was wrong, and the
//! engine keeps serving. Only `quit` or the end of the input ends the loop.
//!
//! A `go`'s time counts from the moment its line was read, and the think
//! time of [`TimeControl::budget_after`] is shortened by twice the worst
//! overhead of the last replies (their time from the `go` line to the written
//! `bestmove` beyond the search's, see [`ReplyClock`]). A search that finds
//! its position critical (alpha-beta's best move changing between
//! iterations, or the previous best refuted) may run on to the longer time
//! of [`TimeControl::think_after`], drawn from the reserve.
//!
//! ```
//! use plies::protocol::{run_aei, AeiConfig};
//! let input = "aei\nisready\nnewgame\nsetoption name setup value standard\ngo\nquit\n";
//! let mut out = Vec::new();
//! run_aei(input.as_bytes(), &mut out, &AeiConfig::new("random".parse().unwrap(), 1)).unwrap();
//! let out = String::from_utf8(out).unwrap();
//! assert!(out.starts_with("protocol-version 1\n"));
//! assert!(out.contains("aeiok\nreadyok\n"));
//! assert!(out.contains("bestmove Ra1 Rb1 Rc1 Rd1 Re1 Rf1 Rg1 Rh1 Da2 Hb2 Cc2 Md2 Ee2 Cf2 Hg2 Dh2"));
//! ```

use super::aei_spec::{centi_rabbits, EngineSpec};
use super::clock::{Reply, ReplyClock};
use super::line::write_line;
use super::timecontrol::{TimeControl, MAX_SECONDS};
use crate::game::arimaa::notation::parse_position_line;
use crate::game::arimaa::{side_name, Arimaa, Piece, Position, Setup};
use crate::game::{Game, Outcome, Side};
use crate::search::game_player::{build_player_in, PlayerContext};
use crate::search::{
    GameSession, OptionError, Player, SearchError, SearchInfo, Searched, StopFlag,
};
use crate::util::{seeded_rng, SeededRng};
use rand::RngExt;
use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

/// How the engine presents itself and plays.
#[derive(Clone, Debug)]
pub struct AeiConfig {
    pub spec: EngineSpec,
    pub seed: u64,
    /// Sent as `id name`.
    pub name: String,
    /// Sent as `id author`.
    pub author: String,
    /// Where the player's checkpoint runs (the CPU by default).
    pub context: PlayerContext,
}

impl AeiConfig {
    pub fn new(spec: EngineSpec, seed: u64) -> AeiConfig {
        AeiConfig {
            name: format!("plies {spec}"),
            author: "plies".into(),
            spec,
            seed,
            context: PlayerContext::default_for::<Arimaa>(),
        }
    }

    /// Builds the player of `spec` in `context` with the builder every
    /// consumer uses; a checkpoint that is missing, unreadable or of
    /// another game is refused here, naming the spec.
    pub fn player(&self) -> Result<Arc<dyn Player<Arimaa>>, SearchError> {
        build_player_in::<Arimaa>(&self.spec.player, &self.context)
    }
}

/// pyrimaa's short board: `[` then the 64 squares from a8 to h1, a space
/// for an empty one, then `]`.
pub fn short_board(pos: &Position) -> String {
    let mut s = String::with_capacity(66);
    s.push('[');
    for rank in (0..8u8).rev() {
        for file in 0..8u8 {
            s.push(pos.piece_at(rank * 8 + file).map_or(' ', Piece::to_char));
        }
    }
    s.push(']');
    s
}

/// The engine's output: lines written whole, under a lock, flushed at once.
struct Out<W> {
    w: Mutex<W>,
    /// Set when a write failed (the controller went away).
    broken: AtomicBool,
}

impl<W: Write> Out<W> {
    fn lines(&self, lines: &[String]) -> io::Result<()> {
        let mut w = self.w.lock().unwrap_or_else(|e| e.into_inner());
        Self::write_locked(&mut *w, lines)
            .inspect_err(|_| self.broken.store(true, Ordering::SeqCst))
    }

    fn line(&self, line: impl Into<String>) -> io::Result<()> {
        self.lines(&[line.into()])
    }

    fn write_locked(w: &mut W, lines: &[String]) -> io::Result<()> {
        for l in lines {
            write_line(w, l)?;
        }
        w.flush()
    }

    /// Writes a search's `lines` unless it was cancelled, deciding under the
    /// lock so that a cancelled search never answers after the cancel was
    /// seen; `last` marks the search as answered, also under the lock.
    fn search_lines(&self, sig: &Signal, lines: &[String], last: bool) -> io::Result<()> {
        let mut w = self.w.lock().unwrap_or_else(|e| e.into_inner());
        if sig.cancel.load(Ordering::SeqCst) {
            return Ok(());
        }
        let r = Self::write_locked(&mut *w, lines)
            .inspect_err(|_| self.broken.store(true, Ordering::SeqCst));
        if last {
            sig.answered.store(true, Ordering::SeqCst);
        }
        r
    }

    /// Sets `cancel` while holding the lock (see [`Out::search_lines`]).
    fn cancel(&self, cancel: &AtomicBool) {
        let _w = self.w.lock().unwrap_or_else(|e| e.into_inner());
        cancel.store(true, Ordering::SeqCst);
    }
}

/// Where the game is.
enum Phase {
    /// Before the first `newgame` (or `setposition`).
    NoGame,
    /// Setups: gold's still to come (`None`) or silver's.
    Setup(Option<Setup>),
    Play(Box<Arimaa>),
}

struct Signal {
    /// Answer now with the best move found.
    stop: StopFlag,
    /// Drop the search without answering.
    cancel: AtomicBool,
    /// The worker has written its bestmove (it is about to end).
    answered: AtomicBool,
}

/// A search on a worker thread.
struct Active<'scope> {
    handle: ScopedJoinHandle<'scope, ()>,
    signal: Arc<Signal>,
    ponder: bool,
}

enum Flow {
    Continue,
    Quit,
}

/// The player's view of the current game (an MCTS tree kept between
/// moves); a search holds the lock while it runs, and every position
/// change waits for the search to end first.
type Session<'p> = Mutex<Box<dyn GameSession<Arimaa> + 'p>>;

struct Engine<'env, 'p, W> {
    out: &'env Out<W>,
    player: &'p dyn Player<Arimaa>,
    session: &'env Session<'p>,
    config: AeiConfig,
    spec: EngineSpec,
    rng: SeededRng,
    opened: bool,
    phase: Phase,
    tc: TimeControl,
    /// The `depth` option, in steps (0: none).
    depth_steps: u32,
    /// What the replies cost beyond their searches (shared with the
    /// search threads, which record it).
    clock: &'env Mutex<ReplyClock>,
}

/// Serves AEI on `input`/`output` until `quit` or the end of the input. At
/// the end of the input a running `go` search is finished and answered
/// first. Errors when writing to `output` fails, or at once (after a
/// `log Error: ...` line on `output`) with [`io::ErrorKind::InvalidInput`]
/// when the player cannot be built (a missing checkpoint, one of another
/// game); build it first with [`AeiConfig::player`] to tell that apart.
pub fn run_aei<R: BufRead, W: Write + Send>(
    input: R,
    mut output: W,
    config: &AeiConfig,
) -> io::Result<()> {
    let player = match config.player() {
        Ok(p) => p,
        Err(e) => {
            write_line(
                &mut output,
                &format!("log Error: cannot start the engine: {e}"),
            )?;
            output.flush()?;
            return Err(io::Error::new(io::ErrorKind::InvalidInput, e.to_string()));
        }
    };
    run_aei_with(input, output, config, player.as_ref())
}

/// [`run_aei`] with a player already built (its spec should be
/// `config.spec`, whose setup choice the engine starts with).
pub fn run_aei_with<R: BufRead, W: Write + Send>(
    mut input: R,
    output: W,
    config: &AeiConfig,
    player: &dyn Player<Arimaa>,
) -> io::Result<()> {
    let out = Out {
        w: Mutex::new(output),
        broken: AtomicBool::new(false),
    };
    let session = Mutex::new(player.session());
    let clock = Mutex::new(ReplyClock::new(Duration::ZERO));
    let mut engine = Engine {
        out: &out,
        player,
        session: &session,
        config: config.clone(),
        spec: config.spec.clone(),
        rng: seeded_rng(config.seed, 0),
        opened: false,
        phase: Phase::NoGame,
        tc: TimeControl::default(),
        depth_steps: 0,
        clock: &clock,
    };
    std::thread::scope(|scope| {
        let mut active: Option<Active<'_>> = None;
        let mut raw = Vec::new();
        loop {
            raw.clear();
            let n = match input.read_until(b'\n', &mut raw) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    engine.log_error(format!("reading the input: {e}"));
                    0
                }
            };
            // A `go`'s clock starts when its line has been read.
            let arrived = Instant::now();
            if n == 0 {
                // End of input: let a real search answer, drop a ponder.
                if let Some(a) = active.take() {
                    if a.ponder {
                        engine.finish(a, true);
                    } else {
                        let _ = a.handle.join();
                    }
                }
                break;
            }
            // Reap a search that has answered.
            if active
                .as_ref()
                .is_some_and(|a| a.handle.is_finished() || a.signal.answered.load(Ordering::SeqCst))
            {
                let a = active.take().expect("checked");
                let _ = a.handle.join();
            }
            let text = String::from_utf8_lossy(&raw);
            let line = text.trim_end_matches(['\n', '\r']);
            if let Flow::Quit = engine.handle(line, arrived, scope, &mut active) {
                if let Some(a) = active.take() {
                    engine.finish(a, true);
                }
                break;
            }
            if out.broken.load(Ordering::SeqCst) {
                if let Some(a) = active.take() {
                    engine.finish(a, true);
                }
                break;
            }
        }
    });
    if out.broken.load(Ordering::SeqCst) {
        return Err(io::Error::new(
            io::ErrorKind::BrokenPipe,
            "the controller stopped reading",
        ));
    }
    Ok(())
}

impl<'env, 'p: 'env, W: Write + Send> Engine<'env, 'p, W> {
    fn send(&self, line: impl Into<String>) {
        let _ = self.out.line(line);
    }

    fn log_error(&self, what: impl std::fmt::Display) {
        self.send(format!("log Error: {what}"));
    }

    fn log_warning(&self, what: impl std::fmt::Display) {
        self.send(format!("log Warning: {what}"));
    }

    /// Ends a worker: `cancel` drops it silently, otherwise it is told to
    /// stop and answers with its best move. Waits for it either way.
    fn finish(&self, a: Active<'_>, cancel: bool) {
        if cancel {
            self.out.cancel(&a.signal.cancel);
        }
        a.signal.stop.raise();
        a.handle.thread().unpark();
        let _ = a.handle.join();
    }

    fn handle<'scope>(
        &mut self,
        line: &str,
        arrived: Instant,
        scope: &'scope Scope<'scope, 'env>,
        active: &mut Option<Active<'scope>>,
    ) -> Flow {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return Flow::Continue;
        }
        let (cmd, rest) = match trimmed.split_once(char::is_whitespace) {
            Some((c, r)) => (c, r.trim_start()),
            None => (trimmed, ""),
        };
        if cmd == "quit" {
            return Flow::Quit;
        }
        if !self.opened && cmd != "aei" {
            self.log_error(format!(
                "expected 'aei' to open the session, got '{}'",
                shorten(trimmed)
            ));
            return Flow::Continue;
        }
        match cmd {
            "aei" => {
                self.opened = true;
                let _ = self.out.lines(&[
                    "protocol-version 1".into(),
                    format!("id name {}", self.config.name),
                    format!("id author {}", self.config.author),
                    format!("id version {}", env!("CARGO_PKG_VERSION")),
                    "aeiok".into(),
                ]);
            }
            "isready" => self.send("readyok"),
            "newgame" => {
                self.drop_search(active);
                self.phase = Phase::Setup(None);
                self.tc.new_game();
                self.new_session();
            }
            "setposition" => {
                self.drop_search(active);
                self.new_session();
                self.setposition(rest);
            }
            "setoption" => self.setoption(rest),
            "makemove" => {
                self.drop_search(active);
                self.makemove(rest);
            }
            "go" => self.go(rest, arrived, scope, active),
            "stop" => match active.take() {
                Some(a) => self.finish(a, false),
                // A stop that crossed our answer on the wire: nothing to do.
                None => self.send("log Debug: stop: no search is running"),
            },
            _ => self.log_error(format!("unknown command '{}'", shorten(trimmed))),
        }
        Flow::Continue
    }

    /// A new game or position: the player forgets what it kept.
    fn new_session(&self) {
        *self.session.lock().unwrap_or_else(|p| p.into_inner()) = self.player.session();
    }

    /// Cancels a running search silently (the position is about to change).
    fn drop_search(&self, active: &mut Option<Active<'_>>) {
        if let Some(a) = active.take() {
            self.finish(a, true);
        }
    }

    fn setposition(&mut self, rest: &str) {
        if rest.is_empty() {
            return self.log_error("setposition: expected 'setposition <g|s> [<64 squares>]'");
        }
        let (pos, tail) = match parse_position_line(rest) {
            Ok(p) => p,
            Err(e) => return self.log_error(format!("setposition: {e}")),
        };
        if tail.is_some() {
            return self.log_error("setposition: a position starts a turn; '| steps' is not AEI");
        }
        let gold = pos.material(Side::First).iter().sum::<u8>();
        let silver = pos.material(Side::Second).iter().sum::<u8>();
        let side = pos.side_to_move();
        self.phase = if gold + silver == 0 && side == Side::First {
            Phase::Setup(None)
        } else if silver == 0 && side == Side::Second {
            match Setup::from_position(&pos, Side::First) {
                Ok(setup) => Phase::Setup(Some(setup)),
                Err(why) => {
                    return self.log_error(format!(
                        "setposition: silver to set up, but gold's pieces are not a setup: {why}"
                    ))
                }
            }
        } else {
            let game = Arimaa::from_position(pos, 2);
            if let Some(r) = game.result() {
                self.log_warning(format!(
                    "setposition: the game in this position is already over ({})",
                    describe_result(r.0, r.1.name())
                ));
            }
            Phase::Play(Box::new(game))
        };
    }

    fn setoption(&mut self, rest: &str) {
        let Some(after) = rest
            .strip_prefix("name")
            .filter(|a| a.is_empty() || a.starts_with(char::is_whitespace))
        else {
            return self.log_error(format!(
                "setoption: expected 'setoption name <id> [value <x>]', got 'setoption {}'",
                shorten(rest)
            ));
        };
        let after = after.trim();
        let (name, value) = match after.split_once(char::is_whitespace) {
            Some((n, v)) => {
                let v = v.trim_start();
                match v.strip_prefix("value") {
                    Some(x) if x.is_empty() || x.starts_with(char::is_whitespace) => {
                        (n, Some(x.trim()))
                    }
                    _ => {
                        return self.log_error(format!(
                            "setoption {n}: expected 'value <x>' after the name, got '{}'",
                            shorten(v)
                        ))
                    }
                }
            }
            None => (after, None),
        };
        if name.is_empty() {
            return self.log_error("setoption: the option name is missing");
        }
        let name_lc = name.to_ascii_lowercase();
        // The reason a value is refused, for the `log Error:` line.
        let number = |v: Option<&str>| -> Result<f64, OptionError> {
            let v = v.ok_or(OptionError::Inconsistent("a value is required"))?;
            match v.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                _ => Err(OptionError::BadValue {
                    key: name.to_string(),
                    value: shorten(v),
                    expected: "a number".into(),
                }),
            }
        };
        match name_lc.as_str() {
            n if TimeControl::is_time_option(n) => match number(value) {
                Ok(x) if x < 0.0 => {
                    self.log_error(format!("setoption {name}: a time cannot be negative"))
                }
                Ok(x) if x > MAX_SECONDS => self.log_error(format!(
                    "setoption {name}: {}",
                    OptionError::bad(
                        name,
                        &shorten(value.unwrap_or("")),
                        format!("at most {MAX_SECONDS} seconds")
                    )
                )),
                Ok(x) => {
                    self.tc.set(n, x);
                }
                Err(e) => self.log_error(format!("setoption {name}: {e}")),
            },
            "depth" => match number(value) {
                Ok(x) => self.depth_steps = if x > 0.0 { x.ceil() as u32 } else { 0 },
                Err(e) => self.log_error(format!("setoption {name}: {e}")),
            },
            "hash" | "opponent_rating" | "rating" | "rated" => {
                if let Err(e) = number(value) {
                    self.log_error(format!("setoption {name}: {e}"))
                }
            }
            "opponent" | "event" => {}
            "setup" => match value.map(str::to_ascii_lowercase).as_deref() {
                Some("standard") => self.spec.standard_setup = true,
                Some("random") => self.spec.standard_setup = false,
                _ => self.log_error(format!(
                    "setoption setup: the value must be random or standard, not '{}'",
                    shorten(value.unwrap_or(""))
                )),
            },
            _ => self.log_warning(format!("setoption: unrecognized option '{name}'")),
        }
    }

    fn makemove(&mut self, rest: &str) {
        let text = strip_turn_label(rest);
        if text.is_empty() {
            return self.log_error("makemove: the move is missing");
        }
        let mut next = None;
        let error = match &mut self.phase {
            Phase::NoGame => Some(format!(
                "makemove '{}': no game yet (send newgame or setposition first)",
                shorten(text)
            )),
            Phase::Setup(gold) => {
                let side = if gold.is_none() {
                    Side::First
                } else {
                    Side::Second
                };
                match (Setup::parse(side, text), gold.as_ref()) {
                    (Err(e), _) => Some(format!(
                        "makemove '{}': not a legal {} setup: {e}",
                        shorten(text),
                        side_name(side)
                    )),
                    (Ok(setup), None) => {
                        *gold = Some(setup);
                        None
                    }
                    (Ok(setup), Some(g)) => match Arimaa::from_setups(g, &setup) {
                        Ok(game) => {
                            next = Some(Phase::Play(Box::new(game)));
                            None
                        }
                        Err(why) => Some(format!("makemove '{}': {why}", shorten(text))),
                    },
                }
            }
            Phase::Play(game) => match game.parse_move(text) {
                Ok(mv) => {
                    // An MCTS tree keeps the subtree of the position reached.
                    self.session
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .observe(game, mv);
                    game.play(mv);
                    None
                }
                Err(e) => Some(format!(
                    "makemove at {}: illegal move: {e}",
                    game.turn_label()
                )),
            },
        };
        if let Some(p) = next {
            self.phase = p;
        }
        if let Some(e) = error {
            self.log_error(e);
        }
    }

    fn go<'scope>(
        &mut self,
        rest: &str,
        arrived: Instant,
        scope: &'scope Scope<'scope, 'env>,
        active: &mut Option<Active<'scope>>,
    ) {
        let ponder = match rest {
            "" => false,
            "ponder" => true,
            other => {
                return self.log_error(format!(
                    "go: expected 'go' or 'go ponder', got 'go {}'",
                    shorten(other)
                ))
            }
        };
        if active.is_some() {
            return self.log_error("go: a search is already running (send stop first)");
        }
        let game = match &self.phase {
            Phase::NoGame => {
                return self.log_error("go: no game yet (send newgame or setposition first)")
            }
            Phase::Setup(gold) => {
                if ponder {
                    // Nothing worth pondering in the setup phase.
                    return;
                }
                let side = if gold.is_none() {
                    Side::First
                } else {
                    Side::Second
                };
                let setup = if self.spec.standard_setup {
                    Setup::standard(side)
                } else {
                    Setup::random(side, &mut self.rng)
                };
                return self.send(format!("bestmove {}", setup.to_notation()));
            }
            Phase::Play(game) => {
                if let Some((outcome, term)) = game.result() {
                    return self.log_error(format!(
                        "go: the game is over ({})",
                        describe_result(outcome, term.name())
                    ));
                }
                game.as_ref().clone()
            }
        };
        let session = self.session;
        let reply_clock = self.clock;
        // The clock's floor is zero: the margin is twice the worst overhead.
        let overhead = lock(reply_clock).margin();
        let think = self.tc.think_after(game.side_to_move(), overhead);
        let clock = think.map(|t| t.target);
        let depth = (self.depth_steps > 0).then(|| self.depth_steps.div_ceil(4).max(1));
        let seed: u64 = self.rng.random();
        let signal = Arc::new(Signal {
            stop: StopFlag::new(),
            cancel: AtomicBool::new(false),
            answered: AtomicBool::new(false),
        });
        let budget = self.spec.budget(clock, depth, ponder);
        let budget = crate::search::Budget {
            stop: Some(signal.stop.clone()),
            // The time counts from the `go` line, not the search's start.
            deadline: budget.time.map(|t| arrived + t),
            // The clock's time for a critical position, when the clock
            // set this move's time (not while pondering).
            critical_deadline: budget.time.and(think).map(|t| arrived + t.critical),
            ..budget
        };
        let out = self.out;
        let worker_signal = Arc::clone(&signal);
        let handle = scope.spawn(move || {
            let sig = worker_signal;
            let mut rng = seeded_rng(seed, 1);
            let mut progress = |info: &SearchInfo| {
                if let Some(d) = info.depth {
                    let _ = out.search_lines(&sig, &[format!("info depth {}", 4 * d)], false);
                }
            };
            let mut session = session.lock().unwrap_or_else(|p| p.into_inner());
            let searching = Instant::now();
            let result = session.search(&game, &budget, &mut rng, &mut progress);
            let searched = searching.elapsed();
            drop(session);
            if ponder {
                // A ponder answers only when told to stop.
                while !sig.stop.is_raised() && !sig.cancel.load(Ordering::SeqCst) {
                    std::thread::park_timeout(Duration::from_millis(100));
                }
            }
            let mut lines = Vec::new();
            let found = match result {
                Ok(s) => s,
                Err(SearchError::NoMoves) => {
                    let no_move = "log Error: go: no legal move in this position".to_string();
                    let _ = out.search_lines(&sig, &[no_move], true);
                    return;
                }
                Err(e) => {
                    lines.push(format!(
                        "log Error: go: {e}; answering with a random legal move"
                    ));
                    match game.random_move(&mut rng, &mut Vec::new()) {
                        Some(mv) => Searched::plain(mv),
                        None => return,
                    }
                }
            };
            lines.extend(info_lines(&game, &found));
            lines.push(format!(
                "info time {}",
                arrived.elapsed().as_secs_f64().round() as u64
            ));
            lines.push(format!("bestmove {}", game.move_to_string(found.mv)));
            let _ = out.search_lines(&sig, &lines, true);
            if !ponder && !sig.cancel.load(Ordering::SeqCst) {
                lock(reply_clock).record(&Reply {
                    arrived,
                    searched,
                    due: budget.deadline,
                    written: Instant::now(),
                });
            }
        });
        *active = Some(Active {
            handle,
            signal,
            ponder,
        });
    }
}

/// The `info` lines of a search: nodes, MCTS's tree, the score and the
/// principal variation (the move), and a warning when the budget cut the
/// search short of its plan.
fn info_lines(game: &Arimaa, searched: &Searched<crate::game::arimaa::Move>) -> Vec<String> {
    let info = &searched.info;
    let mut lines = Vec::new();
    if let Some(n) = info.nodes {
        lines.push(format!("info nodes {n}"));
    }
    if let Some(t) = &info.tree {
        lines.push(format!("info simulations {}", info.nodes.unwrap_or(0)));
        lines.push(format!("info reused {}", t.reused));
        lines.push(format!("info bestvisits {}", t.best_visits));
        lines.push(format!("info bestvalue {:.4}", t.best_value));
    }
    if let Some((seen, planned)) = info.cut_short() {
        lines.push(format!(
            "log Warning: go: the search valued {seen} of {planned} moves before it had to answer"
        ));
    }
    if let Some(score) = info.score {
        lines.push(format!("info score {}", centi_rabbits(score)));
    }
    if info.searched() {
        lines.push(format!("info pv {}", game.move_to_string(searched.mv)));
    }
    lines
}

fn describe_result(outcome: Outcome, how: &str) -> String {
    match outcome {
        Outcome::Win(side) => format!("{} won by {how}", side_name(side)),
        Outcome::Draw => format!("drawn by {how}"),
    }
}

/// A move may come with its turn label (`12g Ed2n ...`, `1w Ra1 ...`):
/// AEI sends none, but records and people do.
fn strip_turn_label(text: &str) -> &str {
    let text = text.trim();
    if let Some((first, rest)) = text.split_once(char::is_whitespace) {
        let digits = first.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let letters = &first[digits.len()..];
        if digits.chars().all(|c| c.is_ascii_digit()) && matches!(letters, "g" | "s" | "w" | "b") {
            return rest.trim_start();
        }
    }
    text
}

/// A lock whose holder panicked is still good here (plain data).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Long garbage is cut for the log line.
fn shorten(text: &str) -> String {
    const MAX: usize = 120;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}...")
    }
}

#[cfg(test)]
mod tests;
