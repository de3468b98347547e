//! Self-play runs: N games between two player specs, played in parallel,
//! written as game records in chunk files, resumable after an interruption.
//!
//! Game `i` draws every random choice (its opening setups, the players'
//! moves, the `epsilon` exploration) from `seeded_rng(seed, i)` alone, so
//! the records do not depend on the number of threads or on how often the
//! run was interrupted. A run directory holds
//!
//! * `selfplay.json`: the [`SelfplayConfig`], written first (the run's
//!   fingerprint, see [`crate::util::run_dir`]). A run started again on the
//!   directory with the same configuration plays only the chunks that are
//!   missing; with another configuration it is refused (naming the
//!   differing fields) unless forced, which starts over.
//! * `games/part-NNNNN.jsonl`: [`GameRecord`]s, one chunk of
//!   `chunk_games` consecutive games per file (see [`super::chunks`]).
//! * `selfplay-summary.json`: the [`SelfplaySummary`] of all the games,
//!   written last.
//!
//! Records replay with [`GameSupport::record_start`], `parse_move` and
//! `play`: Arimaa records carry the two setups, games at a board size other
//! than the standard carry `board_size`. `termination` is Arimaa's own
//! (`goal`, `elimination`, `immobilization`, `repetition`), `win` or `draw`
//! for the other games, and `unfinished` (no result) for a game stopped at
//! `max_plies`.

use super::chunks::{self, chunk_count, chunk_path, chunk_range, GAMES_DIR};
use super::Shard;
use crate::game::{Game, Outcome, Side};
pub use crate::games::Openings;
use crate::games::{GameSupport, SupportError};
use crate::record::{GameRecord, PerSide, RecordError, RecordReader, RecordWriter};
use crate::report::ReportError;
use crate::search::game_player::{build_player, GamePlayerSpec};
use crate::search::{Player, SearchError};
use crate::util::run_dir::{RunDir, RunDirError};
use crate::util::seeded_rng;
use fingerprint::check_config;
use rand::RngExt;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use thiserror::Error;

/// The configuration file in a run directory.
pub const CONFIG_FILE: &str = "selfplay.json";
/// The summary file in a run directory.
pub const SUMMARY_FILE: &str = "selfplay-summary.json";
/// The version of the run directory layout.
pub const FORMAT: u32 = 1;
/// Games per chunk file unless told otherwise.
pub const DEFAULT_CHUNK_GAMES: u64 = 256;

