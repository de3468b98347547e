//! `Dataset::verify`: check every shard against the manifest and the split rule.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use super::error::{DatasetError, Result};
use super::fold::fold_of;
use super::manifest::MANIFEST_FILE;
use super::reader::Dataset;
use super::schema::Columns;
use super::split::{Split, SplitCounts};
use super::writer::{is_shard_file, is_temp_file, STAGING_DIR};

/// File name of the report `plies dataset build` writes beside the manifest
/// (not part of the dataset; verify does not count it as stray).
pub const BUILD_REPORT_FILE: &str = "build-report.json";

/// What an interrupted write can leave in a dataset directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Leftovers {
    /// Shards inside the staging folder, when there is one.
    pub staging_shards: Option<usize>,
    /// The staging directory beside the dataset, when there is one.
    pub staging_dir: Option<PathBuf>,
    /// Temporary shard and manifest files (`.part-NNNNN.arrow.tmp`, ...).
    pub temp_files: Vec<String>,
    /// Finished shard files (`part-NNNNN.arrow`).
    pub shards: Vec<String>,
}

impl Leftovers {
    /// One phrase per leftover kind, naming the files.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(n) = self.staging_shards {
            let name = self
                .staging_dir
                .as_deref()
                .map_or_else(|| STAGING_DIR.to_string(), |p| p.display().to_string());
            out.push(format!(
                "a staging folder {name}/ holding {n} shard(s) of an unfinished overwrite"
            ));
        }
        if !self.temp_files.is_empty() {
            out.push(format!("temporary file(s) {}", self.temp_files.join(", ")));
        }
        out
    }
}

/// Lists the shards, temporary files and staging folder of `dir`.
pub(crate) fn leftovers(dir: &Path) -> Result<Leftovers> {
    let mut left = Leftovers::default();
    let entries =
        std::fs::read_dir(dir).map_err(DatasetError::io(dir, "list the dataset directory"))?;
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if name == STAGING_DIR {
            let staged = std::fs::read_dir(entry.path())
                .map(|e| {
                    e.flatten()
                        .filter(|e| {
                            e.file_name()
                                .to_str()
                                .is_some_and(|n| is_shard_file(n) || is_temp_file(n))
                        })
                        .count()
                })
                .unwrap_or(0);
            left.staging_shards = Some(staged);
        } else if is_temp_file(&name) {
            left.temp_files.push(name);
        } else if is_shard_file(&name) {
            left.shards.push(name);
        }
    }
    let staging = super::writer::staging_dir(dir);
    if let Ok(entries) = std::fs::read_dir(&staging) {
        let staged = entries
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| is_shard_file(n) || is_temp_file(n))
            })
            .count();
        left.staging_dir = Some(staging);
        left.staging_shards = Some(left.staging_shards.unwrap_or(0) + staged);
    }
    left.temp_files.sort();
    left.shards.sort();
    Ok(left)
}

/// When `dir` has no manifest: an error saying it holds a half-written
/// dataset if it holds shards, temporary files or a staging folder.
pub(crate) fn interrupted_error(dir: &Path) -> Option<DatasetError> {
    let left = leftovers(dir).ok()?;
    let mut found = left.describe();
    if !left.shards.is_empty() {
        found.insert(
            0,
            format!(
                "{} shard file(s) ({}{})",
                left.shards.len(),
                left.shards[0],
                if left.shards.len() > 1 { ", ..." } else { "" }
            ),
        );
    }
    if found.is_empty() {
        return None;
    }
    Some(DatasetError::Interrupted {
        path: dir.to_path_buf(),
        found: found.join("; "),
    })
}

/// What one verified shard holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ShardReport {
    pub file: String,
    pub rows: u64,
    pub bytes: u64,
    pub rows_per_split: SplitCounts,
}

