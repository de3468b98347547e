//! OpenSpiel's MCTS bot as an outside opponent.
//!
//! [`SpielMctsPlayer`] plays through `scripts/spiel_mcts_bot.py`, a Python
//! process that runs OpenSpiel's `MCTSBot` with random rollouts. OpenSpiel
//! states cannot be built from a board, so each game is played through a
//! [`GameSession`] that keeps the game's OpenSpiel actions from the start
//! position (every move of both sides, told by [`GameSession::observe`]) and
//! sends them with every request; the process rebuilds the state, searches,
//! and answers the OpenSpiel actions of one whole move (for Amazons three:
//! amazon, destination, arrow, one search each). The answer is mapped back to
//! a plies move and checked against plies' own legal moves.
//!
//! The protocol is JSON lines, one request and one answer per move (see the
//! script's header). A session takes an idle process from the player's pool,
//! or starts one, and gives it back when the game ends, so games played in
//! parallel each have their own process and processes serve one game after
//! another. Processes are killed when the player is dropped. A process that
//! dies, never starts, or does not answer in time gives an error that names
//! the interpreter and the script (and the end of what it wrote to stderr).
//!
//! Which Python: [`SpielMctsOptions::python`], else `$PLIES_SPIEL_PYTHON`,
//! else `.venv-spiel/bin/python` in the working directory or the source
//! tree, else `python3`; it needs `pip install open-spiel==2.0.2`.

use super::{Budget, GameSession, OptionError, Player, SearchError};
use crate::games::GameSupport;
use crate::search::Chosen;
use crate::util::{script_path, SeededRng};
use rand::RngExt;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The environment variable that names the Python with open-spiel.
pub const SPIEL_PYTHON_ENV: &str = "PLIES_SPIEL_PYTHON";
/// The virtual environment looked for when the variable is not set.
pub const SPIEL_VENV: &str = ".venv-spiel";
/// The move server, under `scripts/`.
pub const SPIEL_SCRIPT: &str = "spiel_mcts_bot.py";

/// How long a new process may take to import OpenSpiel and say it is ready.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(120);
/// How much of a process's stderr is kept for error messages.
const STDERR_TAIL: usize = 4000;

/// Which of OpenSpiel's two MCTS bots runs the searches. Both are the same
/// algorithm (UCT with random rollouts); the C++ one is about 100x faster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpielMctsImpl {
    /// `pyspiel.MCTSBot` with `pyspiel.RandomRolloutEvaluator`.
    Cpp,
    /// `open_spiel.python.algorithms.mcts.MCTSBot` with its
    /// `RandomRolloutEvaluator`.
    Python,
}

impl SpielMctsImpl {
    fn as_str(self) -> &'static str {
        match self {
            SpielMctsImpl::Cpp => "cpp",
            SpielMctsImpl::Python => "python",
        }
    }
}

/// Settings of OpenSpiel's MCTS bot and of the process that runs it.
#[derive(Clone, Debug, PartialEq)]
pub struct SpielMctsOptions {
    /// Simulations per search (OpenSpiel's `max_simulations`); key `sims`.
    pub simulations: u32,
    /// Random rollouts per leaf evaluation; key `rollouts`.
    pub rollouts: u32,
    /// The UCT exploration constant; key `c`.
    pub uct_c: f64,
    /// Mixed with a draw from the game's generator into every request's
    /// seed, so a match is reproducible from its seed; key `seed`.
    pub seed: u64,
    /// The interpreter; `None` looks it up (see the module docs); key
    /// `python`.
    pub python: Option<PathBuf>,
    /// Which MCTS bot; key `impl` (`cpp` or `python`). `None`: the C++
    /// bot, or the Python one for games the script defines in Python on
    /// OpenSpiel's games (Atari-Go, [`GameSupport::SPIEL_PYTHON_GAME`]),
    /// which the C++ bot cannot search.
    pub implementation: Option<SpielMctsImpl>,
    /// The longest wait for one move's answer; `None` waits as long as the
    /// process lives; key `timeout` (seconds, 0 = no limit).
    pub move_timeout: Option<Duration>,
}

impl Default for SpielMctsOptions {
    fn default() -> Self {
        SpielMctsOptions {
            simulations: 1000,
            rollouts: 1,
            uct_c: 2.0,
            seed: 0,
            python: None,
            implementation: None,
            move_timeout: Some(Duration::from_secs(600)),
        }
    }
}

/// The keys [`SpielMctsOptions::from_pairs`] reads.
pub const SPIEL_MCTS_KEYS: &str = "sims, rollouts, c, seed, impl, python, timeout";

