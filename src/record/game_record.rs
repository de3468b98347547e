//! One played game as a JSON object, one object per line (JSONL): who
//! played, how it started, the moves, how it ended and where it came from.
//!
//! The format is the same for every game; what differs is the notation of
//! `setups` and `moves`. For Arimaa, `setups` holds the gold then the silver
//! setup (`Ra1 Rb1 ... Ee2`, by square) and `moves` one string per turn in the
//! archive notation with capture tokens and without turn labels
//! (`Ed2n Ed3n Dc3x`); the labels are implied: `moves[0]` is `2g`,
//! `moves[1]` `2s`, `moves[2]` `3g`, ...
//!
//! ```
//! use plies::record::{GameRecord, PerSide};
//! let rec = GameRecord {
//!     game: "arimaa".into(),
//!     id: "1".into(),
//!     source: "allgames2002.txt:2".into(),
//!     event: "Casual game".into(),
//!     players: PerSide::new("omar".to_string(), "illz".to_string()),
//!     ratings: PerSide::new(Some(1516), Some(1595)),
//!     player_types: None,
//!     setups: vec![],
//!     moves: vec!["Ed2n".into()],
//!     result: None,
//!     termination: "resignation".into(),
//!     plies: 1,
//!     rated: None,
//!     start_time: None,
//!     board_size: None,
//!     explored: Vec::new(),
//! };
//! let line = rec.to_json_line();
//! assert_eq!(GameRecord::from_json_line(&line).unwrap(), rec);
//! ```

use super::RecordError;
use crate::game::Side;
use crate::util::text::open_text;
use crate::util::AtomicFile;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A value for each player: `first` (gold in Arimaa) and `second` (silver).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct PerSide<T> {
    pub first: T,
    pub second: T,
}

impl<T> PerSide<T> {
    pub fn new(first: T, second: T) -> PerSide<T> {
        PerSide { first, second }
    }

    /// The value of `side`.
    pub fn get(&self, side: Side) -> &T {
        match side {
            Side::First => &self.first,
            Side::Second => &self.second,
        }
    }
}

/// One played game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// The game's machine name (`arimaa`).
    pub game: String,
    /// The game's id in its source (the arimaa.com game id).
    pub id: String,
    /// Where it came from: the file name and the 1-based line (`allgames2002.txt:2`).
    pub source: String,
    /// The event (`Casual game`, `World Championship`, ...); may be empty.
    #[serde(default)]
    pub event: String,
    /// Player names.
    pub players: PerSide<String>,
    /// Ratings at the start of the game, when known.
    pub ratings: PerSide<Option<i32>>,
    /// `h` (human) or `b` (bot) for each player, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_types: Option<PerSide<String>>,
    /// The setups before the first move (for Arimaa: gold's, then silver's).
    #[serde(default)]
    pub setups: Vec<String>,
    /// The moves after the setups, in the game's notation, without labels.
    pub moves: Vec<String>,
    /// The winner: `"first"`, `"second"`, or `null` (draw or no result).
    pub result: Option<Side>,
    /// How the game ended, snake_case (`goal`, `resignation`, `timeout`, ...).
    pub termination: String,
    /// Number of moves after the setups: `moves.len()`.
    pub plies: u32,
    /// Whether the game was rated, when known.
    #[serde(default)]
    pub rated: Option<bool>,
    /// Start time, seconds since the Unix epoch, when known.
    #[serde(default)]
    pub start_time: Option<i64>,
    /// Side length of the board for games played at several sizes
    /// (Amazons, Gomoku, Atari-Go); absent means the game's standard size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_size: Option<usize>,
    /// Indices into `moves` of the moves drawn at random for exploration
    /// (self-play's `--epsilon`) rather than chosen by the player: they are
    /// no target for a policy ([`PolicyTargets::Played`](crate::positions::PolicyTargets)).
    /// Absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explored: Vec<u32>,
}

