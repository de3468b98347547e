//! The brain side of the Gomocup (Piskvork) protocol for free-style Gomoku.
//!
//! [`run_gomocup`] reads manager commands line by line from any `BufRead`
//! and writes the answers to any `Write` (stdin/stdout for a real manager, a
//! byte buffer in tests). Boards of 5x5 to 19x19 are supported (the rules
//! engine's range, [`crate::game::gomoku::MAX_SIZE`]); Gomocup's usual 20x20
//! is answered with `ERROR`.
//!
//! Coordinates are `X,Y` with X the column and Y the row, both from 0 at the
//! top-left, so `X,Y` is cell `Y * n + X` of [`Gomoku`] (row 0 at the top).
//!
//! Commands: `START N`, `RECTSTART W,H` (square boards only), `RESTART`,
//! `BEGIN`, `TURN X,Y`, `BOARD` + `X,Y,F` lines + `DONE` (F = 1 own stone,
//! 2 opponent's, 3 a blocked point of a continuous game), `TAKEBACK X,Y`,
//! `INFO KEY VALUE` (stored, no answer), `ABOUT` and `END`. Bad parameters
//! (an unsupported size, garbled or off-board coordinates, an occupied
//! point, a move before `START`) are answered `ERROR message`; a command the
//! brain does not know is answered `UNKNOWN message`, as the protocol
//! prescribes. A BOARD block missing its `DONE` ends at the next command,
//! which is then served; a board with five in a row already on it is a
//! finished game, answered `ERROR the game is over: ...` instead of a move;
//! an `INFO rule` plies does not play (exactly five, renju, caro) is answered
//! `ERROR` at once (free-style and continuous games are played). The engine
//! never exits on bad input: only `END` or the end of the input ends the
//! loop.
//!
//! Any player spec of [`crate::search::game_player`] plays (the threat
//! search on the learned pattern weights by default; `naive`, `random`, `expert`, `alphabeta:depth=D`, `mcts:sims=N`,
//! `greedy:eval=ckpt:PATH`, `mcts:sims=N,eval=ckpt:PATH`, ...), built by the
//! one player builder for the board size `START` names, drawing from a
//! generator seeded once per session. The manager's clock reaches the
//! search as a [`Budget`] deadline: `INFO timeout_turn` (milliseconds per
//! move) and a twentieth of `INFO time_left` (or of `timeout_match` before
//! the first `time_left`), whichever is tighter (a search that finds its
//! position critical may take up to three times that share of `time_left`,
//! within `timeout_turn`), counted from the moment
//! the command's line was read (a BOARD block's from its `BOARD` line), less
//! a margin of [`SAFETY_MS`] plus twice the worst overhead of the last
//! replies (see [`ReplyClock`]); `PLIES_CLOCK_LOG=1` prints each reply's
//! timing on stderr. A search tree is freed after the reply is written.
//!
//! ```
//! use plies::protocol::{run_gomocup, GomocupConfig};
//! let input = "START 15\nTURN 7,7\nEND\n";
//! let mut out = Vec::new();
//! run_gomocup(input.as_bytes(), &mut out, &GomocupConfig::new("mcts:sims=50", 1)).unwrap();
//! let out = String::from_utf8(out).unwrap();
//! let lines: Vec<&str> = out.lines().collect();
//! assert_eq!(lines[0], "OK");
//! assert_ne!(lines[1], "7,7");
//! assert_eq!(lines.len(), 2);
//! ```

use crate::game::gomoku::MAX_SIZE;
use crate::game::{longest_line_through, Game, Gomoku, GomokuMove};
use crate::search::game_player::{build_player_in, GamePlayerSpec, PlayerContext};
use crate::search::{tighter, Budget, Player, SearchError, CRITICAL_SHARE};
use crate::util::{seeded_rng, SeededRng};
use rand::RngExt;
use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::clock::{Reply, ReplyClock};

/// Smallest board side supported.
pub const MIN_SIZE: usize = 5;

/// The least kept back from every move's time: the manager's clock runs
/// while the answer travels back, which the brain cannot measure. The
/// overhead it measures (its replies beyond their searches) comes on top.
pub const SAFETY_MS: u64 = 50;
/// The match clock is shared out as if this many moves were still to come.
const MOVES_LEFT: u64 = 20;

/// How the brain plays.
#[derive(Clone, Debug)]
pub struct GomocupConfig {
    /// The player spec (see the module docs).
    pub player: String,
    pub seed: u64,
    /// The device of checkpoint evaluators (the board size is `START`'s).
    pub context: PlayerContext,
}

impl Default for GomocupConfig {
    fn default() -> Self {
        GomocupConfig::new("naive", 1)
    }
}