impl SpielMctsOptions {
    /// Reads `key=value` options over the defaults (1000 simulations, one
    /// rollout, c = 2, seed 0, the C++ bot, 600 s a move). Errors name the
    /// key or the value that is wrong.
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Result<Self, OptionError> {
        fn positive(key: &str, value: &str) -> Result<u32, OptionError> {
            match value.trim().parse::<u32>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(OptionError::bad(key, value, "a whole number of at least 1")),
            }
        }
        let mut o = SpielMctsOptions::default();
        for &(key, value) in pairs {
            let v = value.trim();
            match key.trim() {
                "sims" | "simulations" => o.simulations = positive(key, value)?,
                "rollouts" => o.rollouts = positive(key, value)?,
                "c" | "uct_c" => {
                    o.uct_c = match v.parse::<f64>() {
                        Ok(c) if c.is_finite() && c >= 0.0 => c,
                        _ => return Err(OptionError::bad(key, value, "a number >= 0")),
                    }
                }
                "seed" => {
                    o.seed = v
                        .parse::<u64>()
                        .map_err(|_| OptionError::bad(key, value, "a whole number >= 0"))?
                }
                "impl" => {
                    o.implementation = Some(match v {
                        "cpp" | "c++" => SpielMctsImpl::Cpp,
                        "python" | "py" => SpielMctsImpl::Python,
                        _ => return Err(OptionError::bad(key, value, "cpp or python")),
                    })
                }
                "python" => {
                    if v.is_empty() {
                        return Err(OptionError::bad(key, value, "the path of a Python"));
                    }
                    o.python = Some(PathBuf::from(v))
                }
                "timeout" => {
                    o.move_timeout = match v.parse::<f64>() {
                        Ok(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
                        Ok(s) if s.abs() < f64::MIN_POSITIVE => None,
                        _ => {
                            return Err(OptionError::bad(
                                key,
                                value,
                                "seconds (a number > 0, or 0 for no limit)",
                            ))
                        }
                    }
                }
                other => {
                    return Err(OptionError::Unknown {
                        key: other.to_string(),
                        player: "spiel-mcts",
                        known: SPIEL_MCTS_KEYS.into(),
                    })
                }
            }
        }
        Ok(o)
    }

    /// The interpreter this player runs (see the module docs).
    pub fn python_path(&self) -> PathBuf {
        if let Some(p) = &self.python {
            return p.clone();
        }
        if let Some(p) = std::env::var_os(SPIEL_PYTHON_ENV).filter(|p| !p.is_empty()) {
            return PathBuf::from(p);
        }
        let local = Path::new(SPIEL_VENV).join("bin/python");
        if local.exists() {
            return local;
        }
        let tree = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(SPIEL_VENV)
            .join("bin/python");
        if tree.exists() {
            return tree;
        }
        PathBuf::from("python3")
    }

    /// The label used in reports: `spiel-mcts:sims=N` and every setting
    /// that differs from the default.
    pub fn label(&self) -> String {
        let d = SpielMctsOptions::default();
        let mut s = format!("spiel-mcts:sims={}", self.simulations);
        if self.rollouts != d.rollouts {
            s += &format!(",rollouts={}", self.rollouts);
        }
        if self.uct_c != d.uct_c {
            s += &format!(",c={}", self.uct_c);
        }
        if self.seed != d.seed {
            s += &format!(",seed={}", self.seed);
        }
        if let Some(i) = self.implementation {
            s += &format!(",impl={}", i.as_str());
        }
        s
    }
}

/// `scripts/spiel_mcts_bot.py` (see [`script_path`]).
pub fn spiel_script_path() -> PathBuf {
    script_path(SPIEL_SCRIPT)
}

/// Why a request failed: an error the process answered (it is still fine
/// to use), or the process itself failed (it is dropped).
enum Failure {
    Answered(String),
    Broken(String),
}

/// One running `spiel_mcts_bot.py`.
struct SpielProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<JoinHandle<()>>,
    /// `python script`, for messages.
    what: String,
    next_id: u64,
}

/// Why the bot's process could not be started (`what` is `python script`).
#[derive(Debug, thiserror::Error)]
enum SpawnError {
    #[error("{what}: the script is missing")]
    MissingScript { what: String },
    #[error("{what}: cannot start the Python interpreter: {source}")]
    Interpreter {
        what: String,
        source: std::io::Error,
    },
    /// It started but did not say it was ready (its words, or ours).
    #[error("{0}")]
    NotReady(String),
}

