//! The game database: self-play between the `db_players`, cut games
//! adjudicated as the thesis does, written to `OUT/db/games/` in chunks of
//! `db_chunk` games (each chunk a `part-NNNNN.jsonl` of records and a
//! `part-NNNNN.json` of [`DbStats`]), so that an interrupted run resumes at
//! the first missing chunk. A chunk whose stats count other games than its
//! range holds (the last one, after `db_games` changed) is played again.

use super::config::{player, AmazonsExperimentConfig};
use super::error::{file_error, AmazonsExperimentError, Result};
use crate::game::{Amazons, Game, Outcome, Side};
use crate::games::GameSupport;
use crate::infer::Evaluator;
use crate::record::{GameRecord, PerSide};
use crate::report::write_json;
use crate::search::evaluators::{evaluator_by_name, EvalContext};
use crate::search::Player;
use crate::util::{seeded_rng, write_atomic};
use indicatif::ProgressBar;
use rand::seq::IndexedRandom;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What one chunk of the database holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DbStats {
    pub played: u64,
    /// Finished games kept.
    pub finished: u64,
    /// Games cut at the ply limit whose leader, played by the simple player,
    /// still beat the good player: kept, labelled with the leader's win.
    pub adjudicated: u64,
    /// Games cut at the ply limit that the good player turned round.
    pub rejected: u64,
    pub plies: u64,
    pub seconds: f64,
}

impl DbStats {
    pub(super) fn add(&mut self, o: &DbStats) {
        self.played += o.played;
        self.finished += o.finished;
        self.adjudicated += o.adjudicated;
        self.rejected += o.rejected;
        self.plies += o.plies;
        self.seconds += o.seconds;
    }
}

/// `OUT/db/games`, where the chunks lie.
pub(super) fn games_dir(out: &Path) -> PathBuf {
    out.join("db").join("games")
}

/// Chunk `chunk`'s file of extension `ext` (`jsonl` records, `json` stats).
pub(super) fn chunk_path(dir: &Path, chunk: usize, ext: &str) -> PathBuf {
    dir.join(format!("part-{chunk:05}.{ext}"))
}

/// How many chunks the database is cut into (the last may be short).
pub(super) fn chunk_count(cfg: &AmazonsExperimentConfig) -> usize {
    cfg.db_games.div_ceil(cfg.db_chunk)
}

/// The indices of the games chunk `chunk` holds.
pub(super) fn chunk_games(cfg: &AmazonsExperimentConfig, chunk: usize) -> Range<usize> {
    let from = chunk * cfg.db_chunk;
    from..(from + cfg.db_chunk).min(cfg.db_games)
}

/// Plays database game `index`: a random opening, then two players drawn
/// from `db_players`; a game cut at the ply limit is adjudicated as the
/// thesis does (the side the Lieberum evaluation favours is played on by
/// the simple player against the good one; kept only if it still wins).
pub(super) fn database_game(
    cfg: &AmazonsExperimentConfig,
    players: &[Arc<dyn Player<Amazons>>],
    good: &dyn Player<Amazons>,
    simple: &dyn Player<Amazons>,
    judge: &dyn Evaluator<Amazons>,
    index: u64,
) -> Result<(Option<GameRecord>, DbStats)> {
    let mut rng = seeded_rng(cfg.seed, 10_000 + index);
    let first = players
        .choose(&mut rng)
        .cloned()
        .ok_or_else(|| file_error(&cfg.out, "no players"))?;
    let second = players
        .choose(&mut rng)
        .cloned()
        .ok_or_else(|| file_error(&cfg.out, "no players"))?;
    let mut g = Amazons::with_size(cfg.size).map_err(|e| AmazonsExperimentError::Config {
        field: "size",
        why: e.to_string(),
    })?;
    let mut moves = Vec::new();
    let mut scratch = Vec::new();
    while moves.len() < cfg.db_random_opening && g.outcome().is_none() {
        let Some(mv) = g.exploration_move(&mut rng, &mut scratch) else {
            break;
        };
        moves.push(g.move_to_string(mv));
        g.play(mv);
    }
    let mut sessions = [first.session(), second.session()];
    while g.outcome().is_none() && moves.len() < cfg.db_max_plies {
        let mover = match g.side_to_move() {
            Side::First => 0,
            Side::Second => 1,
        };
        let mv = sessions[mover].choose(&g, &mut rng)?;
        for s in &mut sessions {
            s.observe(&g, mv);
        }
        moves.push(g.move_to_string(mv));
        g.play(mv);
    }
    let mut stats = DbStats {
        played: 1,
        plies: moves.len() as u64,
        ..DbStats::default()
    };
    let (winner, termination) = match g.outcome() {
        Some(Outcome::Win(w)) => {
            stats.finished = 1;
            (w, g.termination_name().to_string())
        }
        Some(Outcome::Draw) => return Ok((None, stats)),
        None => {
            let v = judge
                .evaluate(std::slice::from_ref(&g))
                .map_err(|e| file_error(&cfg.out, format!("adjudicating: {e}")))?;
            let mover = g.side_to_move();
            let leader = if v.first().copied().unwrap_or(0.0) >= 0.0 {
                mover
            } else {
                mover.other()
            };
            let (p1, p2): (&dyn Player<Amazons>, &dyn Player<Amazons>) = match leader {
                Side::First => (simple, good),
                Side::Second => (good, simple),
            };
            let end = crate::arena::play_game_from(g, p1, p2, index as usize, &mut rng, None)?;
            if end.outcome != Some(Outcome::Win(leader)) {
                stats.rejected = 1;
                return Ok((None, stats));
            }
            stats.adjudicated = 1;
            (leader, "adjudicated".to_string())
        }
    };
    let record = GameRecord {
        game: Amazons::NAME.into(),
        id: format!("amazons-db-{index:06}"),
        source: format!("{} vs {}", first.name(), second.name()),
        event: "plies experiment amazons".into(),
        players: PerSide::new(first.name(), second.name()),
        ratings: PerSide::new(None, None),
        player_types: None,
        setups: Vec::new(),
        plies: moves.len() as u32,
        moves,
        result: Some(winner),
        termination,
        rated: None,
        start_time: None,
        board_size: (cfg.size != Amazons::DEFAULT_SIZE).then_some(cfg.size),
        explored: Vec::new(),
    };
    Ok((Some(record), stats))
}