/// The result of a successful [`Dataset::verify`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    pub dir: PathBuf,
    pub shards: Vec<ShardReport>,
    pub rows: u64,
    pub games: u64,
    pub rows_per_split: SplitCounts,
    pub games_per_split: SplitCounts,
    /// Files in the directory that the manifest does not list (e.g. leftover
    /// temporary files). Not an error, but tools that glob `*.arrow` would
    /// read stray shards.
    pub stray_files: Vec<String>,
    /// What an interrupted write left beside the dataset: the staging folder
    /// of an unfinished `create_overwrite` (with its shard count) and
    /// temporary shard or manifest files. The dataset itself is complete.
    pub interrupted_write: Vec<String>,
    /// Rows per fold (index = fold).
    pub rows_per_fold: Vec<u64>,
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "dataset {}: OK", self.dir.display())?;
        writeln!(
            f,
            "{:<18} {:>10} {:>12} {:>10} {:>10} {:>10}",
            "shard", "rows", "bytes", "train", "valid", "test"
        )?;
        for s in &self.shards {
            let c = &s.rows_per_split;
            writeln!(
                f,
                "{:<18} {:>10} {:>12} {:>10} {:>10} {:>10}",
                s.file, s.rows, s.bytes, c.train, c.valid, c.test
            )?;
        }
        let r = &self.rows_per_split;
        let g = &self.games_per_split;
        writeln!(
            f,
            "{:<18} {:>10} {:>12} {:>10} {:>10} {:>10}",
            "total rows", self.rows, "", r.train, r.valid, r.test
        )?;
        writeln!(
            f,
            "{:<18} {:>10} {:>12} {:>10} {:>10} {:>10}",
            "total games", self.games, "", g.train, g.valid, g.test
        )?;
        let folds: Vec<String> = self.rows_per_fold.iter().map(u64::to_string).collect();
        writeln!(f, "rows per fold: {}", folds.join(" / "))?;
        if !self.interrupted_write.is_empty() {
            writeln!(
                f,
                "warning: an interrupted write left {} in {}; the dataset above is the complete one \
                 its manifest names, and the next overwrite (--force) removes them",
                self.interrupted_write.join(", "),
                self.dir.display()
            )?;
        }
        if !self.stray_files.is_empty() {
            writeln!(
                f,
                "warning: files not in the manifest: {}",
                self.stray_files.join(", ")
            )?;
        }
        Ok(())
    }
}

/// What one shard contributes to the totals.
struct ShardScan {
    rows_per_split: SplitCounts,
    rows_per_fold: Vec<u64>,
    /// Game id -> (split, (ply, row in shard) of that game's rows in this shard).
    games: HashMap<String, (Split, Vec<(u32, usize)>)>,
}

/// Checks every row of one batch; adds to `scan`.
fn scan_batch(
    cols: &Columns<'_>,
    rule: &super::split::SplitRule,
    folds: u8,
    scan: &mut ShardScan,
) -> Result<()> {
    for i in 0..cols.len() {
        let game_id = cols.game_id.value(i);
        let split = cols.split(i)?;
        let want = rule.split_of(game_id);
        if split != want {
            return Err(cols.row_error(
                i,
                "split",
                format!("`{want}` (the split rule applied to game `{game_id}`)"),
                format!("`{split}`"),
            ));
        }
        let fold = cols.fold.value(i);
        let want_fold = fold_of(game_id, folds);
        if fold != want_fold {
            return Err(cols.row_error(
                i,
                "fold",
                format!("{want_fold} (the fold rule with k = {folds} applied to game `{game_id}`)"),
                fold.to_string(),
            ));
        }
        scan.rows_per_fold[usize::from(fold)] += 1;
        let stm = cols.side_to_move.value(i);
        if stm > 1 {
            return Err(cols.row_error(i, "side_to_move", "0 or 1".into(), stm.to_string()));
        }
        let label = cols.label.value(i);
        if !(label.is_finite() && (0.0..=1.0).contains(&label)) {
            return Err(cols.row_error(i, "label", "a result in [0, 1]".into(), label.to_string()));
        }
        if let Some(g) = cols.globals(i).iter().find(|g| !g.is_finite()) {
            return Err(cols.row_error(i, "globals", "finite values".into(), g.to_string()));
        }
        if let Some(why) = cols.policy(i)?.and_then(|p| p.problem()) {
            return Err(cols.row_error(
                i,
                "policy",
                "policy indices with probabilities summing to 1".into(),
                why,
            ));
        }
        scan.rows_per_split[split] += 1;
        let ply = (cols.ply.value(i), cols.shard_row(i));
        match scan.games.get_mut(game_id) {
            Some((_, plies)) => plies.push(ply),
            None => {
                scan.games.insert(game_id.to_string(), (split, vec![ply]));
            }
        }
    }
    Ok(())
}

impl Dataset {
    /// What an interrupted write left beside this dataset (a staging folder,
    /// temporary files), one phrase each; empty when nothing.
    pub fn verify_leftovers(&self) -> Result<Vec<String>> {
        Ok(leftovers(self.dir())?.describe())
    }

