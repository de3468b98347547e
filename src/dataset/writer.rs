//! `DatasetWriter`: rows in, shards and a manifest out, crash-safely.
//!
//! Each shard is written to `.part-NNNNN.arrow.tmp`, fsynced and renamed to
//! `part-NNNNN.arrow`; `manifest.json` is written the same way, last. A
//! directory with a manifest therefore always holds a complete dataset, and a
//! crash leaves at worst shards without a manifest, which do not open.
//!
//! [`DatasetWriter::create`] refuses a directory that already holds a
//! manifest, shards or a staging folder. [`DatasetWriter::create_overwrite`]
//! writes the whole new dataset into a staging directory beside `DIR`
//! (`.DIR.plies-staging/`, see [`staging_dir`]) and only at
//! [`DatasetWriter::finish`], once it is complete on disk, swaps it in for
//! `DIR` ([`crate::util::replace::swap_in`]): at every instant `DIR` holds
//! the old dataset or the new one, whole. Other files in `DIR` are carried
//! over. What a crash leaves (the staging directory, an old version put
//! aside) is cleaned up by the next writer of `DIR`.
//!
//! One writer per directory: a writer holds `DIR`'s lock
//! ([`crate::util::DirLock`]) from `create` until it is dropped, and a second
//! one is refused naming the holder.

use std::collections::{HashMap, HashSet};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_ipc::CompressionType;
use arrow_schema::{ArrowError, SchemaRef};

use super::error::{DatasetError, Result};
use super::fold::fold_of;
use super::fold::FoldInfo;
use super::fsio::{sync_dir, HashingWriter};
use super::manifest::{
    created_by, shard_file_name, Manifest, ShardInfo, Totals, FORMAT_VERSION, MANIFEST_FILE,
};
use super::row::{GameRows, PositionRow};
use super::schema::{dataset_schema, BatchBuilder, RowRef, POLICY_FORMAT_VERSION};
use super::spec::DatasetSpec;
use super::split::SplitCounts;
use crate::util::atomic::{temp_target, write_atomic_named, AtomicFile, TempName};
use crate::util::{replace, DirLock};

/// Name ending of the directory beside a dataset where `create_overwrite`
/// stages the new one (`.DIR.plies-staging`); earlier versions staged in a
/// folder of this name inside the dataset, still recognised and removed.
pub const STAGING_DIR: &str = ".plies-staging";

/// Where `create_overwrite` stages a new version of the dataset in `dir`.
pub fn staging_dir(dir: &Path) -> PathBuf {
    replace::staging_path(dir).unwrap_or_else(|_| dir.join(STAGING_DIR))
}

/// Rows per Arrow record batch inside a shard (a shard may hold several).
const BATCH_ROWS: usize = 16_384;

/// Writes a dataset: `push` rows, then `finish` with provenance.
///
/// Rows of one game should be pushed contiguously (shards may still split a
/// game). Each `(game_id, ply)` may be pushed once.
pub struct DatasetWriter {
    dir: PathBuf,
    /// Where shards are written: `dir`, or `dir/.plies-staging` when overwriting.
    out_dir: PathBuf,
    overwrite: bool,
    spec: DatasetSpec,
    /// The format written: [`FORMAT_VERSION`], or an older one in tests
    /// that check older datasets are still read.
    format_version: u32,
    schema: SchemaRef,
    /// Rows of the current shard not yet in a batch.
    builder: BatchBuilder,
    /// Finished batches of the current shard.
    batches: Vec<RecordBatch>,
    /// Rows in the current shard (batches and builder).
    shard_len: usize,
    shard_splits: SplitCounts,
    shards: Vec<ShardInfo>,
    /// Plies seen per game id, to count games and refuse duplicate positions.
    games: HashMap<String, HashSet<u32>>,
    rows: u64,
    finished: bool,
    /// Held until the writer is dropped: one writer per directory.
    _lock: DirLock,
}

pub(crate) fn is_shard_file(name: &str) -> bool {
    name.starts_with("part-") && name.ends_with(".arrow")
}

/// A temporary shard or manifest file (`.part-00003.arrow.tmp`, ...).
pub(crate) fn is_temp_file(name: &str) -> bool {
    temp_target(name).is_some_and(|target| is_shard_file(target) || target == MANIFEST_FILE)
}

/// A temporary shard file.
fn is_temp_shard(name: &str) -> bool {
    temp_target(name).is_some_and(is_shard_file)
}

