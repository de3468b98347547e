//! `manifest.json`: what a dataset holds and how to check it.
//!
//! ```json
//! {
//!   "format_version": 3,
//!   "game": "tic_tac_toe",
//!   "encoder": { "name": "ttt-2x3x3", "version": 1, "shape": [2, 3, 3], "globals": 0 },
//!   "split": { "hash": "fnv1a64(game_id)", "assign": "u = ...", "valid": 0.1, "test": 0.1 },
//!   "folds": { "k": 5, "assign": "fold = fmix64(fnv1a64(utf8(game_id)) ^ ...) mod k, ..." },
//!   "shard_rows": 100000,
//!   "shards": [ { "file": "part-00000.arrow", "rows": 9, "bytes": 4242, "sha256": "ab12...",
//!                 "rows_per_split": { "train": 9, "valid": 0, "test": 0 } } ],
//!   "totals": { "rows": 9, "games": 1,
//!               "rows_per_split": { "train": 9, "valid": 0, "test": 0 },
//!               "games_per_split": { "train": 1, "valid": 0, "test": 0 } },
//!   "created_by": "plies 0.1.0",
//!   "provenance": { "command": "plies selfplay ...", "seed": 7 }
//! }
//! ```
//!
//! Format 3 added the policy columns (`policy_index`, `policy_prob`); format
//! 2 datasets are read as they are, without policy targets. Format 2 added
//! the `fold` column and the `folds` field; format 1 datasets are refused
//! with a message asking to rebuild them.
//!
//! The manifest is written last (temporary name, fsync, rename), so a
//! directory with a manifest always holds a complete dataset.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::error::{DatasetError, Result};
use super::fold::{FoldInfo, FOLD_ASSIGN};
use super::spec::{DatasetSpec, EncoderInfo};
use super::split::{SplitCounts, SplitRule, SPLIT_ASSIGN, SPLIT_HASH};

/// Version of the on-disk format this code writes (and the newest it reads).
pub const FORMAT_VERSION: u32 = 3;

/// The oldest format this code reads.
pub const OLDEST_READ_VERSION: u32 = 2;

/// File name of the manifest inside a dataset directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// File name of shard `index`: `part-00000.arrow`, `part-00001.arrow`, ...
pub fn shard_file_name(index: usize) -> String {
    format!("part-{index:05}.arrow")
}

/// The split rule as recorded in the manifest, with the hash named.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitInfo {
    /// Always [`SPLIT_HASH`].
    pub hash: String,
    /// How the hash maps to a split ([`SPLIT_ASSIGN`]), for other tools.
    pub assign: String,
    pub valid: f64,
    pub test: f64,
}

impl SplitInfo {
    /// The recorded rule.
    pub fn rule(&self) -> SplitRule {
        SplitRule {
            valid: self.valid,
            test: self.test,
        }
    }
}

impl From<SplitRule> for SplitInfo {
    fn from(rule: SplitRule) -> Self {
        SplitInfo {
            hash: SPLIT_HASH.to_string(),
            assign: SPLIT_ASSIGN.to_string(),
            valid: rule.valid,
            test: rule.test,
        }
    }
}

/// One shard file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// File name inside the dataset directory (`part-NNNNN.arrow`).
    pub file: String,
    pub rows: u64,
    /// File size in bytes.
    pub bytes: u64,
    /// Lower-case hex sha256 of the file's bytes.
    pub sha256: String,
    pub rows_per_split: SplitCounts,
}

/// Counts over the whole dataset.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    pub rows: u64,
    /// Distinct game ids.
    pub games: u64,
    pub rows_per_split: SplitCounts,
    pub games_per_split: SplitCounts,
}