#[derive(Debug, Error)]
pub enum SelfplayError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error("{path}: not a self-play configuration: {why}")]
    BadConfigFile { path: PathBuf, why: String },
    #[error(
        "{path} holds another run: '{field}' was {was}, now {now}{more}; \
         use the same arguments to resume it, or --force to start over"
    )]
    ConfigMismatch {
        path: PathBuf,
        field: String,
        was: String,
        now: String,
        /// The other differing fields, if any (", also ...").
        more: String,
    },
    #[error("{path} holds game chunks but no {CONFIG_FILE}; use --force to start over there")]
    ForeignDir { path: PathBuf },
    #[error("{path}: expected {expected} records (games {first}..{end}), found {found}; use --force to start over")]
    BadChunk {
        path: PathBuf,
        expected: u64,
        found: u64,
        first: u64,
        end: u64,
    },
    #[error("{path}:{line}: record '{id}' is not game {expected_id} of this run")]
    UnexpectedRecord {
        path: PathBuf,
        line: usize,
        id: String,
        expected_id: String,
    },
    #[error("bad option: {0}")]
    Options(String),
    #[error(transparent)]
    Support(#[from] SupportError),
    #[error("player '{player}': {source}")]
    Spec {
        player: String,
        source: Box<SearchError>,
    },
    #[error("game {game}: player '{player}': {source}")]
    Player {
        game: u64,
        player: String,
        source: Box<SearchError>,
    },
    #[error("game {game}: {why}")]
    Start { game: u64, why: String },
    #[error("thread pool: {0}")]
    Pool(String),
    /// The run directory is held by another writer, or its configuration
    /// could not be stored.
    #[error(transparent)]
    RunDir(#[from] RunDirError),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SelfplayError + '_ {
    move |source| SelfplayError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The game, its board and the two players: set by a run's configuration,
/// repeated in its summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Matchup {
    /// The game's machine name.
    pub game: String,
    /// Board side length.
    pub board_size: usize,
    /// The first player's spec (Arimaa: gold), with its evaluator named.
    pub white: String,
    /// The second player's spec.
    pub black: String,
    /// Whether `white` and `black` swap colours in odd games.
    pub alternate: bool,
}

/// Everything that decides a run's records. Two runs with equal
/// configurations write identical files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SelfplayConfig {
    /// [`FORMAT`].
    pub format: u32,
    #[serde(flatten)]
    pub matchup: Matchup,
    pub games: u64,
    pub seed: u64,
    /// Chance that a move is replaced by a random one (Arimaa: a
    /// `random-steps` turn).
    pub epsilon: f64,
    /// Games still going after this many moves end `unfinished`.
    pub max_plies: u32,
    /// Arimaa: where setups come from (`archive:...`, `random`,
    /// `file:PATH`); `None` for other games.
    pub setups: Option<String>,
    /// Arimaa `file:` setups: the file's SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setups_sha256: Option<String>,
    /// Record ids are `<id_prefix>-<game index>`.
    pub id_prefix: String,
    /// Games per chunk file.
    pub chunk_games: u64,
    /// `--shard I/N`: this directory holds only the chunks `c` with
    /// `c mod N == I` (absent from unsharded runs' files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

impl SelfplayConfig {
    /// Checks the values that do not depend on the game.
    pub fn check(&self) -> Result<(), SelfplayError> {
        let bad = |s: String| Err(SelfplayError::Options(s));
        if self.games == 0 {
            return bad("--games must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.epsilon) {
            return bad(format!(
                "--epsilon {} is not a probability in 0..=1",
                self.epsilon
            ));
        }
        if self.chunk_games == 0 {
            return bad("--chunk-games must be at least 1".into());
        }
        if self.max_plies == 0 {
            return bad("--max-plies must be at least 1".into());
        }
        if let Some(shard) = self.shard {
            let chunks = chunk_count(self.games, self.chunk_games);
            if shard.index >= chunks {
                return bad(format!(
                    "--shard {shard} has no games: {} games make only {chunks} chunk(s) of \
                     --chunk-games {}; use fewer shards or smaller chunks",
                    self.games, self.chunk_games
                ));
            }
        }
        if self.id_prefix.is_empty() || self.id_prefix.chars().any(char::is_whitespace) {
            return bad(format!(
                "--id-prefix '{}' must be non-empty without spaces",
                self.id_prefix
            ));
        }
        Ok(())
    }

    /// The default id prefix for a seed.
    pub fn default_id_prefix(seed: u64) -> String {
        format!("sp{seed}")
    }

    /// The chunks this directory holds: all of them, or its shard's.
    pub fn chunks(&self) -> impl Iterator<Item = u64> + '_ {
        (0..chunk_count(self.games, self.chunk_games))
            .filter(|&c| self.shard.is_none_or(|s| s.owns(c)))
    }

    /// How many games this directory holds when finished.
    pub fn own_games(&self) -> u64 {
        self.chunks()
            .map(|c| {
                let r = chunk_range(c, self.chunk_games, self.games);
                r.end - r.start
            })
            .sum()
    }

    /// The record id of game `index`.
    pub fn game_id(&self, index: u64) -> String {
        format!("{}-{index}", self.id_prefix)
    }

    /// The player specs of game `index`: (first, second), and whether
    /// `white` plays second.
    pub fn sides(&self, index: u64) -> (&str, &str, bool) {
        let m = &self.matchup;
        if m.alternate && index % 2 == 1 {
            (&m.black, &m.white, true)
        } else {
            (&m.white, &m.black, false)
        }
    }
}

/// The two players of a run.
pub struct Players<G: Game> {
    pub white: Arc<dyn Player<G>>,
    pub black: Arc<dyn Player<G>>,
}

/// Builds both players; the error names the spec.
pub fn build_players<G: GameSupport>(
    white: &str,
    black: &str,
) -> Result<Players<G>, SelfplayError> {
    let one = |text: &str| -> Result<Arc<dyn Player<G>>, SelfplayError> {
        let spec = |source: SearchError| SelfplayError::Spec {
            player: text.to_string(),
            source: Box::new(source),
        };
        let parsed: GamePlayerSpec = text.parse().map_err(spec)?;
        build_player::<G>(&parsed).map_err(spec)
    };
    Ok(Players {
        white: one(white)?,
        black: one(black)?,
    })
}

/// Plays game `index` of the run and returns its record.
pub fn play_game<G: GameSupport>(
    cfg: &SelfplayConfig,
    players: &Players<G>,
    openings: &Openings,
    index: u64,
) -> Result<GameRecord, SelfplayError> {
    let mut rng = seeded_rng(cfg.seed, index);
    let (first_name, second_name, swapped) = cfg.sides(index);
    let (first, second) = if swapped {
        (&players.black, &players.white)
    } else {
        (&players.white, &players.black)
    };
    let (mut g, setups) =
        G::start(cfg.matchup.board_size, openings, &mut rng).map_err(|e| SelfplayError::Start {
            game: index,
            why: e.to_string(),
        })?;
    let mut moves = Vec::new();
    let mut explored = Vec::new();
    let mut scratch = Vec::new();
    // One session per player for the game: searches keep their trees.
    let mut sessions = [first.session(), second.session()];
    while g.outcome().is_none() && moves.len() < cfg.max_plies as usize {
        let side = g.side_to_move();
        let (player, mover) = match side {
            Side::First => (first, 0),
            Side::Second => (second, 1),
        };
        let player_err = |source| SelfplayError::Player {
            game: index,
            player: player.name(),
            source: Box::new(source),
        };
        let explore = cfg.epsilon > 0.0 && rng.random_bool(cfg.epsilon);
        let mv = if explore {
            explored.push(moves.len() as u32);
            g.exploration_move(&mut rng, &mut scratch)
                .ok_or(SearchError::NoMoves)
                .map_err(player_err)?
        } else {
            sessions[mover].choose(&g, &mut rng).map_err(player_err)?
        };
        for s in &mut sessions {
            s.observe(&g, mv);
        }
        moves.push(g.move_to_string(mv));
        g.play(mv);
    }
    let result = match g.outcome() {
        Some(Outcome::Win(s)) => Some(s),
        _ => None,
    };
    Ok(GameRecord {
        game: G::NAME.to_string(),
        id: cfg.game_id(index),
        source: format!("selfplay:{first_name}-vs-{second_name}"),
        event: "selfplay".into(),
        players: PerSide::new(first_name.to_string(), second_name.to_string()),
        ratings: PerSide::new(None, None),
        player_types: None,
        setups,
        plies: moves.len() as u32,
        moves,
        result,
        termination: g.termination_name().to_string(),
        rated: None,
        start_time: None,
        board_size: (cfg.matchup.board_size != G::DEFAULT_SIZE).then_some(cfg.matchup.board_size),
        explored,
    })
}

/// What is left to do in a run directory.
#[derive(Clone, Debug)]
pub struct Plan {
    pub dir: PathBuf,
    /// Chunks still to play, in order.
    pub missing: Vec<u64>,
    /// Games in finished chunks.
    pub games_done: u64,
    /// Chunks already finished.
    pub chunks_done: u64,
    /// Temporary files of an interrupted run that were removed.
    pub stale_removed: usize,
}

/// Prepares `dir` for `cfg`: writes the configuration of a new run, or
/// checks that of a run to resume (`force` starts over, removing its
/// chunks and summary), removes temporary files of an interrupted run, and
/// lists the chunks still to play. A finished chunk must hold exactly its
/// games. The caller holds `dir` for the whole run ([`RunDir::claim`]).
pub fn prepare(dir: &Path, cfg: &SelfplayConfig, force: bool) -> Result<Plan, SelfplayError> {
    cfg.check()?;
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let config_path = dir.join(CONFIG_FILE);
    let games_dir = dir.join(GAMES_DIR);
    let (existing, temps) = chunks::scan(&games_dir).map_err(io_err(&games_dir))?;
    if force || !config_path.exists() {
        if !force && !existing.is_empty() {
            return Err(SelfplayError::ForeignDir { path: games_dir });
        }
        // The games and summary go before the configuration: a kill in
        // between leaves the old run, resumable as it was.
        let summary = dir.join(SUMMARY_FILE);
        let old = existing
            .iter()
            .map(|(_, p)| p)
            .chain([&summary, &config_path]);
        for p in old.filter(|p| p.exists()) {
            std::fs::remove_file(p).map_err(io_err(p))?;
        }
    }
    check_config(&config_path, cfg)?;
    let mut stale_removed = 0;
    for t in &temps {
        std::fs::remove_file(t).map_err(io_err(t))?;
        stale_removed += 1;
    }
    std::fs::create_dir_all(&games_dir).map_err(io_err(&games_dir))?;
    let mut missing = Vec::new();
    let (mut games_done, mut chunks_done) = (0, 0);
    for c in cfg.chunks() {
        let path = chunk_path(&games_dir, c);
        if !path.exists() {
            missing.push(c);
            continue;
        }
        let range = chunk_range(c, cfg.chunk_games, cfg.games);
        let found = chunks::count_lines(&path).map_err(io_err(&path))?;
        let expected = range.end - range.start;
        if found != expected {
            return Err(SelfplayError::BadChunk {
                path,
                expected,
                found,
                first: range.start,
                end: range.end,
            });
        }
        games_done += expected;
        chunks_done += 1;
    }
    Ok(Plan {
        dir: dir.to_path_buf(),
        missing,
        games_done,
        chunks_done,
        stale_removed,
    })
}

/// Games and plies played by [`execute`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Played {
    pub games: u64,
    pub plies: u64,
    pub chunks: u64,
    pub seconds: f64,
}