    /// Checks that every shard exists, has the recorded size and sha256,
    /// decodes as Arrow IPC with the expected schema, and that rows per shard
    /// and per split, games, and each row's split match the manifest and the
    /// split rule; no `(game_id, ply)` appears twice.
    ///
    /// Returns the first problem found, in shard order.
    pub fn verify(&self) -> Result<VerifyReport> {
        let manifest = self.manifest();
        let rule = manifest.split.rule();
        let folds = manifest.folds.k.max(1);
        let scans: Vec<Result<ShardScan>> = (0..manifest.shards.len())
            .into_par_iter()
            .map(|i| {
                let path = self.shard_path(i);
                let batches = self.read_shard(i)?;
                let mut scan = ShardScan {
                    rows_per_split: SplitCounts::default(),
                    rows_per_fold: vec![0; usize::from(folds)],
                    games: HashMap::new(),
                };
                let mut offset = 0;
                for batch in &batches {
                    let cols = Columns::new(batch, &path, i, offset)?;
                    scan_batch(&cols, &rule, folds, &mut scan)?;
                    offset += batch.num_rows();
                }
                Ok(scan)
            })
            .collect();

        let mut report = VerifyReport {
            dir: self.dir().to_path_buf(),
            shards: Vec::with_capacity(scans.len()),
            rows: 0,
            games: 0,
            rows_per_split: SplitCounts::default(),
            games_per_split: SplitCounts::default(),
            stray_files: Vec::new(),
            interrupted_write: Vec::new(),
            rows_per_fold: vec![0; usize::from(folds)],
        };
        let mut plies_seen: HashMap<String, (Split, HashSet<u32>)> = HashMap::new();
        for (i, scan) in scans.into_iter().enumerate() {
            let scan = scan?;
            let info = &manifest.shards[i];
            let path = self.shard_path(i);
            for s in Split::ALL {
                if scan.rows_per_split[s] != info.rows_per_split[s] {
                    return Err(DatasetError::CountMismatch {
                        path,
                        what: format!("rows of split {s}"),
                        expected: info.rows_per_split[s],
                        found: scan.rows_per_split[s],
                    });
                }
            }
            for (game_id, (split, plies)) in scan.games {
                let entry = plies_seen
                    .entry(game_id.clone())
                    .or_insert_with(|| (split, HashSet::new()));
                for (ply, row) in plies {
                    if !entry.1.insert(ply) {
                        return Err(DatasetError::ShardRow {
                            path: path.clone(),
                            shard: i,
                            row,
                            field: "ply",
                            expected: format!("each (game_id, ply) once; game `{game_id}`"),
                            found: format!("ply {ply} a second time"),
                        });
                    }
                }
            }
            for (total, n) in report.rows_per_fold.iter_mut().zip(&scan.rows_per_fold) {
                *total += n;
            }
            report.rows += scan.rows_per_split.total();
            report.rows_per_split.add(&scan.rows_per_split);
            report.shards.push(ShardReport {
                file: info.file.clone(),
                rows: info.rows,
                bytes: info.bytes,
                rows_per_split: info.rows_per_split,
            });
        }
        report.games = plies_seen.len() as u64;
        for (split, _) in plies_seen.values() {
            report.games_per_split[*split] += 1;
        }

        let manifest_path = self.dir().join(MANIFEST_FILE);
        let totals = &manifest.totals;
        let check = |what: String, expected: u64, found: u64| {
            if expected == found {
                Ok(())
            } else {
                Err(DatasetError::CountMismatch {
                    path: manifest_path.clone(),
                    what,
                    expected,
                    found,
                })
            }
        };
        check("totals.rows".into(), totals.rows, report.rows)?;
        check("totals.games".into(), totals.games, report.games)?;
        for s in Split::ALL {
            check(
                format!("totals.games_per_split.{s}"),
                totals.games_per_split[s],
                report.games_per_split[s],
            )?;
        }

        let listed: HashSet<&str> = manifest
            .shards
            .iter()
            .map(|s| s.file.as_str())
            .chain([MANIFEST_FILE, BUILD_REPORT_FILE])
            .collect();
        let entries = std::fs::read_dir(self.dir())
            .map_err(DatasetError::io(self.dir(), "list the dataset directory"))?;
        for entry in entries.flatten() {
            if let Some(name) = entry.file_name().to_str() {
                if !listed.contains(name) {
                    report.stray_files.push(name.to_string());
                }
            }
        }
        report.stray_files.sort();
        let left = leftovers(self.dir())?;
        report.interrupted_write = left.describe();
        report
            .stray_files
            .retain(|f| f != STAGING_DIR && !is_temp_file(f));
        if !report.stray_files.is_empty() {
            tracing::warn!(dir = %self.dir().display(), files = ?report.stray_files, "files not listed in the manifest");
        }
        Ok(report)
    }
}
