//! Datasets of encoded positions: sharded Arrow IPC files plus a manifest.
//!
//! A dataset is a directory:
//!
//! ```text
//! DIR/manifest.json        format version, game, encoder, split rule, shards
//!                          (file, rows, bytes, sha256, rows per split), totals,
//!                          program version, provenance
//! DIR/part-00000.arrow     Arrow IPC file format, zstd-compressed buffers
//! DIR/part-00001.arrow     ...
//! ```
//!
//! One row per position ([`PositionRow`]; columns in [`schema`]). Train,
//! validation and test are assigned per game by a stable hash of the game id
//! ([`SplitRule`]), so no game crosses splits; each row also stores its split
//! in the `split` column for outside tools. The `fold` column holds the
//! game's fold for k-fold cross-validation, by another stable hash of the
//! game id ([`fold`]; `k` is in the manifest). Shards and then the manifest are
//! written under temporary names, fsynced and renamed ([`writer`]): a
//! directory with a manifest always holds a complete dataset, and a
//! replaced one is swapped in whole. Every read checks each shard's sha256
//! against the manifest as it reads the shard.
//!
//! The shards are plain Arrow IPC files (checked with pyarrow 26, polars 2.1
//! and DuckDB 2.0):
//!
//! ```python
//! import pyarrow.dataset as ds, polars as pl, duckdb
//! t = ds.dataset("DIR", format="arrow", exclude_invalid_files=True).to_table()  # skips manifest.json
//! df = pl.read_ipc("DIR/part-*.arrow")
//! duckdb.sql("select split, count(*) from df group by split")
//! ```
//!
//! The split of a game can be recomputed outside Rust (the [`split`] module
//! gives the function in Python), and each row's `split` column holds it anyway.
//!
//! ```
//! use plies::dataset::{Dataset, DatasetSpec, DatasetWriter, EncoderInfo, PositionRow};
//!
//! # fn main() -> Result<(), plies::dataset::DatasetError> {
//! let dir = tempfile::tempdir().expect("temp dir");
//! let encoder = EncoderInfo { name: "ttt-2x3x3".into(), version: 1, shape: [2, 3, 3], globals: 0 };
//! let mut writer = DatasetWriter::create(dir.path(), DatasetSpec::new("tic_tac_toe", encoder))?;
//! for ply in 0..3u32 {
//!     writer.push(PositionRow {
//!         game_id: "selfplay-1".into(),
//!         ply,
//!         plies_to_end: 2 - ply,
//!         side_to_move: (ply % 2) as u8,
//!         position: "...".into(),
//!         planes: vec![0; 18],
//!         globals: vec![],
//!         label: 0.5,
//!         move_played: (ply < 2).then(|| "b2".to_string()),
//!         source: "selfplay:random-vs-random".into(),
//!         termination: None,
//!         white_rating: None,
//!         black_rating: None,
//!         policy: None,
//!     })?;
//! }
//! let manifest = writer.finish(serde_json::json!({ "command": "example", "seed": 1 }))?;
//! assert_eq!(manifest.totals.rows, 3);
//!
//! let dataset = Dataset::open(dir.path())?;
//! let report = dataset.verify()?;
//! assert_eq!(report.rows, 3);
//! let split = dataset.spec().split.split_of("selfplay-1");
//! assert_eq!(dataset.rows(Some(split))?.len(), 3);
//! assert_eq!(dataset.games(None)?.len(), 1);
//! println!("{}", dataset.stats()?);
//! # Ok(()) }
//! ```

mod error;
pub mod fold;
mod fsio;
mod ipc_guard;
pub mod loader;
pub mod manifest;
mod merge;
mod reader;
mod row;
pub mod schema;
mod source_weights;
mod spec;
pub mod split;
mod stats;
pub mod stream;
mod verify;
pub mod writer;

pub use error::{DatasetError, Result};
pub use fold::{fold_of, FoldInfo, DEFAULT_FOLDS, FOLD_ASSIGN};
pub use loader::{Batch, Epoch, Loader};
pub use manifest::{
    shard_file_name, Manifest, ShardInfo, SplitInfo, Totals, FORMAT_VERSION, MANIFEST_FILE,
};
pub use merge::{merge, MergeReport};
pub use reader::Dataset;
pub use row::{GameRows, PolicyTarget, PositionRow};
pub use schema::{dataset_schema, SCHEMA_METADATA_KEY};
pub use source_weights::{RuleRows, SourceWeight, SourceWeightError, SourceWeights};
pub use spec::{DatasetSpec, EncoderInfo, DEFAULT_SHARD_ROWS};
pub use split::{
    fmix64, fnv1a64, split_unit, ParseSplitError, Split, SplitCounts, SplitRule, SPLIT_ASSIGN,
    SPLIT_HASH,
};
pub use stats::{HeightBucket, LabelCounts, PliesPerGame, SideCounts, Stats, HEIGHT_BUCKET};
pub use stream::{
    RowText, StreamBatch, StreamConfig, StreamEpoch, StreamError, StreamLoader, TensorBatch,
};
pub use verify::{ShardReport, VerifyReport, BUILD_REPORT_FILE};
pub use writer::{staging_dir, DatasetWriter, STAGING_DIR};