/// Plays the missing chunks of `plan` on a pool of `threads` threads (0:
/// all cores), writing each chunk when all its games are done. `on_game`
/// is called after every game with its number of plies.
pub fn execute<G: GameSupport>(
    plan: &Plan,
    cfg: &SelfplayConfig,
    openings: &Openings,
    threads: usize,
    on_game: &(dyn Fn(u32) + Sync),
) -> Result<Played, SelfplayError> {
    let players = build_players::<G>(&cfg.matchup.white, &cfg.matchup.black)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| SelfplayError::Pool(e.to_string()))?;
    let games_dir = plan.dir.join(GAMES_DIR);
    let start = Instant::now();
    let (games, plies) = (AtomicU64::new(0), AtomicU64::new(0));
    pool.install(|| {
        plan.missing.par_iter().try_for_each(|&c| {
            let range = chunk_range(c, cfg.chunk_games, cfg.games);
            let records: Vec<GameRecord> = range
                .into_par_iter()
                .map(|i| {
                    let rec = play_game::<G>(cfg, &players, openings, i)?;
                    games.fetch_add(1, Ordering::Relaxed);
                    plies.fetch_add(rec.plies as u64, Ordering::Relaxed);
                    on_game(rec.plies);
                    Ok(rec)
                })
                .collect::<Result<_, SelfplayError>>()?;
            let mut w = RecordWriter::create(chunk_path(&games_dir, c), false)?;
            for rec in &records {
                w.write(rec)?;
            }
            w.finish()?;
            Ok::<(), SelfplayError>(())
        })
    })?;
    Ok(Played {
        games: games.into_inner(),
        plies: plies.into_inner(),
        chunks: plan.missing.len() as u64,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Results from one side's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wdl {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub unfinished: u64,
}

impl Wdl {
    fn add(&mut self, result: Option<Side>, me: Side, finished: bool) {
        match result {
            _ if !finished => self.unfinished += 1,
            Some(w) if w == me => self.wins += 1,
            Some(_) => self.losses += 1,
            None => self.draws += 1,
        }
    }
}

/// All the games of a run directory, and the speed of the last run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SelfplaySummary {
    #[serde(flatten)]
    pub matchup: Matchup,
    pub games: u64,
    /// Results by colour: the first player's (Arimaa: gold) and the second's.
    pub first: Wdl,
    pub second: Wdl,
    /// Results by player: `white`'s and `black`'s (they differ from the
    /// colours' with `alternate`).
    pub white_player: Wdl,
    pub black_player: Wdl,
    pub unfinished: u64,
    pub terminations: BTreeMap<String, u64>,
    /// Moves in all games (one position before each).
    pub plies: u64,
    pub average_plies: f64,
    /// What this invocation played.
    pub played: Played,
    pub games_per_second: f64,
    pub positions_per_second: f64,
    pub threads: usize,
    pub chunks_resumed: u64,
    pub records: String,
}