impl SpielProcess {
    fn spawn(python: &Path, script: &Path) -> Result<Self, SpawnError> {
        let what = format!("{} {}", python.display(), script.display());
        if !script.exists() {
            return Err(SpawnError::MissingScript { what });
        }
        let mut cmd = Command::new(python);
        cmd.arg("-u")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group, so that killing it ends anything it started.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().map_err(|source| SpawnError::Interpreter {
            what: what.clone(),
            source,
        })?;
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let tail = Arc::clone(&stderr);
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                t.push_str(&String::from_utf8_lossy(&buf[..n]));
                if t.len() > 2 * STDERR_TAIL {
                    let mut cut = t.len() - STDERR_TAIL;
                    while !t.is_char_boundary(cut) {
                        cut += 1;
                    }
                    t.drain(..cut);
                }
            }
        });
        let stdin = child.stdin.take();
        let mut p = SpielProcess {
            child,
            stdin,
            lines,
            stderr,
            stderr_reader: Some(stderr_reader),
            what,
            next_id: 1,
        };
        let hello = match p.read_line(Some(STARTUP_TIMEOUT), "its ready line") {
            Ok(line) => line,
            Err(Failure::Broken(why) | Failure::Answered(why)) => {
                return Err(SpawnError::NotReady(why))
            }
        };
        match serde_json::from_str::<Value>(&hello) {
            Ok(v) if v.get("ready").and_then(Value::as_bool) == Some(true) => Ok(p),
            Ok(v) if v.get("error").is_some() => Err(SpawnError::NotReady(format!(
                "{}: {}",
                p.what,
                v["error"].as_str().unwrap_or("error")
            ))),
            _ => Err(SpawnError::NotReady(format!(
                "{}: expected a ready line at start, got {hello:?}",
                p.what
            ))),
        }
    }

    /// The end of the process's stderr, as a suffix for messages.
    fn stderr_note(&mut self) -> String {
        // Let the process finish (it closed stdout) so its last words are in.
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        let status = match self.child.try_wait() {
            Ok(Some(s)) => format!(" ({s})"),
            _ => {
                self.kill();
                String::new()
            }
        };
        // The stderr reader ends at EOF; wait a little for it, not forever.
        let deadline = Instant::now() + Duration::from_secs(1);
        while self
            .stderr_reader
            .as_ref()
            .is_some_and(|h| !h.is_finished())
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        let tail = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        let tail = tail.trim();
        if tail.is_empty() {
            status
        } else {
            format!("{status}; its stderr ends:\n{tail}")
        }
    }

    /// The next line it writes, `waiting_for` naming it in errors.
    fn read_line(
        &mut self,
        timeout: Option<Duration>,
        waiting_for: &str,
    ) -> Result<String, Failure> {
        let got = match timeout {
            Some(t) => self.lines.recv_timeout(t),
            None => self
                .lines
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
        };
        match got {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                let note = self.stderr_note();
                Err(Failure::Broken(format!(
                    "{}: {waiting_for} did not come within {} s, process killed{note}",
                    self.what,
                    timeout.unwrap_or_default().as_secs_f64()
                )))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let note = self.stderr_note();
                Err(Failure::Broken(format!(
                    "{}: the process exited before sending {waiting_for}{note}",
                    self.what
                )))
            }
        }
    }

    /// Sends one request and reads its answer.
    fn request(&mut self, mut req: Value, timeout: Option<Duration>) -> Result<Value, Failure> {
        let id = self.next_id;
        self.next_id += 1;
        req["id"] = json!(id);
        let line = format!("{req}\n");
        let sent = match self.stdin.as_mut() {
            Some(stdin) => stdin
                .write_all(line.as_bytes())
                .and_then(|()| stdin.flush()),
            None => Err(std::io::Error::other("stdin closed")),
        };
        if let Err(e) = sent {
            let note = self.stderr_note();
            return Err(Failure::Broken(format!(
                "{}: cannot send the request ({e}){note}",
                self.what
            )));
        }
        let answer = self.read_line(timeout, "an answer")?;
        let v: Value = serde_json::from_str(&answer).map_err(|e| {
            Failure::Broken(format!(
                "{}: answer is not JSON ({e}): {answer:?}",
                self.what
            ))
        })?;
        if v.get("id").and_then(Value::as_u64) != Some(id) {
            return Err(Failure::Broken(format!(
                "{}: expected the answer to request {id}, got {answer:?}",
                self.what
            )));
        }
        if let Some(err) = v.get("error") {
            return Err(Failure::Answered(format!(
                "{}: {}",
                self.what,
                err.as_str().unwrap_or("error")
            )));
        }
        Ok(v)
    }
}