impl GomocupConfig {
    pub fn new(player: &str, seed: u64) -> Self {
        GomocupConfig {
            player: player.to_string(),
            seed,
            context: PlayerContext::default_for::<Gomoku>(),
        }
    }

    /// The player for boards of side `size`; the error names the spec and
    /// what is wrong (a bad key, a checkpoint of another size).
    pub fn player(&self, size: usize) -> Result<Arc<dyn Player<Gomoku>>, SearchError> {
        let spec: GamePlayerSpec = self.player.parse()?;
        let ctx = PlayerContext {
            size,
            ..self.context.clone()
        };
        build_player_in::<Gomoku>(&spec, &ctx)
    }
}

const EMPTY: u8 = 0;
const OWN: u8 = 1;
const OPP: u8 = 2;
/// A point of a continuous game's winning line: taken, by nobody.
const BLOCKED: u8 = 3;

/// The board as the manager sees it: owners relative to this brain.
#[derive(Clone, Debug)]
struct Board {
    n: usize,
    cells: Vec<u8>,
}

impl Board {
    fn new(n: usize) -> Board {
        Board {
            n,
            cells: vec![EMPTY; n * n],
        }
    }

    fn count(&self, code: u8) -> usize {
        self.cells.iter().filter(|&&c| c == code).count()
    }

    fn empties(&self) -> Vec<usize> {
        (0..self.cells.len())
            .filter(|&i| self.cells[i] == EMPTY)
            .collect()
    }

    /// The side with five or more in a row already on the board, if any.
    fn five(&self) -> Option<u8> {
        (0..self.cells.len()).find_map(|i| {
            let code = self.cells[i];
            let owned = matches!(code, OWN | OPP);
            (owned && self.makes_five(i, code)).then_some(code)
        })
    }

    /// Whether a `code` stone on `cell` would be part of five or more.
    fn makes_five(&self, cell: usize, code: u8) -> bool {
        longest_line_through(self.n, cell, |i| self.cells[i] == code) >= 5
    }

    /// The position as a [`Gomoku`] with this brain to move, when the stone
    /// counts allow it (Black moves first, so own == opp makes us Black and
    /// opp == own + 1 makes us White) and no point is blocked.
    fn as_gomoku(&self) -> Option<Gomoku> {
        let (own, opp) = (self.count(OWN), self.count(OPP));
        if self.count(BLOCKED) > 0 {
            return None;
        }
        let (own_ch, opp_ch) = if own == opp {
            ('b', 'w')
        } else if opp == own + 1 {
            ('w', 'b')
        } else {
            return None;
        };
        let mut text = String::with_capacity(self.n * (self.n + 1));
        for r in 0..self.n {
            if r > 0 {
                text.push('/');
            }
            for c in 0..self.n {
                text.push(match self.cells[r * self.n + c] {
                    OWN => own_ch,
                    OPP => opp_ch,
                    _ => '.',
                });
            }
        }
        let g = Gomoku::from_text(&text).ok()?;
        g.outcome().is_none().then_some(g)
    }
}

/// A parse or legality failure, answered as `ERROR <message>`.
type Answer<T> = Result<T, Refusal>;

/// Why a manager's command was refused (answered `ERROR ...`).
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("no board yet: send START N first")]
    NoBoard,
    #[error("unsupported size {0}: plies plays {MIN_SIZE}x{MIN_SIZE} to {MAX_SIZE}x{MAX_SIZE}")]
    Size(usize),
    #[error("rectangular board {0}x{1} unsupported: square boards only")]
    Rectangular(usize, usize),
    #[error("START wants a board size, got '{0}'")]
    StartSize(String),
    #[error("expected {want} comma-separated numbers, got '{text}'")]
    Count { want: usize, text: String },
    #[error("'{part}' is not a non-negative number in '{text}'")]
    Number { part: String, text: String },
    #[error("{x},{y} is off the {n}x{n} board")]
    OffBoard { x: usize, y: usize, n: usize },
    #[error("{0} is already taken")]
    Taken(String),
    #[error("{0} is empty: nothing to take back")]
    Empty(String),
    #[error("field {field} in '{line}' is not 1, 2 or 3")]
    Field { field: usize, line: String },
    #[error("{x},{y} is given twice")]
    Twice { x: usize, y: usize },
    #[error("no empty point left")]
    Full,
    #[error("the game is over: {} five in a row is on the board", if *.0 == OWN { "my" } else { "your" })]
    Over(u8),
    #[error("INFO rule {0}: plies plays free-style Gomoku (five or more in a row wins), also as a continuous game (rule 2); exactly five (1), renju (4) and caro (8) are not supported")]
    Rule(String),
    #[error("BOARD block ended by '{0}' without DONE")]
    Unterminated(String),
    #[error(transparent)]
    Player(#[from] SearchError),
}

