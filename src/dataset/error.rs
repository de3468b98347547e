//! The one error type of the dataset module.
//!
//! Every variant names the file (and shard, row or field where there is one)
//! and says what was expected, so a message alone tells the user where to look.

use std::path::PathBuf;

use arrow_schema::ArrowError;

/// Everything that can go wrong writing, opening, verifying or reading a dataset.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// An operating-system call failed on `path`.
    #[error("{path}: could not {action}: {source}")]
    Io {
        path: PathBuf,
        /// What we were doing, e.g. "create the shard file".
        action: &'static str,
        #[source]
        source: std::io::Error,
    },

    /// A file of the dataset (the manifest, a shard) that resolves, through
    /// a symbolic link, outside the dataset's folder.
    #[error("{dir}: refused: the {name}")]
    UnsafeName {
        dir: PathBuf,
        name: crate::util::safe_name::UnsafeName,
    },

    /// `DatasetWriter::create` found a dataset (or stray shards) in the directory.
    #[error(
        "{path}: {found}; refusing to write over it (remove it by hand or use DatasetWriter::create_overwrite)"
    )]
    AlreadyExists { path: PathBuf, found: String },

    /// A field of a `DatasetSpec` (or of a loader's arguments) is out of range.
    #[error("invalid {what}: field `{field}` is {found}, expected {expected}")]
    InvalidArgument {
        /// What was being built, e.g. "dataset spec" or "loader".
        what: &'static str,
        field: &'static str,
        expected: String,
        found: String,
    },

    /// A row passed to `DatasetWriter::push` does not fit the spec.
    #[error(
        "{path}: row for game `{game_id}` ply {ply}: field `{field}` is {found}, expected {expected}"
    )]
    InvalidRow {
        /// The dataset directory being written.
        path: PathBuf,
        game_id: String,
        ply: u32,
        field: &'static str,
        expected: String,
        found: String,
    },

    /// `manifest.json` is not valid JSON (or not a JSON object).
    #[error("{path}: not a valid dataset manifest: {source}")]
    ManifestJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    /// A field of `manifest.json` is missing, has the wrong type or an
    /// inconsistent value.
    #[error("{path}: field `{field}`: {problem}")]
    ManifestField {
        path: PathBuf,
        /// Path of the field inside the manifest, e.g. `shards[2].sha256`.
        field: String,
        /// What was expected and what was found.
        problem: String,
    },

    /// A directory without a manifest holds what an interrupted write left.
    #[error(
        "{path}: an interrupted/half-written dataset: {found}, but no manifest.json; nothing here is a complete dataset (rebuild it, e.g. with --force)"
    )]
    Interrupted { path: PathBuf, found: String },

    /// A shard listed in the manifest is not on disk.
    #[error("{path}: shard {shard} listed in the manifest is missing")]
    MissingShard { path: PathBuf, shard: usize },

    /// A shard file has a different size than the manifest records.
    #[error(
        "{path}: shard {shard} is {found} bytes, the manifest says {expected} bytes (truncated or replaced)"
    )]
    ShardSize {
        path: PathBuf,
        shard: usize,
        expected: u64,
        found: u64,
    },

    /// A shard file's sha256 differs from the manifest's.
    #[error("{path}: shard {shard} is corrupt: sha256 is {found}, the manifest says {expected}")]
    ShardHash {
        path: PathBuf,
        shard: usize,
        expected: String,
        found: String,
    },

    /// A shard file could not be decoded as an Arrow IPC file.
    #[error(
        "{path}: shard {shard} is not a readable Arrow IPC file (truncated or corrupt?): {source}"
    )]
    ShardRead {
        path: PathBuf,
        shard: usize,
        #[source]
        source: ArrowError,
    },

    /// A shard's Arrow schema differs from the one the manifest implies.
    #[error("{path}: shard {shard}: column `{field}` is {found}, expected {expected}")]
    ShardSchema {
        path: PathBuf,
        shard: usize,
        field: String,
        expected: String,
        found: String,
    },

    /// A value inside a shard is out of range or inconsistent.
    #[error("{path}: shard {shard} row {row}: column `{field}` is {found}, expected {expected}")]
    ShardRow {
        path: PathBuf,
        shard: usize,
        /// Row index inside the shard (0-based).
        row: usize,
        field: &'static str,
        expected: String,
        found: String,
    },

    /// A count in the data differs from the count in the manifest.
    #[error("{path}: {what}: the data has {found}, the manifest says {expected}")]
    CountMismatch {
        /// The shard file, or `manifest.json` for totals.
        path: PathBuf,
        /// Which count, e.g. "rows of split valid".
        what: String,
        expected: u64,
        found: u64,
    },

    /// Another writer holds the dataset directory.
    #[error(transparent)]
    Locked(#[from] crate::util::LockError),

    /// Building or writing an Arrow batch failed.
    #[error("{path}: could not write Arrow data: {source}")]
    ArrowWrite {
        path: PathBuf,
        #[source]
        source: ArrowError,
    },
}

/// Result type of the dataset module.
pub type Result<T, E = DatasetError> = std::result::Result<T, E>;

impl DatasetError {
    /// Refuses a `field` of `what` that is 0 where it takes `expected`.
    pub(crate) fn refuse_zero(
        what: &'static str,
        field: &'static str,
        value: usize,
        expected: &str,
    ) -> Result<()> {
        if value == 0 {
            return Err(DatasetError::InvalidArgument {
                what,
                field,
                expected: expected.into(),
                found: "0".into(),
            });
        }
        Ok(())
    }

    /// Shorthand for [`DatasetError::Io`].
    pub(crate) fn io(
        path: impl Into<PathBuf>,
        action: &'static str,
    ) -> impl FnOnce(std::io::Error) -> DatasetError {
        let path = path.into();
        move |source| DatasetError::Io {
            path,
            action,
            source,
        }
    }
}

/// A failed atomic write is an I/O error about its target.
impl From<crate::util::AtomicWriteError> for DatasetError {
    fn from(e: crate::util::AtomicWriteError) -> Self {
        DatasetError::Io {
            path: e.path,
            action: e.step.as_str(),
            source: e.source,
        }
    }
}