impl SpielProcess {
    /// Kills the process (and its process group) and reaps it.
    fn kill(&mut self) {
        // Only while the process is not yet reaped: its id, which is its
        // group's id (process_group(0)), cannot have been given to another.
        #[cfg(unix)]
        if let (Ok(None), Ok(pid)) = (self.child.try_wait(), i32::try_from(self.child.id())) {
            // SAFETY: kill(2) has no memory effects; the group is ours.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for SpielProcess {
    fn drop(&mut self) {
        drop(self.stdin.take());
        self.kill();
    }
}

/// OpenSpiel's MCTS bot (UCT with random rollouts) behind a Python process.
pub struct SpielMctsPlayer<G: GameSupport> {
    opts: SpielMctsOptions,
    python: PathBuf,
    script: PathBuf,
    idle: Mutex<Vec<SpielProcess>>,
    _game: PhantomData<fn() -> G>,
}

impl<G: GameSupport> SpielMctsPlayer<G> {
    /// A player that starts its processes when games need them.
    pub fn new(opts: SpielMctsOptions) -> Self {
        SpielMctsPlayer {
            python: opts.python_path(),
            script: spiel_script_path(),
            opts,
            idle: Mutex::new(Vec::new()),
            _game: PhantomData,
        }
    }

    /// The settings.
    pub fn options(&self) -> &SpielMctsOptions {
        &self.opts
    }

    /// The bot that searches: the one asked for, else the C++ bot for
    /// OpenSpiel's own games and the Python bot for those the script
    /// defines in Python.
    pub fn implementation(&self) -> SpielMctsImpl {
        self.opts.implementation.unwrap_or(if G::SPIEL_PYTHON_GAME {
            SpielMctsImpl::Python
        } else {
            SpielMctsImpl::Cpp
        })
    }

    /// The interpreter its processes run.
    pub fn python(&self) -> &Path {
        &self.python
    }

    /// Starts one process now and keeps it for the first game, so that a
    /// Python without open-spiel is reported before any game starts.
    pub fn warm_up(&self) -> Result<(), SearchError> {
        let p = self.spawn()?;
        self.idle_pool().push(p);
        Ok(())
    }

    /// Processes waiting for a game.
    pub fn idle_processes(&self) -> usize {
        self.idle_pool().len()
    }

    fn idle_pool(&self) -> std::sync::MutexGuard<'_, Vec<SpielProcess>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn error(&self, why: String) -> SearchError {
        SearchError::Bridge {
            player: self.opts.label(),
            why,
        }
    }

    fn spawn(&self) -> Result<SpielProcess, SearchError> {
        SpielProcess::spawn(&self.python, &self.script).map_err(|e| self.error(e.to_string()))
    }

    fn take_process(&self) -> Result<SpielProcess, SearchError> {
        let idle = self.idle_pool().pop();
        match idle {
            Some(p) => Ok(p),
            None => self.spawn(),
        }
    }

    /// Asks `process` for a move in `state`, reached by `history`.
    fn ask(
        &self,
        process: &mut SpielProcess,
        state: &G,
        history: &[i64],
        rng: &mut SeededRng,
    ) -> Result<G::Move, Failure> {
        let params: serde_json::Map<String, Value> = G::spiel_params(state.size())
            .into_iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        // The request's seed: the player's seed and a draw from the game's
        // generator (the script seeds each search from it and the ply).
        let draw: u32 = rng.random();
        let seed = (self.opts.seed.wrapping_mul(0x9E37_79B9) ^ draw as u64) & ((1 << 53) - 1);
        let req = json!({
            "game": G::SPIEL_NAME.unwrap_or_default(),
            "params": params,
            "history": history,
            "actions": G::SPIEL_ACTIONS,
            "bot": {
                "max_simulations": self.opts.simulations,
                "rollouts": self.opts.rollouts,
                "uct_c": self.opts.uct_c,
                "seed": seed,
                "solve": false,
                "impl": self.implementation().as_str(),
            },
        });
        let answer = process.request(req, self.opts.move_timeout)?;
        let actions: Option<Vec<i64>> = answer
            .get("actions")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().map(Value::as_i64).collect());
        let Some(actions) = actions else {
            return Err(Failure::Broken(format!(
                "{}: the answer has no actions: {answer}",
                process.what
            )));
        };
        let mut legal = Vec::new();
        state.legal_moves(&mut legal);
        match state.spiel_move(&actions) {
            Some(mv) if legal.contains(&mv) => Ok(mv),
            Some(mv) => Err(Failure::Answered(format!(
                "OpenSpiel's MCTS chose actions {actions:?} = {}, which is not legal in \
                 plies' position {}",
                state.move_to_string(mv),
                state.to_text()
            ))),
            None => Err(Failure::Answered(format!(
                "OpenSpiel's MCTS chose actions {actions:?}, which are no {} move on a \
                 {n}x{n} board (position {})",
                G::NAME,
                state.to_text(),
                n = state.size()
            ))),
        }
    }
}

