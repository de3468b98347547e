//! Amazons game records as plain text, one game per line:
//!
//! ```text
//! # comment lines and blank lines are skipped
//! 10 d1-d7/g7 j7-f3/j7 ... 1-0
//! 6 b1-b4/e4 a5-a3/c3 *
//! ```
//!
//! The first token is the board size (6, 8 or 10); then the moves in
//! `from-to/arrow` notation (see [`crate::game::amazons`]); then optionally
//! a result: `1-0` (White, `X`, won), `0-1` (Black, `O`, won) or `*`
//! (unknown or unfinished). Reading checks that every move is legal in turn;
//! errors name the line, the ply and the token. A decisive result on a
//! finished game must agree with the rules; on an unfinished game it stands
//! for a resignation or adjudication and is kept as given.
//!
//! ```
//! use plies::game::{Amazons, Game};
//! use plies::record::amazons_text::AmazonsRecord;
//! let rec = AmazonsRecord::parse_line("6 b1-b4/e4 a5-a3/c3 *").unwrap().unwrap();
//! let end = rec.replay().unwrap();
//! assert_eq!(end.ply(), 2);
//! assert_eq!(rec.to_line(), "6 b1-b4/e4 a5-a3/c3 *");
//! ```

use super::RecordError;
use crate::game::{Amazons, AmazonsMove, Game, GameError, Outcome, Side};
use crate::util::text::open_text;
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

/// One Amazons game: board size, moves in notation, claimed winner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmazonsRecord {
    pub size: usize,
    pub moves: Vec<String>,
    /// The winner the record states (`None` for `*` or no result token).
    pub winner: Option<Side>,
}

/// Why a record line was refused: the ply (0-based) and token when a move
/// is at fault.
#[derive(Clone, Debug, PartialEq)]
pub struct LineError {
    pub ply: Option<usize>,
    pub token: String,
    pub why: String,
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.ply {
            Some(p) => write!(f, "ply {p}: '{}': {}", self.token, self.why),
            None => write!(f, "'{}': {}", self.token, self.why),
        }
    }
}

impl AmazonsRecord {
    /// The record of `moves` played from the start position of `size`.
    pub fn from_moves(
        size: usize,
        moves: &[AmazonsMove],
        winner: Option<Side>,
    ) -> Result<AmazonsRecord, GameError> {
        let mut g = Amazons::with_size(size)?;
        let mut names = Vec::with_capacity(moves.len());
        let mut legal = Vec::new();
        for &mv in moves {
            g.legal_moves(&mut legal);
            let name = g.move_to_string(mv);
            if !legal.contains(&mv) {
                return Err(GameError::BadMove {
                    token: name,
                    why: "not a legal move here".into(),
                });
            }
            names.push(name);
            g.play(mv);
        }
        Ok(AmazonsRecord {
            size,
            moves: names,
            winner,
        })
    }

    /// The record's line (no newline).
    pub fn to_line(&self) -> String {
        let mut s = self.size.to_string();
        for m in &self.moves {
            s.push(' ');
            s.push_str(m);
        }
        s.push_str(match self.winner {
            Some(Side::First) => " 1-0",
            Some(Side::Second) => " 0-1",
            None => " *",
        });
        s
    }

