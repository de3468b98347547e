//! What became of the games of one archive file: the counts, and a report
//! for each game skipped for an error.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Why one game was skipped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkipReport {
    /// `file:line`.
    pub source: String,
    pub game_id: String,
    /// The turn label where it went wrong (`12g`), if at a turn.
    pub turn: Option<String>,
    /// The offending token or step (`Ed2q`), or the whole move.
    pub token: Option<String>,
    /// One of the [`reason`](super::reason) constants.
    pub reason: String,
    /// What exactly is wrong.
    pub detail: String,
}

impl fmt::Display for SkipReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: game {}", self.source, self.game_id)?;
        if let Some(t) = &self.turn {
            write!(f, ", turn {t}")?;
        }
        if let Some(t) = &self.token {
            write!(f, ", '{t}'")?;
        }
        write!(f, ": {}: {}", self.reason, self.detail)
    }
}

/// The counts for one archive file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileSummary {
    pub file: String,
    /// Data lines (games) read.
    pub games_read: usize,
    /// Games that replayed and passed the filters.
    pub kept: usize,
    /// Kept games by termination name (`goal`, `resignation`, ...).
    pub kept_by_termination: BTreeMap<String, usize>,
    /// Games not kept, by reason (errors and filters).
    pub skipped: BTreeMap<String, usize>,
    /// One report per game skipped for an error (not for a filter).
    pub reports: Vec<SkipReport>,
}

impl FileSummary {
    /// All games not kept.
    pub fn skipped_total(&self) -> usize {
        self.skipped.values().sum()
    }
}
