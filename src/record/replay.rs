//! Replays oracle records through a rules engine and stops at the first
//! difference.

use super::oracle_jsonl::{legal_digest, OracleGame};
use super::RecordError;
use crate::game::Game;
use serde::de::DeserializeOwned;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// What a successful replay covered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReplaySummary {
    pub games: usize,
    pub plies: usize,
    pub legal_moves_compared: usize,
}

/// Reads `path` as one JSON value per line, skipping blank lines, and hands
/// each value to `f` with its line number (from 1).
pub(crate) fn for_each_json_line<T: DeserializeOwned>(
    path: &Path,
    mut f: impl FnMut(T, usize) -> Result<(), RecordError>,
) -> Result<(), RecordError> {
    let io = RecordError::io(path);
    let file = std::fs::File::open(path).map_err(io)?;
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(io)?;
        if line.trim().is_empty() {
            continue;
        }
        let value = serde_json::from_str(&line).map_err(|e| RecordError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            why: e.to_string(),
        })?;
        f(value, i + 1)?;
    }
    Ok(())
}

/// Replays every record in `path` (one JSON game per line) through `G`.
pub fn replay_file<G: Game>(path: &Path) -> Result<ReplaySummary, RecordError> {
    let mut summary = ReplaySummary::default();
    for_each_json_line(path, |rec: OracleGame, line| {
        replay_game::<G>(&rec, path, line, &mut summary)?;
        summary.games += 1;
        Ok(())
    })?;
    Ok(summary)
}

fn replay_game<G: Game>(
    rec: &OracleGame,
    path: &Path,
    line: usize,
    summary: &mut ReplaySummary,
) -> Result<(), RecordError> {
    if rec.plies.len() != rec.moves.len() + 1 {
        return Err(RecordError::Parse {
            path: path.to_path_buf(),
            line,
            why: format!(
                "{} moves need {} plies, found {}",
                rec.moves.len(),
                rec.moves.len() + 1,
                rec.plies.len()
            ),
        });
    }
    let mut state = match rec.board_size() {
        Some(n) => G::with_size(n).map_err(|e| RecordError::Parse {
            path: path.to_path_buf(),
            line,
            why: e.to_string(),
        })?,
        None => G::new(),
    };
    let mut legal = Vec::new();
    for (k, ply) in rec.plies.iter().enumerate() {
        let mismatch = |field: &'static str, expected: String, actual: String| {
            Err(RecordError::Mismatch {
                path: path.to_path_buf(),
                line,
                ply: k,
                field,
                expected,
                actual,
            })
        };
        let board = state.to_text();
        if board != ply.board {
            return mismatch("board", ply.board.clone(), board);
        }
        let outcome = state.outcome();
        if outcome.is_some() != ply.terminal {
            return mismatch(
                "terminal",
                ply.terminal.to_string(),
                outcome.is_some().to_string(),
            );
        }
        let to_move = outcome
            .is_none()
            .then(|| state.side_to_move().index() as u8);
        if to_move != ply.to_move {
            return mismatch(
                "to_move",
                format!("{:?}", ply.to_move),
                format!("{to_move:?}"),
            );
        }
        let returns = outcome.map(|o| o.returns()).unwrap_or([0.0, 0.0]);
        if returns != ply.returns {
            return mismatch(
                "returns",
                format!("{:?}", ply.returns),
                format!("{returns:?}"),
            );
        }
        state.legal_moves(&mut legal);
        let mut names: Vec<String> = legal.iter().map(|&m| state.move_to_string(m)).collect();
        names.sort();
        if let Some(expected) = &ply.legal {
            if *expected != names {
                return mismatch("legal moves", expected.join(" "), names.join(" "));
            }
        }
        if let Some(count) = ply.legal_count {
            if count != names.len() {
                return mismatch(
                    "legal move count",
                    count.to_string(),
                    names.len().to_string(),
                );
            }
        }
        if let Some(fnv) = &ply.legal_fnv {
            let digest = legal_digest(&names);
            if *fnv != digest {
                return mismatch("legal move digest", fnv.clone(), digest);
            }
        }
        summary.legal_moves_compared += names.len();
        summary.plies += 1;
        if let Some(token) = rec.moves.get(k) {
            let mv = state.parse_move(token).map_err(|e| RecordError::BadMove {
                path: path.to_path_buf(),
                line,
                ply: k,
                token: token.clone(),
                why: e.to_string(),
            })?;
            if !legal.contains(&mv) {
                return Err(RecordError::BadMove {
                    path: path.to_path_buf(),
                    line,
                    ply: k,
                    token: token.clone(),
                    why: "not among the engine's legal moves".into(),
                });
            }
            state.play(mv);
        }
    }
    let end_mismatch = |field, expected: String, actual: String| RecordError::Mismatch {
        path: path.to_path_buf(),
        line,
        ply: rec.moves.len(),
        field,
        expected,
        actual,
    };
    let final_returns = state.outcome().map(|o| o.returns());
    if final_returns != Some(rec.returns) {
        return Err(end_mismatch(
            "final returns",
            format!("{:?}", rec.returns),
            format!("{final_returns:?}"),
        ));
    }
    let winner = state.outcome().and_then(|o| match o {
        crate::game::Outcome::Win(s) => Some(s.index() as u8),
        crate::game::Outcome::Draw => None,
    });
    if winner != rec.winner {
        return Err(end_mismatch(
            "winner",
            format!("{:?}", rec.winner),
            format!("{winner:?}"),
        ));
    }
    Ok(())
}