/// The contents of `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    pub game: String,
    pub encoder: EncoderInfo,
    pub split: SplitInfo,
    /// The k-fold rule of the `fold` column.
    pub folds: FoldInfo,
    pub shard_rows: usize,
    pub shards: Vec<ShardInfo>,
    pub totals: Totals,
    /// `plies <version>` of the program that wrote the dataset.
    pub created_by: String,
    /// Free JSON: command line, seed, sources, how the data was made.
    pub provenance: serde_json::Value,
}

/// `plies <crate version>`.
pub(crate) fn created_by() -> String {
    format!("plies {}", env!("CARGO_PKG_VERSION"))
}

impl Manifest {
    /// The spec the dataset was written with.
    pub fn spec(&self) -> DatasetSpec {
        DatasetSpec {
            game: self.game.clone(),
            encoder: self.encoder.clone(),
            split: self.split.rule(),
            shard_rows: self.shard_rows,
            folds: self.folds.k,
        }
    }

    /// Parses and validates manifest bytes; `path` is only used in errors.
    pub fn from_slice(bytes: &[u8], path: &Path) -> Result<Self> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|source| DatasetError::ManifestJson {
                path: path.to_path_buf(),
                source,
            })?;
        let field_err = |field: &str, problem: String| DatasetError::ManifestField {
            path: path.to_path_buf(),
            field: field.to_string(),
            problem,
        };
        let serde_json::Value::Object(mut obj) = value else {
            return Err(field_err(
                "(top level)",
                format!("expected a JSON object, found {}", json_kind(&value)),
            ));
        };
        // The version first: a newer format may differ in any other field.
        match obj.get("format_version") {
            None => return Err(field_err("format_version", "missing".into())),
            Some(v)
                if v.as_u64().is_some_and(|n| {
                    (OLDEST_READ_VERSION as u64..=FORMAT_VERSION as u64).contains(&n)
                }) => {}
            Some(v) if v.as_u64().is_some_and(|n| n < OLDEST_READ_VERSION as u64) => {
                return Err(field_err(
                    "format_version",
                    format!(
                        "expected {FORMAT_VERSION}, found {v}: an older dataset format (no `fold` column); rebuild the dataset with this version of plies"
                    ),
                ))
            }
            Some(v) => {
                return Err(field_err(
                    "format_version",
                    format!(
                    "expected {FORMAT_VERSION}, found {v} (written by another version of plies?)"
                ),
                ))
            }
        }
        let mut take = |field: &'static str| -> Result<serde_json::Value> {
            obj.remove(field)
                .ok_or_else(|| field_err(field, "missing".into()))
        };
        fn parse<T: DeserializeOwned>(
            value: serde_json::Value,
            field: &str,
            path: &Path,
        ) -> Result<T> {
            serde_json::from_value(value).map_err(|e| DatasetError::ManifestField {
                path: path.to_path_buf(),
                field: field.to_string(),
                problem: e.to_string(),
            })
        }
        let format_version = parse(take("format_version")?, "format_version", path)?;
        let manifest = Manifest {
            format_version,
            game: parse(take("game")?, "game", path)?,
            encoder: parse(take("encoder")?, "encoder", path)?,
            split: parse(take("split")?, "split", path)?,
            folds: parse(take("folds")?, "folds", path)?,
            shard_rows: parse(take("shard_rows")?, "shard_rows", path)?,
            shards: parse(take("shards")?, "shards", path)?,
            totals: parse(take("totals")?, "totals", path)?,
            created_by: parse(take("created_by")?, "created_by", path)?,
            provenance: take("provenance")?,
        };
        manifest.validate(path)?;
        Ok(manifest)
    }

    /// Reads and validates `path` (a `manifest.json`).
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(DatasetError::io(path, "read the manifest"))?;
        Self::from_slice(&bytes, path)
    }

    /// Checks that the manifest is self-consistent: names, hashes, counts.
    pub fn validate(&self, path: &Path) -> Result<()> {
        let err = |field: String, problem: String| DatasetError::ManifestField {
            path: path.to_path_buf(),
            field,
            problem,
        };
        if !(OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&self.format_version) {
            return Err(err(
                "format_version".into(),
                format!(
                    "expected {OLDEST_READ_VERSION} to {FORMAT_VERSION}, found {}",
                    self.format_version
                ),
            ));
        }
        if self.split.hash != SPLIT_HASH {
            return Err(err(
                "split.hash".into(),
                format!("expected \"{SPLIT_HASH}\", found \"{}\"", self.split.hash),
            ));
        }
        if self.folds.assign != FOLD_ASSIGN {
            return Err(err(
                "folds.assign".into(),
                format!(
                    "expected \"{FOLD_ASSIGN}\", found \"{}\"",
                    self.folds.assign
                ),
            ));
        }
        // Reuse the spec checks, but report them as manifest fields.
        self.spec().validate().map_err(|e| match e {
            DatasetError::InvalidArgument {
                field,
                expected,
                found,
                ..
            } => err(field.into(), format!("expected {expected}, found {found}")),
            other => other,
        })?;
        // Counts come from the file: sums past u64::MAX are refused, not wrapped.
        let overflow = |field: String| err(field, "the counts add up past 2^64".into());
        let mut rows = 0u64;
        let mut rows_per_split = SplitCounts::default();
        for (i, shard) in self.shards.iter().enumerate() {
            let field = |name: &str| format!("shards[{i}].{name}");
            let want = shard_file_name(i);
            if shard.file != want {
                return Err(err(
                    field("file"),
                    format!("expected \"{want}\", found \"{}\"", shard.file),
                ));
            }
            if shard.sha256.len() != 64
                || !shard
                    .sha256
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            {
                return Err(err(
                    field("sha256"),
                    format!(
                        "expected 64 lower-case hex digits, found \"{}\"",
                        shard.sha256
                    ),
                ));
            }
            let split_rows = shard
                .rows_per_split
                .checked_total()
                .ok_or_else(|| overflow(field("rows_per_split")))?;
            if split_rows != shard.rows {
                return Err(err(
                    field("rows_per_split"),
                    format!(
                        "expected the splits to add up to rows = {}, they add up to {split_rows}",
                        shard.rows
                    ),
                ));
            }
            rows = rows
                .checked_add(shard.rows)
                .ok_or_else(|| overflow(field("rows")))?;
            rows_per_split = rows_per_split
                .checked_sum(&shard.rows_per_split)
                .ok_or_else(|| overflow(field("rows_per_split")))?;
        }
        let t = &self.totals;
        if t.rows != rows {
            return Err(err(
                "totals.rows".into(),
                format!("expected the sum over shards, {rows}, found {}", t.rows),
            ));
        }
        if t.rows_per_split != rows_per_split {
            return Err(err(
                "totals.rows_per_split".into(),
                format!(
                    "expected the sum over shards, {rows_per_split:?}, found {:?}",
                    t.rows_per_split
                ),
            ));
        }
        let split_games = t
            .games_per_split
            .checked_total()
            .ok_or_else(|| overflow("totals.games_per_split".into()))?;
        if split_games != t.games {
            return Err(err(
                "totals.games_per_split".into(),
                format!(
                    "expected the splits to add up to games = {}, they add up to {split_games}",
                    t.games
                ),
            ));
        }
        if t.games > t.rows {
            return Err(err(
                "totals.games".into(),
                format!("expected at most rows = {}, found {}", t.rows, t.games),
            ));
        }
        Ok(())
    }

    /// Pretty JSON, as written to disk.
    pub fn to_json_pretty(&self) -> String {
        // A manifest holds only strings, numbers and JSON values: it always serializes.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        let counts = SplitCounts {
            train: 3,
            valid: 1,
            test: 0,
        };
        Manifest {
            format_version: FORMAT_VERSION,
            game: "tic_tac_toe".into(),
            encoder: EncoderInfo {
                name: "ttt".into(),
                version: 1,
                shape: [2, 3, 3],
                globals: 0,
            },
            split: SplitRule::default().into(),
            folds: FoldInfo::new(5),
            shard_rows: 10,
            shards: vec![ShardInfo {
                file: shard_file_name(0),
                rows: 4,
                bytes: 100,
                sha256: "0".repeat(64),
                rows_per_split: counts,
            }],
            totals: Totals {
                rows: 4,
                games: 2,
                rows_per_split: counts,
                games_per_split: SplitCounts {
                    train: 1,
                    valid: 1,
                    test: 0,
                },
            },
            created_by: created_by(),
            provenance: serde_json::json!({"seed": 1}),
        }
    }

    fn parse(json: &str) -> Result<Manifest> {
        Manifest::from_slice(json.as_bytes(), Path::new("d/manifest.json"))
    }

    #[test]
    fn round_trip() {
        let m = sample();
        assert_eq!(parse(&m.to_json_pretty()).unwrap(), m);
    }

    #[test]
    fn bad_json_names_the_file() {
        let e = parse("{ not json").unwrap_err();
        assert!(matches!(e, DatasetError::ManifestJson { .. }));
        assert!(e.to_string().contains("d/manifest.json"), "{e}");
    }

    #[test]
    fn wrong_version_names_the_field() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v["format_version"] = (FORMAT_VERSION + 1).into();
        let e = parse(&v.to_string()).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("format_version") && msg.contains("manifest.json"),
            "{msg}"
        );
    }

    #[test]
    fn an_older_format_asks_for_a_rebuild() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v["format_version"] = 1.into();
        v.as_object_mut().unwrap().remove("folds");
        let msg = parse(&v.to_string()).unwrap_err().to_string();
        assert!(
            msg.contains("format_version") && msg.contains("rebuild"),
            "{msg}"
        );
        let mut v = serde_json::to_value(sample()).unwrap();
        v["folds"]["k"] = 0.into();
        let msg = parse(&v.to_string()).unwrap_err().to_string();
        assert!(msg.contains("folds"), "{msg}");
    }

    #[test]
    fn missing_and_mistyped_fields_are_named() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v.as_object_mut().unwrap().remove("totals");
        let msg = parse(&v.to_string()).unwrap_err().to_string();
        assert!(msg.contains("`totals`") && msg.contains("missing"), "{msg}");

        let mut v = serde_json::to_value(sample()).unwrap();
        v["encoder"]["version"] = "one".into();
        let msg = parse(&v.to_string()).unwrap_err().to_string();
        assert!(msg.contains("`encoder`"), "{msg}");

        let msg = parse("[1, 2]").unwrap_err().to_string();
        assert!(msg.contains("JSON object"), "{msg}");
    }

    #[test]
    fn inconsistent_counts_and_names_are_rejected() {
        let mut m = sample();
        m.totals.rows = 5;
        let msg = parse(&m.to_json_pretty()).unwrap_err().to_string();
        assert!(msg.contains("totals.rows"), "{msg}");

        let mut m = sample();
        m.shards[0].file = "../../etc/passwd".into();
        let msg = parse(&m.to_json_pretty()).unwrap_err().to_string();
        assert!(msg.contains("shards[0].file"), "{msg}");

        let mut m = sample();
        m.shards[0].sha256 = "xyz".into();
        let msg = parse(&m.to_json_pretty()).unwrap_err().to_string();
        assert!(msg.contains("shards[0].sha256"), "{msg}");

        let mut m = sample();
        m.split.hash = "md5(game_id)".into();
        let msg = parse(&m.to_json_pretty()).unwrap_err().to_string();
        assert!(msg.contains("split.hash"), "{msg}");

        let mut m = sample();
        m.split.valid = 0.95;
        let msg = parse(&m.to_json_pretty()).unwrap_err().to_string();
        assert!(msg.contains("split.valid + split.test"), "{msg}");
    }
}