/// File names in `dir` for which `keep` holds.
fn list(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<String>> {
    let entries = std::fs::read_dir(dir).map_err(DatasetError::io(dir, "list the directory"))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(DatasetError::io(dir, "list the directory"))?;
        if let Some(name) = entry.file_name().to_str() {
            if keep(name) {
                names.push(name.to_string());
            }
        }
    }
    names.sort();
    Ok(names)
}

fn remove_files(dir: &Path, names: &[String], action: &'static str) -> Result<()> {
    for name in names {
        let p = dir.join(name);
        std::fs::remove_file(&p).map_err(DatasetError::io(&p, action))?;
    }
    Ok(())
}

impl DatasetWriter {
    /// Starts a new dataset in `dir` (created if missing).
    ///
    /// Refuses if `dir` already holds `manifest.json`, any `part-*.arrow`
    /// shard or a staging folder: nothing already written is overwritten.
    pub fn create(dir: impl AsRef<Path>, spec: DatasetSpec) -> Result<Self> {
        let dir = dir.as_ref();
        spec.validate()?;
        let lock = DirLock::acquire(dir)?;
        replace::recover(dir)?;
        std::fs::create_dir_all(dir)
            .map_err(DatasetError::io(dir, "create the dataset directory"))?;
        let already = |found: String| DatasetError::AlreadyExists {
            path: dir.to_path_buf(),
            found,
        };
        if dir.join(MANIFEST_FILE).exists() {
            return Err(already(format!(
                "a dataset ({MANIFEST_FILE}) is already there"
            )));
        }
        let shards = list(dir, is_shard_file)?;
        if let Some(first) = shards.first() {
            return Err(already(format!(
                "{} shard file(s) without a manifest are there (e.g. {first}; an interrupted write?)",
                shards.len()
            )));
        }
        if dir.join(STAGING_DIR).exists() {
            return Err(already(format!(
                "a staging folder {STAGING_DIR} from an interrupted overwrite is there"
            )));
        }
        Ok(Self::new(dir, dir.to_path_buf(), false, spec, lock))
    }

    /// Starts a dataset that replaces whatever is in `dir` once it is
    /// complete: the old dataset stays readable until [`finish`](Self::finish)
    /// has all new shards on disk.
    pub fn create_overwrite(dir: impl AsRef<Path>, spec: DatasetSpec) -> Result<Self> {
        let dir = dir.as_ref();
        spec.validate()?;
        let lock = DirLock::acquire(dir)?;
        // Left by an interrupted overwrite; never part of a dataset.
        replace::recover(dir)?;
        let legacy = dir.join(STAGING_DIR);
        replace::remove_if_there(&legacy)
            .map_err(DatasetError::io(&legacy, "remove the old staging folder"))?;
        let staging = staging_dir(dir);
        std::fs::create_dir_all(&staging)
            .map_err(DatasetError::io(&staging, "create the staging folder"))?;
        Ok(Self::new(dir, staging, true, spec, lock))
    }

    fn new(
        dir: &Path,
        out_dir: PathBuf,
        overwrite: bool,
        spec: DatasetSpec,
        lock: DirLock,
    ) -> Self {
        let schema = Arc::new(dataset_schema(&spec.game, &spec.encoder, FORMAT_VERSION));
        DatasetWriter {
            dir: dir.to_path_buf(),
            out_dir,
            overwrite,
            builder: BatchBuilder::with_capacity(
                spec.shard_rows.min(BATCH_ROWS),
                spec.encoder.planes_len(),
                spec.encoder.globals,
            ),
            batches: Vec::new(),
            shard_len: 0,
            shard_splits: SplitCounts::default(),
            spec,
            format_version: FORMAT_VERSION,
            schema,
            shards: Vec::new(),
            games: HashMap::new(),
            rows: 0,
            finished: false,
            _lock: lock,
        }
    }

    /// Writes the older `format_version` instead (2: no policy columns), as
    /// the plies of that format did; before any row is pushed.
    #[cfg(test)]
    pub(crate) fn with_format_version(mut self, format_version: u32) -> Self {
        self.schema = Arc::new(dataset_schema(
            &self.spec.game,
            &self.spec.encoder,
            format_version,
        ));
        self.format_version = format_version;
        self
    }

    /// The dataset directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The spec rows are checked against.
    pub fn spec(&self) -> &DatasetSpec {
        &self.spec
    }

