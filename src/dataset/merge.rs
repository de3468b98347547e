//! `plies dataset merge`: several datasets of one game and encoder (the
//! shards of a self-play run spread over machines) joined into one whose
//! manifest lists every shard.
//!
//! Shards are hard-linked into the new directory, not copied: the merged
//! dataset is then a directory like any other (every reader, `verify`,
//! DuckDB's or polars' globs, an upload to the hub, see it whole) while
//! the bytes are on disk once, and it stays whole if the sources are
//! removed. A manifest pointing into the source folders would instead
//! break the one-directory layout those tools read. Where a link is
//! impossible (another file system) the shard is copied, and the report
//! says how many were.
//!
//! Game ids must differ between the sources (self-play shards' do: the
//! game index is in the id); `verify` checks it on the merged dataset.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::{DatasetError, Result};
use super::manifest::{created_by, shard_file_name, Manifest, ShardInfo, Totals, MANIFEST_FILE};
use super::reader::Dataset;
use crate::util::atomic::{write_atomic_named, TempName};
use crate::util::replace::{remove_if_there, staging_path, swap_in};
use crate::util::DirLock;

/// What [`merge`] did.
#[derive(Clone, Debug, Serialize)]
pub struct MergeReport {
    pub out: PathBuf,
    pub sources: Vec<PathBuf>,
    pub shards: usize,
    pub rows: u64,
    pub games: u64,
    /// Shards hard-linked, and copied where a link was impossible.
    pub linked: usize,
    pub copied: usize,
    pub manifest_sha256: String,
}

/// The first field in which `other`'s manifest differs from `first`'s,
/// among those that must agree.
fn mismatch(first: &Manifest, other: &Manifest) -> Option<(&'static str, String, String)> {
    let pair =
        |a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| (format!("{a:?}"), format!("{b:?}"));
    if first.format_version != other.format_version {
        // Shards of one dataset share one schema (format 3 added columns).
        let (a, b) = pair(&first.format_version, &other.format_version);
        return Some(("format_version", a, b));
    }
    if first.game != other.game {
        let (a, b) = pair(&first.game, &other.game);
        return Some(("game", a, b));
    }
    if first.encoder != other.encoder {
        let (a, b) = pair(&first.encoder, &other.encoder);
        return Some(("encoder", a, b));
    }
    if first.split != other.split {
        let (a, b) = pair(&first.split, &other.split);
        return Some(("split", a, b));
    }
    if first.folds != other.folds {
        let (a, b) = pair(&first.folds, &other.folds);
        return Some(("folds", a, b));
    }
    None
}

/// Joins the datasets `sources` (in that order) into the new dataset `out`
/// (absent or empty), which appears whole or not at all.
pub fn merge(sources: &[PathBuf], out: &Path) -> Result<MergeReport> {
    let Some(first_dir) = sources.first() else {
        return Err(DatasetError::InvalidArgument {
            what: "merge",
            field: "sources",
            found: "no dataset".into(),
            expected: "one dataset directory or more".into(),
        });
    };
    let datasets: Vec<Dataset> = sources.iter().map(Dataset::open).collect::<Result<_>>()?;
    let first = datasets[0].manifest();
    for ds in &datasets[1..] {
        if let Some((field, expected, found)) = mismatch(first, ds.manifest()) {
            return Err(DatasetError::ManifestField {
                path: ds.dir().join(MANIFEST_FILE),
                field: field.into(),
                problem: format!(
                    "expected {expected} as in {}, found {found}; only datasets of one game, \
                     encoder, split and folds merge",
                    first_dir.display()
                ),
            });
        }
    }
    let not_empty = std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_some());
    if not_empty {
        return Err(DatasetError::AlreadyExists {
            path: out.to_path_buf(),
            found: "a directory that is not empty".into(),
        });
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(DatasetError::io(
            parent,
            "create the output's parent directory",
        ))?;
    }
    let _lock = DirLock::acquire(out)?;
    let staged = staging_path(out).map_err(DatasetError::io(out, "name the staging folder"))?;
    remove_if_there(&staged).map_err(DatasetError::io(&staged, "remove an old staging folder"))?;
    std::fs::create_dir(&staged).map_err(DatasetError::io(&staged, "create the staging folder"))?;
    let mut shards = Vec::new();
    let mut totals = Totals::default();
    let (mut linked, mut copied) = (0, 0);
    let mut provenance = Vec::new();
    for ds in &datasets {
        let m = ds.manifest();
        for (i, shard) in m.shards.iter().enumerate() {
            let file = shard_file_name(shards.len());
            let (from, to) = (ds.shard_path(i), staged.join(&file));
            if std::fs::hard_link(&from, &to).is_ok() {
                linked += 1;
            } else {
                std::fs::copy(&from, &to).map_err(DatasetError::io(&to, "copy a shard"))?;
                copied += 1;
            }
            shards.push(ShardInfo {
                file,
                ..shard.clone()
            });
        }
        totals.rows += m.totals.rows;
        totals.games += m.totals.games;
        totals.rows_per_split.add(&m.totals.rows_per_split);
        totals.games_per_split.add(&m.totals.games_per_split);
        provenance.push(serde_json::json!({
            "dir": ds.dir().display().to_string(),
            "manifest_sha256": ds.manifest_sha256(),
            "shards": m.shards.len(),
            "rows": m.totals.rows,
            "provenance": m.provenance,
        }));
    }
    let manifest = Manifest {
        shard_rows: datasets
            .iter()
            .map(|d| d.manifest().shard_rows)
            .max()
            .unwrap_or(1),
        shards,
        totals,
        created_by: created_by(),
        provenance: serde_json::json!({ "merged_from": provenance }),
        ..first.clone()
    };
    manifest.validate(&out.join(MANIFEST_FILE))?;
    let json = manifest.to_json_pretty();
    write_atomic_named(
        &staged.join(MANIFEST_FILE),
        TempName::Fixed,
        json.as_bytes(),
    )?;
    swap_in(&staged, out)?;
    Ok(MergeReport {
        out: out.to_path_buf(),
        sources: sources.to_vec(),
        shards: manifest.shards.len(),
        rows: manifest.totals.rows,
        games: manifest.totals.games,
        linked,
        copied,
        manifest_sha256: Dataset::open(out)?.manifest_sha256().to_string(),
    })
}