/// Chunk `chunk`'s stats, if readable.
fn read_stats(dir: &Path, chunk: usize) -> Result<DbStats> {
    let path = chunk_path(dir, chunk, "json");
    let text = std::fs::read_to_string(&path).map_err(|e| file_error(&path, e))?;
    serde_json::from_str(&text).map_err(|e| file_error(&path, e))
}

/// Whether chunk `chunk` holds its records and the stats of every game of
/// its range.
fn chunk_done(cfg: &AmazonsExperimentConfig, dir: &Path, chunk: usize) -> bool {
    chunk_path(dir, chunk, "jsonl").exists()
        && read_stats(dir, chunk).is_ok_and(|s| s.played == chunk_games(cfg, chunk).len() as u64)
}

/// The database's chunk files, played where missing or short (in
/// parallel).
pub(super) fn make_database(
    cfg: &AmazonsExperimentConfig,
    progress: &dyn Fn(u64, &str) -> ProgressBar,
    say: &dyn Fn(&str),
) -> Result<DbStats> {
    let dir = games_dir(&cfg.out);
    std::fs::create_dir_all(&dir).map_err(|e| file_error(&dir, e))?;
    let chunks = chunk_count(cfg);
    let missing: Vec<usize> = (0..chunks).filter(|&c| !chunk_done(cfg, &dir, c)).collect();
    if !missing.is_empty() {
        say(&format!(
            "database: playing {} of {} chunks of {} games",
            missing.len(),
            chunks,
            cfg.db_chunk
        ));
        let players: Vec<Arc<dyn Player<Amazons>>> = cfg
            .db_players
            .iter()
            .map(|s| player(cfg, s))
            .collect::<std::result::Result<_, _>>()?;
        let good = player(cfg, &cfg.good)?;
        let simple = player(cfg, &cfg.simple)?;
        let judge = evaluator_by_name::<Amazons>("lieberum", cfg.size, &EvalContext::default())?;
        let pb = progress((missing.len() * cfg.db_chunk) as u64, "db games");
        for &c in &missing {
            let t0 = std::time::Instant::now();
            let played: Vec<(Option<GameRecord>, DbStats)> = chunk_games(cfg, c)
                .into_par_iter()
                .map(|i| {
                    let r = database_game(
                        cfg,
                        &players,
                        good.as_ref(),
                        simple.as_ref(),
                        judge.as_ref(),
                        i as u64,
                    );
                    pb.inc(1);
                    r
                })
                .collect::<Result<_>>()?;
            let mut stats = DbStats::default();
            let mut text = String::new();
            for (rec, s) in &played {
                stats.add(s);
                if let Some(rec) = rec {
                    text.push_str(&serde_json::to_string(rec).map_err(|e| file_error(&dir, e))?);
                    text.push('\n');
                }
            }
            stats.seconds = t0.elapsed().as_secs_f64();
            // Records of an older range go first, then the stats: a chunk
            // counts as done once its records exist.
            let path = chunk_path(&dir, c, "jsonl");
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(file_error(&path, e))
                }
                _ => {}
            }
            write_json(chunk_path(&dir, c, "json"), &stats)?;
            write_atomic(&path, text.as_bytes()).map_err(|e| file_error(&path, e))?;
        }
        pb.finish_and_clear();
    }
    let mut total = DbStats::default();
    for c in 0..chunks {
        total.add(&read_stats(&dir, c)?);
    }
    Ok(total)
}