fn parse_numbers(text: &str, want: usize) -> Answer<Vec<usize>> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != want {
        return Err(Refusal::Count {
            want,
            text: text.to_string(),
        });
    }
    parts
        .iter()
        .map(|p| {
            p.parse::<usize>().map_err(|_| Refusal::Number {
                part: p.to_string(),
                text: text.to_string(),
            })
        })
        .collect()
}

/// One session: the board and player (after `START`), the generator, the
/// INFO values.
struct Brain {
    config: GomocupConfig,
    rng: SeededRng,
    board: Option<Board>,
    player: Option<Arc<dyn Player<Gomoku>>>,
    info: BTreeMap<String, String>,
    clock: ReplyClock,
    /// `PLIES_CLOCK_LOG=1`: each reply's timing on stderr.
    trace: bool,
    /// The move chosen last, until its reply is written: when its line
    /// arrived, how long it searched, its deadline.
    unanswered: Option<(Instant, Duration, Option<Instant>)>,
}

impl Brain {
    fn new(config: &GomocupConfig) -> Brain {
        Brain {
            config: config.clone(),
            rng: seeded_rng(config.seed, 0),
            board: None,
            player: None,
            info: BTreeMap::new(),
            clock: ReplyClock::new(Duration::from_millis(SAFETY_MS)),
            trace: std::env::var("PLIES_CLOCK_LOG").is_ok_and(|v| v == "1"),
            unanswered: None,
        }
    }

    /// This move's budget from the manager's clock for a command read at
    /// `arrived` (see the module docs); unlimited (the player's own limits)
    /// when the manager sent none.
    fn budget(&self, arrived: Instant) -> Budget {
        let ms = |key: &str| {
            self.info
                .get(key)
                .and_then(|v| v.trim().parse::<i64>().ok())
                .map(|v| v.max(0) as u64)
        };
        // timeout_match 0 means no match limit.
        let left = ms("time_left").or(ms("timeout_match").filter(|&m| m > 0));
        let turn = ms("timeout_turn");
        let Some(limit) = tighter(turn, left.map(|l| l / MOVES_LEFT)) else {
            return Budget::UNLIMITED;
        };
        // A critical position may take more of the match's time, never
        // more than the turn's.
        let critical = tighter(
            turn,
            left.map(|l| l * u64::from(CRITICAL_SHARE) / MOVES_LEFT),
        );
        let due = |ms: u64| self.clock.due(arrived, Duration::from_millis(ms));
        let deadline = due(limit);
        Budget {
            critical_deadline: critical.map(due).filter(|&c| c > deadline),
            ..Budget::until(deadline)
        }
    }

    /// The last move's reply has been written and flushed: what it cost
    /// beyond its search sets the margin of the next.
    fn replied(&mut self) {
        let written = Instant::now();
        if let Some((arrived, searched, due)) = self.unanswered.take() {
            let reply = Reply {
                arrived,
                searched,
                due,
                written,
            };
            let margin = self.clock.margin();
            self.clock.record(&reply);
            if self.trace {
                let ms = |d: Duration| d.as_secs_f64() * 1e3;
                eprintln!(
                    "clock: answered {:.1} ms after the line, searched {:.1} ms, margin {:.1} ms, overhead {:.1} ms",
                    ms(written - arrived),
                    ms(searched),
                    ms(margin),
                    ms(reply.overhead())
                );
            }
        }
    }

    fn board_mut(&mut self) -> Answer<&mut Board> {
        self.board.as_mut().ok_or(Refusal::NoBoard)
    }

    fn start(&mut self, n: usize) -> Answer<()> {
        if !(MIN_SIZE..=MAX_SIZE).contains(&n) {
            return Err(Refusal::Size(n));
        }
        // The player is built for this size (a checkpoint reads one size).
        let player = self.config.player(n)?;
        self.board = Some(Board::new(n));
        self.player = Some(player);
        Ok(())
    }

    /// The cell of `X,Y`, checked against the board.
    fn cell_of(&self, text: &str) -> Answer<usize> {
        let board = self.board.as_ref().ok_or(Refusal::NoBoard)?;
        let v = parse_numbers(text, 2)?;
        let (x, y) = (v[0], v[1]);
        let n = board.n;
        if x >= n || y >= n {
            return Err(Refusal::OffBoard { x, y, n });
        }
        Ok(y * n + x)
    }

