//! The arimaa.com game archive: tab-separated text, a header row naming the
//! columns, one game per line. Every game is replayed through the rules
//! engine ([`Arimaa`]) with its full legality checks and becomes a
//! [`GameRecord`]; a game that does not replay is skipped with a
//! [`SkipReport`] (game id, turn, token, reason) and the file goes on.
//!
//! The columns are found by name: `id`, `wusername`, `busername`, `wrating`,
//! `brating`, `result`, `termination` and `movelist` must be there; `event`,
//! `wtype`, `btype`, `rated` and `startts` are used when present.
//!
//! In `movelist` the turns are separated by the two characters `\` and `n`.
//! A turn is a label (`12w`, `12b`, or `12g`, `12s`) then its steps
//! (`Ed2n`) and capture tokens (`Dc3x`); the first two turns are the setups
//! (`1w Ra1 Rb1 ...`). Each label must be the next one expected. The early
//! archive (2002) also has two pseudo-moves: `takeback` undoes the turn
//! before it (the next label is then the undone turn's again), and `resign`
//! ends the move list. Turns at the very end with a label and no steps, or
//! empty, are skipped.
//!
//! For the terminations decided on the board (goal, elimination,
//! immobilization, repetition) the engine's result after the last move must
//! be the recorded one; for the others (resignation, time, illegal move,
//! ...) the result is the record's, and the board must not show a finished
//! game.
//!
//!
//! | file | concept |
//! | --- | --- |
//! | `columns.rs` | the header's columns, found by name; reading a row's fields |
//! | `options.rs` | [`ImportOptions`]: what to keep |
//! | `summary.rs` | [`SkipReport`], [`FileSummary`]: what became of each game |
//! | `reason.rs` | [`reason`]: why a game is skipped |
//! | `fail.rs` | a failure while replaying one game, before it names its row |
//! | `replay.rs` | a game being replayed: setups, moves, takebacks |
//! | `movelist.rs` | the `movelist` field, turn by turn: labels, pseudo-moves, [`move_label`] |
//! | `row.rs` | one row: the filters, the replay, the recorded result against the board's |
//! | `import.rs` | [`import_archive`], [`import_file`], [`import_str`]: whole files |
//! | `record.rs` | [`replay_record`]: an imported record back to a finished game |
//! | `error.rs` | [`ArchiveError`] |
//!
//! ```
//! use plies::record::arimaa_archive::{import_str, ImportOptions};
//! let text = std::fs::read_to_string("data/arimaa/allgames2002.txt").unwrap();
//! let (records, summary) = import_str(&text, "allgames2002.txt", &ImportOptions::default()).unwrap();
//! assert_eq!(summary.games_read, 64);
//! assert_eq!(records.len(), summary.kept);
//! ```

mod columns;
mod error;
mod fail;
mod import;
mod movelist;
mod options;
pub mod reason;
mod record;
mod replay;
mod row;
mod summary;
#[cfg(test)]
mod tests;

pub use columns::REQUIRED_COLUMNS;
pub use error::ArchiveError;
pub use import::{import_archive, import_file, import_str};
pub use movelist::move_label;
pub use options::ImportOptions;
pub use record::{replay_record, termination_from_name};
pub use summary::{FileSummary, SkipReport};

/// The format's name on the command line.
pub const FORMAT: &str = "arimaa-archive";