    /// Rows accepted so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    fn check(&self, row: &RowRef<'_>) -> Result<()> {
        let bad = |field, expected: String, found: String| DatasetError::InvalidRow {
            path: self.dir.clone(),
            game_id: row.game_id.to_string(),
            ply: row.ply,
            field,
            expected,
            found,
        };
        if row.game_id.is_empty() {
            return Err(bad("game_id", "a non-empty id".into(), "empty".into()));
        }
        let planes = self.spec.encoder.planes_len();
        if row.planes.len() != planes {
            return Err(bad(
                "planes",
                format!(
                    "{planes} values (C*H*W for shape {:?})",
                    self.spec.encoder.shape
                ),
                format!("{} values", row.planes.len()),
            ));
        }
        if row.globals.len() != self.spec.encoder.globals {
            return Err(bad(
                "globals",
                format!("{} values", self.spec.encoder.globals),
                format!("{} values", row.globals.len()),
            ));
        }
        if let Some((i, g)) = row.globals.iter().enumerate().find(|(_, g)| !g.is_finite()) {
            return Err(bad(
                "globals",
                "finite values".into(),
                format!("{g} at index {i}"),
            ));
        }
        if row.side_to_move > 1 {
            return Err(bad(
                "side_to_move",
                "0 or 1".into(),
                row.side_to_move.to_string(),
            ));
        }
        if !(row.label.is_finite() && (0.0..=1.0).contains(&row.label)) {
            return Err(bad(
                "label",
                "a result in [0, 1] (1 win, 0.5 draw, 0 loss)".into(),
                row.label.to_string(),
            ));
        }
        if row.policy.is_some() && self.format_version < POLICY_FORMAT_VERSION {
            return Err(bad(
                "policy",
                format!("no policy in a format {} dataset", self.format_version),
                "a policy target".into(),
            ));
        }
        if let Some(why) = row.policy.and_then(|p| p.problem()) {
            return Err(bad(
                "policy",
                "policy indices with probabilities summing to 1".into(),
                why,
            ));
        }
        if self
            .games
            .get(row.game_id)
            .is_some_and(|plies| plies.contains(&row.ply))
        {
            return Err(bad(
                "ply",
                "each (game_id, ply) pushed once".into(),
                "a ply already pushed for this game".into(),
            ));
        }
        Ok(())
    }

    /// Records `ply` of `game_id` as pushed.
    fn note_ply(&mut self, game_id: &str, ply: u32) {
        match self.games.get_mut(game_id) {
            Some(plies) => {
                plies.insert(ply);
            }
            None => {
                self.games.insert(game_id.to_string(), HashSet::from([ply]));
            }
        }
    }

    /// Appends a checked row; cuts a batch and writes a shard when full.
    fn append(&mut self, row: &RowRef<'_>) -> Result<()> {
        self.builder.append(row);
        self.shard_splits[row.split] += 1;
        self.shard_len += 1;
        self.rows += 1;
        if self.builder.len() >= BATCH_ROWS {
            self.cut_batch()?;
        }
        if self.shard_len >= self.spec.shard_rows {
            self.write_shard()?;
        }
        Ok(())
    }

    /// Turns the builder's rows into a finished batch of the current shard.
    fn cut_batch(&mut self) -> Result<()> {
        if self.builder.len() == 0 {
            return Ok(());
        }
        let batch = self
            .builder
            .finish(&self.schema, &self.spec.encoder)
            .map_err(|source| DatasetError::ArrowWrite {
                path: self.out_dir.clone(),
                source,
            })?;
        self.batches.push(batch);
        Ok(())
    }

    /// Checks `row` against the spec and buffers it; writes a shard when
    /// `shard_rows` rows are buffered.
    pub fn push(&mut self, row: PositionRow) -> Result<()> {
        let r = RowRef {
            game_id: &row.game_id,
            ply: row.ply,
            plies_to_end: row.plies_to_end,
            side_to_move: row.side_to_move,
            position: &row.position,
            planes: &row.planes,
            globals: &row.globals,
            label: row.label,
            move_played: row.move_played.as_deref(),
            split: self.spec.split.split_of(&row.game_id),
            fold: fold_of(&row.game_id, self.spec.folds),
            source: &row.source,
            termination: row.termination.as_deref(),
            white_rating: row.white_rating,
            black_rating: row.black_rating,
            policy: row.policy.as_ref(),
        };
        self.check(&r)?;
        self.note_ply(r.game_id, r.ply);
        self.append(&r)
    }

    /// Pushes every position of one game (columnar; the same checks as
    /// [`push`](Self::push)). Nothing of the game is pushed if a row is refused.
    pub fn push_game(&mut self, game: &GameRows) -> Result<()> {
        let n = game.len();
        let (planes_len, globals_len) = (self.spec.encoder.planes_len(), self.spec.encoder.globals);
        let columns_ok = [
            game.plies_to_end.len(),
            game.side_to_move.len(),
            game.label.len(),
            game.position_ends.len(),
            game.move_ends.len(),
        ]
        .iter()
        .all(|&len| len == n)
            && game.planes.len() == n * planes_len
            && game.globals.len() == n * globals_len
            && (game.policies.is_empty() || game.policies.len() == n);
        if !columns_ok {
            return Err(DatasetError::InvalidRow {
                path: self.dir.clone(),
                game_id: game.game_id.clone(),
                ply: game.ply.first().copied().unwrap_or(0),
                field: "planes",
                expected: format!(
                    "{n} positions in every column (policies: none or one per position), \
                     {planes_len} planes and {globals_len} globals each"
                ),
                found: "columns of other lengths".into(),
            });
        }
        let split = self.spec.split.split_of(&game.game_id);
        let fold = fold_of(&game.game_id, self.spec.folds);
        let row = |i: usize, pos_start: usize, move_start: usize| RowRef {
            game_id: &game.game_id,
            ply: game.ply[i],
            plies_to_end: game.plies_to_end[i],
            side_to_move: game.side_to_move[i],
            position: game
                .positions
                .get(pos_start..game.position_ends[i])
                .unwrap_or(""),
            planes: &game.planes[i * planes_len..(i + 1) * planes_len],
            globals: &game.globals[i * globals_len..(i + 1) * globals_len],
            label: game.label[i],
            move_played: game.move_ends[i].and_then(|end| game.moves.get(move_start..end)),
            split,
            fold,
            source: &game.source,
            termination: game.termination.as_deref(),
            white_rating: game.white_rating,
            black_rating: game.black_rating,
            policy: game.policy(i),
        };
        let mut seen = HashSet::with_capacity(n);
        let (mut pos_start, mut move_start) = (0, 0);
        for i in 0..n {
            let r = row(i, pos_start, move_start);
            self.check(&r)?;
            if !seen.insert(r.ply) {
                return Err(DatasetError::InvalidRow {
                    path: self.dir.clone(),
                    game_id: game.game_id.clone(),
                    ply: r.ply,
                    field: "ply",
                    expected: "each (game_id, ply) pushed once".into(),
                    found: "the same ply twice in the game".into(),
                });
            }
            pos_start = game.position_ends[i];
            move_start = game.move_ends[i].unwrap_or(move_start);
        }
        let (mut pos_start, mut move_start) = (0, 0);
        for i in 0..n {
            let r = row(i, pos_start, move_start);
            self.note_ply(r.game_id, r.ply);
            self.append(&r)?;
            pos_start = game.position_ends[i];
            move_start = game.move_ends[i].unwrap_or(move_start);
        }
        Ok(())
    }

    /// Writes the buffered rows as the next shard (temporary name, fsync, rename).
    fn write_shard(&mut self) -> Result<()> {
        self.cut_batch()?;
        let index = self.shards.len();
        let name = shard_file_name(index);
        let path = self.out_dir.join(&name);
        // On failure the batches stay buffered so nothing pushed is lost;
        // `finish` tries again. The temporary file is removed.
        let (sha256, bytes) = self.write_ipc(&path)?;
        tracing::debug!(shard = %path.display(), rows = self.shard_len, bytes, "wrote shard");
        self.shards.push(ShardInfo {
            file: name,
            rows: self.shard_len as u64,
            bytes,
            sha256,
            rows_per_split: std::mem::take(&mut self.shard_splits),
        });
        self.batches.clear();
        self.shard_len = 0;
        Ok(())
    }

    /// Writes the buffered batches as an Arrow IPC file (zstd) at `path`,
    /// through a fixed temporary name (`.NAME.tmp`) committed when complete;
    /// returns (sha256, bytes).
    fn write_ipc(&self, path: &Path) -> Result<(String, u64)> {
        let file = AtomicFile::create_named(path, TempName::Fixed)?;
        let tmp = file.temp_path().to_path_buf();
        let arrow_err = |source: ArrowError| DatasetError::ArrowWrite {
            path: tmp.clone(),
            source,
        };
        let options = IpcWriteOptions::default()
            .try_with_compression(Some(CompressionType::ZSTD))
            .map_err(arrow_err)?;
        let mut writer = FileWriter::try_new_with_options(
            BufWriter::new(HashingWriter::new(file)),
            &self.schema,
            options,
        )
        .map_err(arrow_err)?;
        writer.write_metadata("plies.created_by", created_by());
        for batch in &self.batches {
            writer.write(batch).map_err(arrow_err)?;
        }
        writer.finish().map_err(arrow_err)?;
        let buffered = writer.into_inner().map_err(arrow_err)?;
        let hashing = buffered.into_inner().map_err(|e| DatasetError::Io {
            path: tmp.clone(),
            action: "write the shard file",
            source: e.into_error(),
        })?;
        let (file, sha256, bytes) = hashing.finish();
        file.commit()?;
        Ok((sha256, bytes))
    }

    /// Writes the last shard, then `manifest.json` (last, crash-safely), and
    /// returns the manifest. `provenance` is free JSON: command line, seed,
    /// sources, how the data was made.
    pub fn finish(mut self, provenance: serde_json::Value) -> Result<Manifest> {
        if self.shard_len > 0 {
            self.write_shard()?;
        }
        let rule = self.spec.split;
        let mut totals = Totals {
            rows: self.rows,
            games: self.games.len() as u64,
            ..Totals::default()
        };
        for shard in &self.shards {
            totals.rows_per_split.add(&shard.rows_per_split);
        }
        for game_id in self.games.keys() {
            totals.games_per_split[rule.split_of(game_id)] += 1;
        }
        let manifest = Manifest {
            format_version: self.format_version,
            game: self.spec.game.clone(),
            encoder: self.spec.encoder.clone(),
            split: rule.into(),
            folds: FoldInfo::new(self.spec.folds),
            shard_rows: self.spec.shard_rows,
            shards: std::mem::take(&mut self.shards),
            totals,
            created_by: created_by(),
            provenance,
        };
        manifest.validate(&self.dir.join(MANIFEST_FILE))?;
        write_atomic_named(
            &self.out_dir.join(MANIFEST_FILE),
            TempName::Fixed,
            manifest.to_json_pretty().as_bytes(),
        )?;
        if self.overwrite {
            self.carry_over()?;
            replace::swap_in(&self.out_dir, &self.dir)?;
        }
        self.finished = true;
        tracing::info!(
            dir = %self.dir.display(),
            rows = manifest.totals.rows,
            games = manifest.totals.games,
            shards = manifest.shards.len(),
            "dataset written"
        );
        Ok(manifest)
    }

    /// Gives up the dataset being written: removes the shards this writer
    /// wrote (or its staging folder, when overwriting), so the directory is
    /// as before `create` (an old dataset, when overwriting, stays as it was).
    pub fn abandon(mut self) -> Result<()> {
        self.finished = true;
        if self.overwrite {
            if self.out_dir.exists() {
                std::fs::remove_dir_all(&self.out_dir)
                    .map_err(DatasetError::io(&self.out_dir, "remove the staging folder"))?;
            }
            return Ok(());
        }
        let written: HashSet<&str> = self.shards.iter().map(|s| s.file.as_str()).collect();
        let names = list(&self.out_dir, |n| written.contains(n) || is_temp_shard(n))?;
        remove_files(
            &self.out_dir,
            &names,
            "remove a shard of the abandoned dataset",
        )?;
        sync_dir(&self.out_dir)
    }

    /// Overwrite mode: brings the files of `dir` that are not part of the
    /// old dataset (reports, notes) into the staged one, so the swap keeps
    /// them: files as hard links (copies where links fail), folders moved.
    fn carry_over(&self) -> Result<()> {
        if !self.dir.is_dir() {
            return Ok(());
        }
        let others = list(&self.dir, |n| {
            n != MANIFEST_FILE && n != STAGING_DIR && !is_shard_file(n) && !is_temp_file(n)
        })?;
        for name in others {
            let (from, to) = (self.dir.join(&name), self.out_dir.join(&name));
            if from.is_dir() {
                std::fs::rename(&from, &to)
                    .map_err(DatasetError::io(&to, "move a folder into the new dataset"))?;
            } else if std::fs::hard_link(&from, &to).is_err() {
                std::fs::copy(&from, &to)
                    .map_err(DatasetError::io(&to, "copy a file into the new dataset"))?;
            }
        }
        Ok(())
    }
}

impl Drop for DatasetWriter {
    fn drop(&mut self) {
        if !self.finished && (self.rows > 0 || !self.shards.is_empty()) {
            tracing::warn!(
                dir = %self.dir.display(),
                rows = self.rows,
                shards = self.shards.len(),
                "dataset writer dropped before finish: no manifest written, the directory does not hold a dataset"
            );
        }
    }
}

#[cfg(test)]
mod tests;