    /// Parses one line; `Ok(None)` for blank and `#` comment lines. Only
    /// the syntax is checked here; [`AmazonsRecord::replay`] checks moves.
    pub fn parse_line(line: &str) -> Result<Option<AmazonsRecord>, LineError> {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return Ok(None);
        }
        let mut tokens: Vec<&str> = line.split_whitespace().collect();
        let size_tok = tokens.remove(0);
        let size: usize = size_tok.parse().map_err(|_| LineError {
            ply: None,
            token: size_tok.into(),
            why: "the line must start with the board size (6, 8 or 10)".into(),
        })?;
        if !crate::game::amazons::AMAZONS_SIZES.contains(&size) {
            return Err(LineError {
                ply: None,
                token: size_tok.into(),
                why: "the board size must be 6, 8 or 10".into(),
            });
        }
        let mut winner = None;
        if let Some(&last) = tokens.last() {
            let result = match last {
                "1-0" => Some(Some(Side::First)),
                "0-1" => Some(Some(Side::Second)),
                "*" => Some(None),
                _ => None,
            };
            if let Some(w) = result {
                winner = w;
                tokens.pop();
            }
        }
        Ok(Some(AmazonsRecord {
            size,
            moves: tokens.into_iter().map(String::from).collect(),
            winner,
        }))
    }

    /// Plays the moves, refusing the first illegal one, and checks a stated
    /// winner against a finished game; returns the final position.
    pub fn replay(&self) -> Result<Amazons, LineError> {
        let mut g = Amazons::with_size(self.size).map_err(|e| LineError {
            ply: None,
            token: self.size.to_string(),
            why: e.to_string(),
        })?;
        let mut legal = Vec::new();
        for (k, tok) in self.moves.iter().enumerate() {
            let refuse = |why: String| LineError {
                ply: Some(k),
                token: tok.clone(),
                why,
            };
            let mv = g.parse_move(tok).map_err(|e| refuse(e.to_string()))?;
            g.legal_moves(&mut legal);
            if !legal.contains(&mv) {
                return Err(refuse("not among the legal moves".into()));
            }
            g.play(mv);
        }
        if let (Some(Outcome::Win(w)), Some(claimed)) = (g.outcome(), self.winner) {
            if w != claimed {
                return Err(LineError {
                    ply: Some(self.moves.len()),
                    token: if claimed == Side::First { "1-0" } else { "0-1" }.into(),
                    why: "the result contradicts the final position".into(),
                });
            }
        }
        Ok(g)
    }
}

/// Writes records, one per line.
pub fn write_amazons_records(path: &Path, records: &[AmazonsRecord]) -> Result<(), RecordError> {
    let io = RecordError::io(path);
    let mut w = BufWriter::new(std::fs::File::create(path).map_err(io)?);
    for r in records {
        writeln!(w, "{}", r.to_line()).map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Reads every record of `path` and replays it (every move's legality and
/// the stated result); errors name the line, ply and token.
pub fn read_amazons_records(path: &Path) -> Result<Vec<AmazonsRecord>, RecordError> {
    let io = RecordError::io(path);
    let mut out = Vec::new();
    for (i, line) in open_text(path).map_err(io)?.lines().enumerate() {
        let line = line.map_err(io)?;
        let to_record_error = |e: LineError| match e.ply {
            Some(ply) => RecordError::BadMove {
                path: path.to_path_buf(),
                line: i + 1,
                ply,
                token: e.token,
                why: e.why,
            },
            None => RecordError::Parse {
                path: path.to_path_buf(),
                line: i + 1,
                why: format!("'{}': {}", e.token, e.why),
            },
        };
        if let Some(rec) = AmazonsRecord::parse_line(&line).map_err(to_record_error)? {
            rec.replay().map_err(to_record_error)?;
            out.push(rec);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let rec = AmazonsRecord::parse_line("6 b1-b4/e4 a5-a3/c3")
            .unwrap()
            .unwrap();
        assert_eq!(rec.winner, None);
        assert_eq!(rec.replay().unwrap().ply(), 2);
        assert!(AmazonsRecord::parse_line("  # note").unwrap().is_none());
        let e = AmazonsRecord::parse_line("7 a1-a2/a3").unwrap_err();
        assert!(e.to_string().contains("'7'"), "{e}");
        let bad = AmazonsRecord::parse_line("6 b1-b4/e4 b4-b5/b6")
            .unwrap()
            .unwrap();
        let e = bad.replay().unwrap_err();
        assert_eq!(e.ply, Some(1));
        assert!(e.to_string().contains("b4-b5/b6"), "{e}");
    }
}