impl GameRecord {
    /// The record as one line of JSON (no trailing newline).
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).expect("a GameRecord always serialises")
    }

    /// Parses one line and checks it ([`GameRecord::check`]).
    pub fn from_json_line(line: &str) -> Result<GameRecord, InvalidRecord> {
        let rec: GameRecord = serde_json::from_str(line)?;
        rec.check()?;
        Ok(rec)
    }

    /// Consistency checks that need no rules engine: `plies` equals the
    /// number of moves; the id and the game name are not empty.
    pub fn check(&self) -> Result<(), InvalidRecord> {
        if self.game.is_empty() {
            return Err(InvalidRecord::EmptyGame);
        }
        if self.id.is_empty() {
            return Err(InvalidRecord::EmptyId);
        }
        if self.plies as usize != self.moves.len() {
            return Err(InvalidRecord::Plies {
                id: self.id.clone(),
                plies: self.plies,
                moves: self.moves.len(),
            });
        }
        // Strictly increasing and below `plies`: each names one move once.
        let mut previous: Option<u32> = None;
        for &ply in &self.explored {
            if ply >= self.plies || previous.is_some_and(|p| p >= ply) {
                return Err(InvalidRecord::Explored {
                    id: self.id.clone(),
                    ply,
                    plies: self.plies,
                });
            }
            previous = Some(ply);
        }
        Ok(())
    }
}

/// Why a line is not a valid record ([`GameRecord::from_json_line`]).
#[derive(Debug, thiserror::Error)]
pub enum InvalidRecord {
    /// Not JSON, or not a record's fields.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    #[error("'game' is empty")]
    EmptyGame,
    #[error("'id' is empty")]
    EmptyId,
    #[error("game {id}: 'plies' is {plies} but there are {moves} moves")]
    Plies {
        id: String,
        plies: u32,
        moves: usize,
    },
    #[error(
        "game {id}: 'explored' lists move {ply}, but it must list move indices \
         below 'plies' ({plies}) in increasing order"
    )]
    Explored { id: String, ply: u32, plies: u32 },
}

/// Reads a JSONL file of records, one per line (blank lines skipped); an
/// error names the file and the line.
pub fn read_records(path: impl AsRef<Path>) -> Result<Vec<GameRecord>, RecordError> {
    RecordReader::open(path)?.collect()
}

/// Streams the records of a JSONL file; each item is a record or an error
/// naming the file and the line.
pub struct RecordReader {
    path: PathBuf,
    lines: io::Lines<BufReader<File>>,
    line_no: usize,
}

impl RecordReader {
    pub fn open(path: impl AsRef<Path>) -> Result<RecordReader, RecordError> {
        let path = path.as_ref().to_path_buf();
        let reader = open_text(&path).map_err(RecordError::io(&path))?;
        Ok(RecordReader {
            path,
            lines: reader.lines(),
            line_no: 0,
        })
    }
}

impl Iterator for RecordReader {
    type Item = Result<GameRecord, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let line = self.lines.next()?;
            self.line_no += 1;
            let line = match line {
                Ok(l) => l,
                Err(source) => return Some(Err(RecordError::io(&self.path)(source))),
            };
            if line.trim().is_empty() {
                continue;
            }
            return Some(
                GameRecord::from_json_line(&line).map_err(|e| RecordError::Parse {
                    path: self.path.clone(),
                    line: self.line_no,
                    why: e.to_string(),
                }),
            );
        }
    }
}

/// Writes records as JSONL to a hidden temporary file next to the target and
/// renames it into place in [`RecordWriter::finish`] (an [`AtomicFile`]), so
/// a crash never leaves a half-written file under the target's name.
/// Dropped without `finish`, it removes the temporary file.
pub struct RecordWriter {
    out: BufWriter<AtomicFile>,
    overwrite: bool,
    count: usize,
}

impl RecordWriter {
    /// Starts writing `path`; refuses an existing `path` unless `overwrite`.
    /// A missing parent directory is created.
    pub fn create(path: impl AsRef<Path>, overwrite: bool) -> Result<RecordWriter, RecordError> {
        let target = path.as_ref();
        if !overwrite && target.exists() {
            return Err(RecordError::io(target)(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "already exists; refusing to overwrite it",
            )));
        }
        Ok(RecordWriter {
            out: BufWriter::new(AtomicFile::create(target)?),
            overwrite,
            count: 0,
        })
    }

    /// Appends one record as one line.
    pub fn write(&mut self, rec: &GameRecord) -> Result<(), RecordError> {
        serde_json::to_writer(&mut self.out, rec)
            .map_err(io::Error::from)
            .and_then(|()| self.out.write_all(b"\n"))
            .map_err(RecordError::io(self.out.get_ref().target()))?;
        self.count += 1;
        Ok(())
    }

    /// Records written so far.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Flushes and syncs the temporary file and renames it onto the target
    /// (checking again that the target does not exist, unless overwriting).
    /// Returns the number of records written.
    pub fn finish(self) -> Result<usize, RecordError> {
        let file = self.out.into_inner().map_err(|e| {
            let (source, out) = e.into_parts();
            RecordError::io(out.get_ref().target())(source)
        })?;
        if self.overwrite {
            file.commit()?;
        } else {
            file.commit_new()?;
        }
        Ok(self.count)
    }
}