    fn coords(&self, cell: usize) -> String {
        let n = self.board.as_ref().map_or(1, |b| b.n);
        format!("{},{}", cell % n, cell / n)
    }

    /// Chooses, plays and names this brain's move for a command read at
    /// `arrived`; a board with five in a row already is a finished game,
    /// refused.
    fn reply_move(&mut self, arrived: Instant) -> Answer<String> {
        let board = self.board_mut()?.clone();
        if let Some(code) = board.five() {
            return Err(Refusal::Over(code));
        }
        let empties = board.empties();
        if empties.is_empty() {
            return Err(Refusal::Full);
        }
        let budget = self.budget(arrived);
        let started = Instant::now();
        let cell = match (board.as_gomoku(), &self.player) {
            (Some(g), Some(player)) => {
                let chosen = player.choose_within(&g, &budget, &mut self.rng);
                let GomokuMove(m) = chosen?;
                m as usize
            }
            // Stone counts no alternating game reaches or a blocked point:
            // the same rules, on the raw board.
            _ => self.fallback(&board, &empties),
        };
        self.unanswered = Some((arrived, started.elapsed(), budget.deadline));
        debug_assert_eq!(board.cells[cell], EMPTY);
        self.board_mut()?.cells[cell] = OWN;
        Ok(self.coords(cell))
    }

    /// On a board that is not a [`Gomoku`] position, whatever the player:
    /// make five if possible, else block the opponent's five, else random.
    fn fallback(&mut self, board: &Board, empties: &[usize]) -> usize {
        for code in [OWN, OPP] {
            let hits: Vec<usize> = empties
                .iter()
                .copied()
                .filter(|&i| board.makes_five(i, code))
                .collect();
            if !hits.is_empty() {
                return hits[self.rng.random_range(0..hits.len())];
            }
        }
        empties[self.rng.random_range(0..empties.len())]
    }

    fn turn(&mut self, arg: &str, arrived: Instant) -> Answer<String> {
        let cell = self.cell_of(arg)?;
        let board = self.board_mut()?;
        if board.cells[cell] != EMPTY {
            return Err(Refusal::Taken(arg.trim().to_string()));
        }
        board.cells[cell] = OPP;
        self.reply_move(arrived)
    }

    fn takeback(&mut self, arg: &str) -> Answer<()> {
        let cell = self.cell_of(arg)?;
        let board = self.board_mut()?;
        if board.cells[cell] == EMPTY {
            return Err(Refusal::Empty(arg.trim().to_string()));
        }
        board.cells[cell] = EMPTY;
        Ok(())
    }

    /// One `X,Y,F` line of a BOARD block.
    fn board_line(&mut self, line: &str) -> Answer<()> {
        let v = parse_numbers(line, 3)?;
        let cell = self.cell_of(&format!("{},{}", v[0], v[1]))?;
        let code = match v[2] {
            1 => OWN,
            2 => OPP,
            3 => BLOCKED,
            field => {
                return Err(Refusal::Field {
                    field,
                    line: line.to_string(),
                })
            }
        };
        let board = self.board_mut()?;
        if board.cells[cell] != EMPTY {
            return Err(Refusal::Twice { x: v[0], y: v[1] });
        }
        board.cells[cell] = code;
        Ok(())
    }
}

fn about() -> String {
    format!(
        "name=\"plies\", version=\"{}\", author=\"plies authors\", country=\"-\"",
        env!("CARGO_PKG_VERSION")
    )
}

/// Writes one answer line and flushes (the manager waits on it).
fn say<W: Write>(out: &mut W, line: &str) -> io::Result<()> {
    super::line::write_line(out, line)?;
    out.flush()
}

fn answer<W: Write>(out: &mut W, r: Answer<String>) -> io::Result<()> {
    match r {
        Ok(line) => say(out, &line),
        Err(why) => say(out, &format!("ERROR {why}")),
    }
}

/// The commands a manager sends (besides a BOARD block's `DONE`).
const COMMANDS: [&str; 10] = [
    "START",
    "RECTSTART",
    "RESTART",
    "BEGIN",
    "TURN",
    "BOARD",
    "TAKEBACK",
    "INFO",
    "ABOUT",
    "END",
];

/// Whether `line` starts with a manager command (a BOARD block's stone
/// lines are numbers).
fn is_command(line: &str) -> bool {
    let word = line.split_whitespace().next().unwrap_or("");
    COMMANDS.iter().any(|c| c.eq_ignore_ascii_case(word))
}

/// Whether plies plays the `INFO rule` bitmask `value`: free-style (0) and
/// the continuous game (2), whose finished lines the manager blocks.
fn supported_rule(value: &str) -> bool {
    matches!(value.trim().parse::<u32>(), Ok(0 | 2))
}