impl<G: GameSupport> Player<G> for SpielMctsPlayer<G> {
    fn name(&self) -> String {
        self.opts.label()
    }

    /// Only from the start position: elsewhere the moves that led there are
    /// unknown, and OpenSpiel rebuilds positions from them. Games are
    /// played through [`Player::session`].
    /// OpenSpiel's bot runs its own simulation count; the budget is not
    /// passed on.
    fn choose_within(&self, state: &G, _budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        if state.ply() != 0 {
            return Err(self.error(format!(
                "OpenSpiel's bot needs a game session (Player::session) that sees every \
                 move from the start; asked without one at ply {}",
                state.ply()
            )));
        }
        let mut session = SpielSession::new(self);
        session.choose(state, rng)
    }

    fn session(&self) -> Box<dyn GameSession<G> + '_> {
        Box::new(SpielSession::new(self))
    }
}

/// One game against OpenSpiel's bot: the OpenSpiel actions since the start
/// and the process that answers.
pub struct SpielSession<'a, G: GameSupport> {
    player: &'a SpielMctsPlayer<G>,
    process: Option<SpielProcess>,
    history: Vec<i64>,
    /// Moves observed (full plies moves).
    moves: u32,
    /// Set when `observe` was told something out of order.
    lost: Option<String>,
}

impl<'a, G: GameSupport> SpielSession<'a, G> {
    fn new(player: &'a SpielMctsPlayer<G>) -> Self {
        SpielSession {
            player,
            process: None,
            history: Vec::new(),
            moves: 0,
            lost: None,
        }
    }

    /// The OpenSpiel actions played so far.
    pub fn history(&self) -> &[i64] {
        &self.history
    }
}

impl<G: GameSupport> GameSession<G> for SpielSession<'_, G> {
    fn choose_within(&mut self, state: &G, _budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        if state.outcome().is_some() {
            return Err(SearchError::NoMoves);
        }
        if let Some(why) = &self.lost {
            return Err(self.player.error(why.clone()));
        }
        if state.ply() != self.moves {
            return Err(self.player.error(format!(
                "the session saw {} moves but the position is at ply {}: OpenSpiel \
                 rebuilds positions from the moves since the start, so every move must \
                 be told to the session (GameSession::observe)",
                self.moves,
                state.ply()
            )));
        }
        let mut process = match self.process.take() {
            Some(p) => p,
            None => self.player.take_process()?,
        };
        match self.player.ask(&mut process, state, &self.history, rng) {
            Ok(mv) => {
                self.process = Some(process);
                Ok(mv)
            }
            Err(Failure::Answered(why)) => {
                self.process = Some(process);
                Err(self.player.error(why))
            }
            Err(Failure::Broken(why)) => Err(self.player.error(why)),
        }
    }

    fn observe(&mut self, before: &G, mv: G::Move) {
        if self.lost.is_none() && before.ply() != self.moves {
            self.lost = Some(format!(
                "the session was told a move at ply {} after {} moves: the game must be \
                 played through the session from its start position",
                before.ply(),
                self.moves
            ));
        }
        self.history.extend(before.to_spiel_actions(mv));
        self.moves += 1;
    }
}

impl<G: GameSupport> Drop for SpielSession<'_, G> {
    fn drop(&mut self) {
        if let Some(p) = self.process.take() {
            self.player.idle_pool().push(p);
        }
    }
}

/// OpenSpiel's MCTS bot as a shared player, its Python checked now (one
/// process is started and kept for the first game).
pub fn spiel_mcts_player<G: GameSupport>(
    opts: SpielMctsOptions,
) -> Result<Arc<dyn Player<G>>, SearchError> {
    if G::SPIEL_NAME.is_none() {
        return Err(SearchError::BadSpec {
            spec: opts.label(),
            why: format!("OpenSpiel has no {}", G::NAME),
        });
    }
    let player = SpielMctsPlayer::<G>::new(opts);
    player.warm_up()?;
    Ok(Arc::new(player))
}

#[cfg(test)]
mod tests;