/// Writes all `records` to `path` (see [`RecordWriter`]).
pub fn write_records<'a>(
    path: impl AsRef<Path>,
    records: impl IntoIterator<Item = &'a GameRecord>,
    overwrite: bool,
) -> Result<usize, RecordError> {
    let mut w = RecordWriter::create(path, overwrite)?;
    for rec in records {
        w.write(rec)?;
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(id: &str) -> GameRecord {
        GameRecord {
            game: "arimaa".into(),
            id: id.into(),
            source: format!("test.txt:{id}"),
            event: "Casual game".into(),
            players: PerSide::new("a".into(), "b".into()),
            ratings: PerSide::new(Some(1500), None),
            player_types: Some(PerSide::new("h".into(), "b".into())),
            setups: vec!["Ra1".into(), "ra8".into()],
            moves: vec!["Ed2n Ed3n".into(), "ed7s".into()],
            result: Some(Side::Second),
            termination: "goal".into(),
            plies: 2,
            rated: Some(true),
            start_time: Some(1_037_992_826),
            board_size: None,
            explored: Vec::new(),
        }
    }

    #[test]
    fn json_names_the_winner_as_first_or_second() {
        let line = sample("7").to_json_line();
        assert!(line.contains(r#""result":"second""#), "{line}");
        assert!(
            line.contains(r#""ratings":{"first":1500,"second":null}"#),
            "{line}"
        );
        let mut none = sample("8");
        none.result = None;
        assert!(none.to_json_line().contains(r#""result":null"#));
    }

    #[test]
    fn write_then_read_round_trips_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.jsonl");
        let recs = vec![sample("1"), sample("2")];
        assert_eq!(write_records(&path, &recs, false).unwrap(), 2);
        assert_eq!(read_records(&path).unwrap(), recs);
        crate::util::atomic::assert_only_file(&path);
        let err = write_records(&path, &recs, false).unwrap_err().to_string();
        assert!(
            err.contains("games.jsonl") && err.contains("already exists"),
            "{err}"
        );
        assert_eq!(write_records(&path, &recs[..1], true).unwrap(), 1);
        assert_eq!(read_records(&path).unwrap().len(), 1);
    }

    #[test]
    fn a_dropped_writer_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.jsonl");
        let mut w = RecordWriter::create(&path, false).unwrap();
        w.write(&sample("1")).unwrap();
        drop(w);
        assert!(crate::util::atomic::file_names(dir.path()).is_empty());
    }

    #[test]
    fn bad_lines_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.jsonl");
        let good = sample("1").to_json_line();
        let mut bad = sample("2");
        bad.plies = 5;
        let text = format!("{good}\n\n{{not json\n{}\n", bad.to_json_line());
        std::fs::write(&path, text).unwrap();
        let results: Vec<_> = RecordReader::open(&path).unwrap().collect();
        assert_eq!(results.len(), 3);
        assert!(results[0].is_ok());
        let err = results[1].as_ref().unwrap_err().to_string();
        assert!(err.contains("games.jsonl:3:"), "{err}");
        let err = results[2].as_ref().unwrap_err().to_string();
        assert!(
            err.contains("games.jsonl:4:") && err.contains("'plies' is 5"),
            "{err}"
        );
        let err = read_records(&path).unwrap_err().to_string();
        assert!(err.contains(":3:"), "{err}");
    }

    #[test]
    fn explored_moves_round_trip_and_must_name_moves_in_order() {
        let plain = sample("1").to_json_line();
        assert!(!plain.contains("explored"), "{plain}");
        let mut rec = sample("2");
        rec.explored = vec![0, 1];
        let line = rec.to_json_line();
        assert!(line.contains(r#""explored":[0,1]"#), "{line}");
        assert_eq!(GameRecord::from_json_line(&line).unwrap(), rec);
        for bad in [vec![2], vec![1, 0], vec![1, 1]] {
            rec.explored = bad.clone();
            let err = GameRecord::from_json_line(&rec.to_json_line())
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("game 2") && err.contains("'explored'") && err.contains("(2)"),
                "{bad:?}: {err}"
            );
        }
    }
}
