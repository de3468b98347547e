//! A match's journal, so that a long match survives an interruption:
//! `plies match --out DIR` records every finished game as one line of
//! `DIR/games.jsonl` the moment it ends, and a rerun with the same settings
//! plays only the games missing there. Game `i` draws from stream `i` of
//! the seed whoever plays it, so a resumed match ends with the result of an
//! uninterrupted one. The settings are the folder's fingerprint
//! (`DIR/match.json`, [`crate::util::run_dir`]): other settings on the same
//! folder are refused, naming the first field that differs, except the
//! number of games, which may grow. `DIR/result.json` is written, whole,
//! when every game is in.

use super::{ArenaError, MatchResult};
use crate::game::Outcome;
use crate::util::run_dir::{check_fingerprint_except, Depth, JsonLayout, RunDir};
use crate::util::write_atomic;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const SETTINGS_FILE: &str = "match.json";
const GAMES_FILE: &str = "games.jsonl";
const RESULT_FILE: &str = "result.json";

/// One finished game, as the journal keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalGame {
    /// The game's index: its seed stream, and A moves first when even.
    pub game: usize,
    pub a_first: bool,
    /// `None` when stopped at the ply limit unfinished.
    pub outcome: Option<Outcome>,
    pub plies: usize,
}

/// An open journal: the folder held for this process, the games already
/// played, and the file new ones are appended to.
pub struct MatchJournal {
    run: RunDir,
    done: BTreeMap<usize, JournalGame>,
    file: Mutex<File>,
}

impl MatchJournal {
    /// Claims `dir` and checks `settings` against its fingerprint (storing
    /// them on the first start), then reads the games already played. A
    /// last line cut short by a kill is dropped (its game is played again);
    /// any other line that does not read is an error naming it.
    pub fn open<T: Serialize>(dir: &Path, settings: &T) -> Result<MatchJournal, ArenaError> {
        let run = RunDir::claim(dir).map_err(Box::new)?;
        std::fs::create_dir_all(dir).map_err(|e| journal_error(dir, e.to_string()))?;
        // Game i does not depend on how many follow it, so a finished
        // match can be given more games.
        check_fingerprint_except(
            &dir.join(SETTINGS_FILE),
            settings,
            Depth::Nested,
            JsonLayout::PrettyLine,
            &["games"],
        )
        .map_err(Box::new)?;
        let path = dir.join(GAMES_FILE);
        let (done, keep) = read_games(&path)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| journal_error(&path, e.to_string()))?;
        // Drop a torn last line before anything is appended after it.
        file.set_len(keep)
            .map_err(|e| journal_error(&path, e.to_string()))?;
        Ok(MatchJournal {
            run,
            done,
            file: Mutex::new(file),
        })
    }

    /// The games already played, by index.
    pub fn done(&self) -> &BTreeMap<usize, JournalGame> {
        &self.done
    }

    /// Appends one finished game (one whole line, flushed at once).
    pub fn record(&self, game: &JournalGame) -> Result<(), ArenaError> {
        let path = self.run.path().join(GAMES_FILE);
        let mut line =
            serde_json::to_string(game).map_err(|e| journal_error(&path, e.to_string()))?;
        line.push('\n');
        let mut file = self
            .file
            .lock()
            .map_err(|_| journal_error(&path, "a writer panicked".into()))?;
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|e| journal_error(&path, e.to_string()))
    }

    /// Writes the whole match's result beside the games.
    pub fn finish(&self, result: &MatchResult) -> Result<PathBuf, ArenaError> {
        let path = self.run.path().join(RESULT_FILE);
        let mut text = serde_json::to_string_pretty(result)
            .map_err(|e| journal_error(&path, e.to_string()))?;
        text.push('\n');
        write_atomic(&path, text.as_bytes()).map_err(|e| journal_error(&path, e.to_string()))?;
        Ok(path)
    }
}

fn journal_error(path: &Path, why: String) -> ArenaError {
    ArenaError::Journal {
        path: path.to_path_buf(),
        why,
    }
}

/// The games recorded at `path` and the length of its whole lines.
fn read_games(path: &Path) -> Result<(BTreeMap<usize, JournalGame>, u64), ArenaError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((BTreeMap::new(), 0)),
        Err(e) => return Err(journal_error(path, e.to_string())),
    };
    // Only lines ended by a newline were written whole.
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let text = std::str::from_utf8(&bytes[..whole])
        .map_err(|e| journal_error(path, format!("not UTF-8: {e}")))?;
    let mut done = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let game: JournalGame = serde_json::from_str(line).map_err(|e| {
            journal_error(
                path,
                format!("line {}: {e} (expected one recorded game)", n + 1),
            )
        })?;
        done.insert(game.game, game);
    }
    Ok((done, whole as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Side;
    use serde_json::json;

    fn game(i: usize) -> JournalGame {
        JournalGame {
            game: i,
            a_first: i.is_multiple_of(2),
            outcome: Some(Outcome::Win(Side::First)),
            plies: 10 + i,
        }
    }

    #[test]
    fn games_survive_a_reopen_and_a_torn_last_line_is_dropped() {
        let (_tmp, dir) = crate::util::scratch("m");
        let settings = json!({"a": "random", "games": 4});
        {
            let j = MatchJournal::open(&dir, &settings).unwrap();
            assert!(j.done().is_empty());
            j.record(&game(0)).unwrap();
            j.record(&game(2)).unwrap();
        }
        // A kill in the middle of a line.
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.join(GAMES_FILE))
            .unwrap();
        f.write_all(br#"{"game":1,"a_fi"#).unwrap();
        drop(f);
        let j = MatchJournal::open(&dir, &settings).unwrap();
        assert_eq!(j.done().keys().copied().collect::<Vec<_>>(), [0, 2]);
        assert_eq!(j.done()[&2], game(2));
        j.record(&game(1)).unwrap();
        drop(j);
        let j = MatchJournal::open(&dir, &settings).unwrap();
        assert_eq!(j.done().keys().copied().collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    fn other_settings_and_a_garbled_line_are_refused_by_name() {
        let (_tmp, dir) = crate::util::scratch("m");
        drop(MatchJournal::open(&dir, &json!({"a": "random", "games": 4})).unwrap());
        let err = MatchJournal::open(&dir, &json!({"a": "naive", "games": 4}))
            .err()
            .unwrap();
        assert!(err.to_string().contains("`a`"), "{err}");
        std::fs::write(dir.join(GAMES_FILE), "{\"game\":0}\n").unwrap();
        let err = MatchJournal::open(&dir, &json!({"a": "random", "games": 4}))
            .err()
            .unwrap();
        let msg = err.to_string();
        assert!(
            msg.contains("games.jsonl") && msg.contains("line 1"),
            "{msg}"
        );
    }

    #[test]
    fn a_held_journal_is_refused() {
        let (_tmp, dir) = crate::util::scratch("m");
        let _held = MatchJournal::open(&dir, &json!({})).unwrap();
        let err = MatchJournal::open(&dir, &json!({})).err().unwrap();
        crate::util::run_dir::assert_refused_as_held(&err, &dir);
    }
}
