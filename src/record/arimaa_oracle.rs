//! Replays the Arimaa oracle's random games (`arimaa_oracle.py games`): every
//! setup and move is parsed with full legality checks, the board after each
//! record line is compared, and the engine's own end-of-game detection must
//! give the recorded winner and reason.

use super::replay::{for_each_json_line, ReplaySummary};
use super::RecordError;
use crate::game::arimaa::{Arimaa, Setup};
use crate::game::{Game, Outcome, Side};
use serde::Deserialize;
use std::path::Path;

/// One line of `arimaa_oracle.py games`.
#[derive(Debug, Deserialize)]
pub struct OracleArimaaGame {
    pub game: u64,
    pub record: Vec<String>,
    pub boards: Vec<String>,
    pub winner: Option<String>,
    pub reason: String,
}

/// Replays every game in `path`, stopping at the first difference.
pub fn replay_oracle_games(path: &Path) -> Result<ReplaySummary, RecordError> {
    let mut summary = ReplaySummary::default();
    for_each_json_line(path, |rec: OracleArimaaGame, line| {
        replay_game(&rec, path, line, &mut summary)?;
        summary.games += 1;
        Ok(())
    })?;
    Ok(summary)
}

fn replay_game(
    rec: &OracleArimaaGame,
    path: &Path,
    line: usize,
    summary: &mut ReplaySummary,
) -> Result<(), RecordError> {
    let parse_err = |why: String| RecordError::Parse {
        path: path.to_path_buf(),
        line,
        why: format!("game {}: {why}", rec.game),
    };
    if rec.record.len() < 2 || rec.boards.len() != rec.record.len() {
        return Err(parse_err(
            "expected two setups and one board per record line".into(),
        ));
    }
    let setup = |i: usize, side: Side| {
        let (_, text) = rec.record[i]
            .split_once(' ')
            .ok_or_else(|| parse_err(format!("record line {}: no setup", i + 1)))?;
        Setup::parse(side, text).map_err(|e| RecordError::BadMove {
            path: path.to_path_buf(),
            line,
            ply: i,
            token: rec.record[i].clone(),
            why: e.to_string(),
        })
    };
    let mut game = Arimaa::from_setups(&setup(0, Side::First)?, &setup(1, Side::Second)?)
        .map_err(|e| parse_err(e.to_string()))?;
    let mismatch = |ply, field, expected: String, actual: String| RecordError::Mismatch {
        path: path.to_path_buf(),
        line,
        ply,
        field,
        expected,
        actual,
    };
    let board_of = |g: &Arimaa| g.to_text()[2..].to_string();
    if board_of(&game) != rec.boards[1] {
        return Err(mismatch(1, "board", rec.boards[1].clone(), board_of(&game)));
    }
    for (i, entry) in rec.record.iter().enumerate().skip(2) {
        let (label, text) = entry.split_once(' ').unwrap_or((entry, ""));
        if game.outcome().is_some() {
            return Err(mismatch(i, "terminal", "false".into(), "true".into()));
        }
        if game.turn_label() != label {
            return Err(mismatch(i, "turn", label.into(), game.turn_label()));
        }
        let mv = game.parse_move(text).map_err(|e| RecordError::BadMove {
            path: path.to_path_buf(),
            line,
            ply: i,
            token: entry.clone(),
            why: e.to_string(),
        })?;
        let written = game.move_to_string(mv);
        if written != text {
            return Err(mismatch(i, "notation", text.into(), written));
        }
        game.play(mv);
        summary.plies += 1;
        if board_of(&game) != rec.boards[i] {
            return Err(mismatch(i, "board", rec.boards[i].clone(), board_of(&game)));
        }
    }
    let plies = rec.record.len() - 1;
    let expected = match rec.reason.as_str() {
        "turn_limit" => "not over".to_string(),
        reason => format!("{} {reason}", rec.winner.as_deref().unwrap_or("-")),
    };
    let actual = match game.result() {
        None => "not over".to_string(),
        Some((Outcome::Win(side), term)) => {
            format!("{} {}", crate::game::arimaa::side_letter(side), term.name())
        }
        Some((Outcome::Draw, term)) => format!("- {}", term.name()),
    };
    if expected != actual {
        return Err(mismatch(plies, "result", expected, actual));
    }
    Ok(())
}