/// Reads every chunk of a finished run and sums it up; `played` is what
/// this invocation did. Checks that each record is the game its position
/// says.
pub fn summarise(
    dir: &Path,
    cfg: &SelfplayConfig,
    played: Played,
    threads: usize,
    chunks_resumed: u64,
) -> Result<SelfplaySummary, SelfplayError> {
    let games_dir = dir.join(GAMES_DIR);
    let mut s = SelfplaySummary {
        matchup: cfg.matchup.clone(),
        games: 0,
        first: Wdl::default(),
        second: Wdl::default(),
        white_player: Wdl::default(),
        black_player: Wdl::default(),
        unfinished: 0,
        terminations: BTreeMap::new(),
        plies: 0,
        average_plies: 0.0,
        played,
        games_per_second: rate(played.games, played.seconds),
        positions_per_second: rate(played.plies, played.seconds),
        threads,
        chunks_resumed,
        records: games_dir.display().to_string(),
    };
    for c in cfg.chunks() {
        let path = chunk_path(&games_dir, c);
        let range = chunk_range(c, cfg.chunk_games, cfg.games);
        for (line, (rec, index)) in RecordReader::open(&path)?.zip(range).enumerate() {
            let rec = rec?;
            let expected_id = cfg.game_id(index);
            if rec.id != expected_id {
                return Err(SelfplayError::UnexpectedRecord {
                    path,
                    line: line + 1,
                    id: rec.id,
                    expected_id,
                });
            }
            let finished = rec.termination != "unfinished";
            let (_, _, swapped) = cfg.sides(index);
            s.games += 1;
            s.plies += rec.plies as u64;
            s.unfinished += u64::from(!finished);
            *s.terminations.entry(rec.termination.clone()).or_default() += 1;
            s.first.add(rec.result, Side::First, finished);
            s.second.add(rec.result, Side::Second, finished);
            let white_side = if swapped { Side::Second } else { Side::First };
            s.white_player.add(rec.result, white_side, finished);
            s.black_player.add(rec.result, white_side.other(), finished);
        }
    }
    s.average_plies = if s.games > 0 {
        s.plies as f64 / s.games as f64
    } else {
        0.0
    };
    crate::report::write_json(dir.join(SUMMARY_FILE), &s)?;
    Ok(s)
}

fn rate(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

/// A whole run, its directory held throughout: [`prepare`], [`execute`],
/// [`summarise`].
pub fn run<G: GameSupport>(
    dir: &Path,
    cfg: &SelfplayConfig,
    openings: &Openings,
    threads: usize,
    force: bool,
    on_game: &(dyn Fn(u32) + Sync),
) -> Result<SelfplaySummary, SelfplayError> {
    // One writer per run directory, until the summary is written.
    let _run_dir = RunDir::claim(dir)?;
    let plan = prepare(dir, cfg, force)?;
    let played = execute::<G>(&plan, cfg, openings, threads, on_game)?;
    summarise(dir, cfg, played, threads, plan.chunks_done)
}

mod fingerprint;
#[cfg(test)]
mod tests;
