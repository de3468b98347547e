//! The error type of the positions module.

use std::path::PathBuf;

use crate::dataset::DatasetError;

/// What can go wrong turning game records into positions and a dataset.
#[derive(Debug, thiserror::Error)]
pub enum PositionsError {
    /// A record line is not a valid record, or its game does not replay
    /// (fatal only with `--strict`; otherwise it is skipped and counted).
    #[error("{path}:{line}: game {id}: {why}")]
    BadRecord {
        path: PathBuf,
        line: usize,
        /// The game id, or `?` when the line did not parse.
        id: String,
        why: String,
    },

    /// A move of a record is not legal (or not readable) in its position.
    #[error("{source_name}: game {id}: ply {ply}: move '{token}' refused: {why}")]
    IllegalMove {
        /// The record's `source` field.
        source_name: String,
        id: String,
        /// Index of the move in the record's `moves` (0-based).
        ply: usize,
        token: String,
        why: String,
    },

    /// The record's start position could not be built (wrong game, bad
    /// setup, another board size than the dataset's).
    #[error("{source_name}: game {id}: {why}")]
    BadStart {
        source_name: String,
        id: String,
        why: String,
    },

    /// The same game id appears twice in the input.
    #[error("duplicate game id `{id}`: first at {first}, again at {second}")]
    DuplicateId {
        id: String,
        first: String,
        second: String,
    },

    /// The output directory already holds a dataset (or an interrupted one).
    #[error("{path}: {found}; pass --force to replace it (the old dataset stays readable until the new one is complete)")]
    Exists { path: PathBuf, found: String },

    /// An option is out of range or names something unknown.
    #[error("invalid option `{option}`: {found}, expected {expected}")]
    InvalidOption {
        option: &'static str,
        expected: String,
        found: String,
    },

    /// The records cannot be built with the requested game.
    #[error("{0}")]
    Game(String),

    /// Writing the dataset failed, or a record file or the report could not
    /// be read or written ([`DatasetError::Io`] names the file and the step).
    #[error(transparent)]
    Dataset(#[from] DatasetError),
}
