//! `Dataset::verify`: check every shard against the manifest and the split rule.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::PathBuf;

use rayon::prelude::*;
use serde::Serialize;

use super::error::{DatasetError, Result};
use super::manifest::MANIFEST_FILE;
use super::reader::Dataset;
use super::schema::Columns;
use super::split::{Split, SplitCounts};

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
    /// Game id -> (split, (ply, row in shard) of that game's rows in this shard).
    games: HashMap<String, (Split, Vec<(u32, usize)>)>,
}

/// Checks every row of one batch; adds to `scan`.
fn scan_batch(
    cols: &Columns<'_>,
    rule: &super::split::SplitRule,
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
    /// Checks that every shard exists, has the recorded size and sha256,
    /// decodes as Arrow IPC with the expected schema, and that rows per shard
    /// and per split, games, and each row's split match the manifest and the
    /// split rule; no `(game_id, ply)` appears twice.
    ///
    /// Returns the first problem found, in shard order.
    pub fn verify(&self) -> Result<VerifyReport> {
        let manifest = self.manifest();
        let rule = manifest.split.rule();
        let scans: Vec<Result<ShardScan>> = (0..manifest.shards.len())
            .into_par_iter()
            .map(|i| {
                let path = self.shard_path(i);
                let batches = self.read_shard(i)?;
                let mut scan = ShardScan {
                    rows_per_split: SplitCounts::default(),
                    games: HashMap::new(),
                };
                let mut offset = 0;
                for batch in &batches {
                    let cols = Columns::new(batch, &path, i, offset)?;
                    scan_batch(&cols, &rule, &mut scan)?;
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
            .chain([MANIFEST_FILE])
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
        if !report.stray_files.is_empty() {
            tracing::warn!(dir = %self.dir().display(), files = ?report.stray_files, "files not listed in the manifest");
        }
        Ok(report)
    }
}