/// Reads one line (lossy UTF-8, CR/LF trimmed); `None` at the end.
fn next_line<R: BufRead>(input: &mut R, buf: &mut Vec<u8>) -> io::Result<Option<String>> {
    loop {
        buf.clear();
        match input.read_until(b'\n', buf) {
            Ok(0) => return Ok(None),
            Ok(_) => return Ok(Some(String::from_utf8_lossy(buf).trim().to_string())),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Serves one manager until `END` or the end of `input`.
pub fn run_gomocup<R: BufRead, W: Write>(
    mut input: R,
    mut output: W,
    config: &GomocupConfig,
) -> io::Result<()> {
    let mut brain = Brain::new(config);
    let mut buf = Vec::new();
    // A command read while reading a BOARD block (and when), served next.
    let mut pending: Option<(String, Instant)> = None;
    loop {
        // The move's clock starts when its line has been read.
        let (line, arrived) = match pending.take() {
            Some(p) => p,
            None => match next_line(&mut input, &mut buf)? {
                Some(l) => (l, Instant::now()),
                None => break,
            },
        };
        if line.is_empty() {
            continue;
        }
        let (cmd, arg) = match line.split_once(char::is_whitespace) {
            Some((c, a)) => (c.to_ascii_uppercase(), a.trim()),
            None => (line.to_ascii_uppercase(), ""),
        };
        let out = &mut output;
        match cmd.as_str() {
            "END" => return Ok(()),
            "START" => {
                let r = arg
                    .parse::<usize>()
                    .map_err(|_| Refusal::StartSize(arg.to_string()))
                    .and_then(|n| brain.start(n));
                answer(out, r.map(|()| "OK".to_string()))?;
            }
            "RECTSTART" => {
                let r = parse_numbers(arg, 2).and_then(|v| {
                    if v[0] != v[1] {
                        Err(Refusal::Rectangular(v[0], v[1]))
                    } else {
                        brain.start(v[0])
                    }
                });
                answer(out, r.map(|()| "OK".to_string()))?;
            }
            "RESTART" => {
                let r = brain.board_mut().map(|b| *b = Board::new(b.n));
                answer(out, r.map(|()| "OK".to_string()))?;
            }
            "BEGIN" => {
                let r = brain.reply_move(arrived);
                answer(out, r)?;
                brain.replied();
            }
            "TURN" => {
                let r = brain.turn(arg, arrived);
                answer(out, r)?;
                brain.replied();
            }
            "TAKEBACK" => {
                let r = brain.takeback(arg);
                answer(out, r.map(|()| "OK".to_string()))?;
            }
            "BOARD" => {
                let fresh = brain.board_mut().map(|b| *b = Board::new(b.n));
                if let Err(why) = &fresh {
                    // The block is still read, so that its stone lines are
                    // not taken for commands.
                    say(out, &format!("ERROR {why}"))?;
                }
                let mut done = false;
                while let Some(l) = next_line(&mut input, &mut buf)? {
                    if l.eq_ignore_ascii_case("DONE") {
                        done = true;
                        break;
                    }
                    if is_command(&l) {
                        // A manager that never sends DONE must not lose
                        // its next commands: the block ends here.
                        say(out, &format!("ERROR {}", Refusal::Unterminated(l.clone())))?;
                        pending = Some((l, Instant::now()));
                        break;
                    }
                    if l.is_empty() || fresh.is_err() {
                        continue;
                    }
                    if let Err(why) = brain.board_line(&l) {
                        say(out, &format!("ERROR {why}"))?;
                    }
                }
                if done && fresh.is_ok() {
                    // The manager's clock runs from the BOARD line.
                    let r = brain.reply_move(arrived);
                    answer(out, r)?;
                    brain.replied();
                }
            }
            "INFO" => {
                let mut parts = arg.splitn(2, char::is_whitespace);
                match parts.next().filter(|k| !k.is_empty()) {
                    Some(key) => {
                        let value = parts.next().unwrap_or("").trim().to_string();
                        let key = key.to_ascii_lowercase();
                        if key == "rule" && !supported_rule(&value) {
                            say(out, &format!("ERROR {}", Refusal::Rule(value.clone())))?;
                        }
                        brain.info.insert(key, value);
                    }
                    None => say(out, "ERROR INFO wants a key and a value")?,
                }
            }
            "ABOUT" => say(out, &about())?,
            _ => say(
                out,
                &format!(
                    "UNKNOWN command '{cmd}' (plies knows {})",
                    COMMANDS.join(", ")
                ),
            )?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
