//! `Dataset`: open a dataset directory and read its rows.
//!
//! Every shard read is checked against the manifest first (size and sha256),
//! so corrupt bytes are reported as such and never reach the Arrow decoder.

use std::collections::HashMap;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_ipc::reader::FileReader;
use arrow_schema::{ArrowError, SchemaRef};
use rayon::prelude::*;

use super::error::{DatasetError, Result};
use super::fsio::{sha256_hex, HashingReader};
use super::ipc_guard::{check_ipc_file, Expected};
use super::manifest::{Manifest, MANIFEST_FILE};
use super::row::PositionRow;
use super::schema::{check_schema, dataset_schema, Columns};
use super::spec::DatasetSpec;
use super::split::Split;

/// An opened dataset: its directory and validated manifest.
///
/// Reading methods take `&self` and may be called from several threads.
#[derive(Clone, Debug)]
pub struct Dataset {
    dir: PathBuf,
    manifest: Manifest,
    manifest_sha256: String,
    schema: SchemaRef,
}

/// Decodes an Arrow IPC file held in memory; `path` and `shard` name it in errors.
///
/// Shards read through [`Dataset`] are sha256-checked first; this is the
/// second line, for files whose manifest was edited to match. The layout is
/// bounds-checked first (see [`ipc_guard`](super::ipc_guard): a corrupt
/// declared length would otherwise abort the process), and a panic inside
/// arrow (a few corrupt inputs reach an `expect` in arrow-data, e.g. a
/// fixed-size list whose length overflows) is caught and reported as a
/// corrupt shard.
pub(crate) fn decode_ipc(
    bytes: Vec<u8>,
    expected: Expected,
    path: &Path,
    shard: usize,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let read_err = |source| DatasetError::ShardRead {
        path: path.to_path_buf(),
        shard,
        source,
    };
    check_ipc_file(&bytes, expected).map_err(|e| read_err(ArrowError::IpcError(e.to_string())))?;
    let decode = move || -> std::result::Result<_, ArrowError> {
        let reader = FileReader::try_new(Cursor::new(bytes), None)?;
        let schema = reader.schema();
        let batches = reader.collect::<std::result::Result<Vec<_>, _>>()?;
        Ok((schema, batches))
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(decode)) {
        Ok(result) => result.map_err(read_err),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(read_err(ArrowError::IpcError(format!(
                "the Arrow decoder gave up: {what}"
            ))))
        }
    }
}

impl Dataset {
    /// Opens `dir`, reading and validating `dir/manifest.json`.
    ///
    /// Shards are not touched; see [`Dataset::verify`].
    pub fn open(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        // The manifest and every shard it names stay in the folder (a hub
        // snapshot's, in its repository's folder of the cache); the shard
        // names themselves are checked by the manifest (`part-NNNNN.arrow`).
        let inside = |name: &str| {
            crate::util::safe_name::inside(&dir, name).map_err(|source| DatasetError::UnsafeName {
                dir: dir.clone(),
                name: source,
            })
        };
        let path = inside(MANIFEST_FILE)?;
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                if e.kind() == std::io::ErrorKind::NotFound {
                    if let Some(half) = super::verify::interrupted_error(&dir) {
                        return Err(half);
                    }
                }
                return Err(DatasetError::io(
                    &path,
                    "read the manifest (is this a dataset directory?)",
                )(e));
            }
        };
        let manifest = Manifest::from_slice(&bytes, &path)?;
        for shard in &manifest.shards {
            inside(&shard.file)?;
        }
        let schema = Arc::new(dataset_schema(
            &manifest.game,
            &manifest.encoder,
            manifest.format_version,
        ));
        Ok(Dataset {
            dir,
            manifest_sha256: sha256_hex(&bytes),
            manifest,
            schema,
        })
    }

    /// The dataset directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The validated manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Hex sha256 of `manifest.json` as read: names this exact dataset
    /// (checkpoints record it as training provenance).
    pub fn manifest_sha256(&self) -> &str {
        &self.manifest_sha256
    }

    /// Game, encoder, split rule and shard size the dataset was written with.
    pub fn spec(&self) -> DatasetSpec {
        self.manifest.spec()
    }

    /// The Arrow schema every shard must have.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Number of rows in `split` (all rows for `None`), from the manifest.
    pub fn num_rows(&self, split: Option<Split>) -> u64 {
        match split {
            Some(s) => self.manifest.totals.rows_per_split[s],
            None => self.manifest.totals.rows,
        }
    }

    /// Path of shard `index`.
    pub fn shard_path(&self, index: usize) -> PathBuf {
        self.dir.join(
            self.manifest
                .shards
                .get(index)
                .map_or("", |s| s.file.as_str()),
        )
    }

    /// The bytes of shard `index`, checked against the manifest's size and
    /// (with `verify_sha256`) sha256, hashed as they are read: a shard whose
    /// bytes differ from the manifest's digest never reaches the decoder.
    fn shard_bytes(&self, index: usize, verify_sha256: bool) -> Result<Vec<u8>> {
        let path = self.shard_path(index);
        let Some(info) = self.manifest.shards.get(index) else {
            return Err(DatasetError::MissingShard { path, shard: index });
        };
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(DatasetError::MissingShard { path, shard: index })
            }
            Err(e) => return Err(DatasetError::io(&path, "read the shard")(e)),
        };
        // The manifest's size bounds the allocation; one byte more tells a
        // longer file apart.
        let mut reader = HashingReader::new(file).take(info.bytes.saturating_add(1));
        let mut bytes = Vec::with_capacity(usize::try_from(info.bytes).unwrap_or(0));
        reader
            .read_to_end(&mut bytes)
            .map_err(DatasetError::io(&path, "read the shard"))?;
        let found = match std::fs::metadata(&path) {
            Ok(m) if m.len() > bytes.len() as u64 => m.len(),
            _ => bytes.len() as u64,
        };
        if found != info.bytes {
            return Err(DatasetError::ShardSize {
                path,
                shard: index,
                expected: info.bytes,
                found,
            });
        }
        if !verify_sha256 {
            return Ok(bytes);
        }
        let sha = reader.into_inner().finish();
        if sha != info.sha256 {
            return Err(DatasetError::ShardHash {
                path,
                shard: index,
                expected: info.sha256.clone(),
                found: sha,
            });
        }
        Ok(bytes)
    }

    /// Decodes checked shard bytes and checks the schema and row count.
    pub(crate) fn decode_shard(&self, index: usize, bytes: Vec<u8>) -> Result<Vec<RecordBatch>> {
        let path = self.shard_path(index);
        let expected = self.manifest.shards.get(index).map_or(0, |s| s.rows);
        let encoder = &self.manifest.encoder;
        let row_bytes = (encoder.planes_len() as u64).max(4 * encoder.globals as u64);
        let bounds = Expected {
            rows: expected,
            // Fixed-width columns need at most `row_bytes`; strings get 64 KiB a row.
            max_row_bytes: row_bytes.saturating_add(64 << 10),
        };
        let (schema, batches) = decode_ipc(bytes, bounds, &path, index)?;
        check_schema(&schema, &self.schema, &path, index)?;
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        if rows as u64 != expected {
            return Err(DatasetError::CountMismatch {
                path,
                what: "rows".into(),
                expected,
                found: rows as u64,
            });
        }
        Ok(batches)
    }

    /// Reads shard `index`: size and sha256 checked, then decoded.
    pub(crate) fn read_shard(&self, index: usize) -> Result<Vec<RecordBatch>> {
        self.read_shard_with(index, true)
    }

    /// Runs `f` on the typed columns of every batch of every shard that has
    /// rows in `split` (all shards for `None`), shards in parallel; results
    /// come back in stored order, one `Vec` per shard.
    pub(crate) fn map_shards<T, F>(&self, split: Option<Split>, f: F) -> Result<Vec<Vec<T>>>
    where
        T: Send,
        F: Fn(&Columns<'_>) -> Result<T> + Sync,
    {
        (0..self.manifest.shards.len())
            .into_par_iter()
            .filter(|&i| match split {
                Some(s) => self.manifest.shards[i].rows_per_split[s] > 0,
                None => true,
            })
            .map(|i| {
                let path = self.shard_path(i);
                let batches = self.read_shard(i)?;
                let mut offset = 0;
                let mut out = Vec::with_capacity(batches.len());
                for batch in &batches {
                    let cols = Columns::new(batch, &path, i, offset)?;
                    out.push(f(&cols)?);
                    offset += batch.num_rows();
                }
                Ok(out)
            })
            .collect()
    }

    /// All rows of `split` (every row for `None`), in stored order.
    pub fn rows(&self, split: Option<Split>) -> Result<Vec<PositionRow>> {
        let parts = self.map_shards(split, |cols| {
            let mut rows = Vec::with_capacity(cols.len());
            for i in 0..cols.len() {
                if split.is_none() || Some(cols.split(i)?) == split {
                    rows.push(cols.row(i));
                }
            }
            Ok(rows)
        })?;
        Ok(parts.into_iter().flatten().flatten().collect())
    }

    /// Rows of `split` grouped by game id (games in order of first
    /// appearance), each game sorted by ply: for trainers that replay games.
    pub fn games(&self, split: Option<Split>) -> Result<Vec<Vec<PositionRow>>> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut games: Vec<Vec<PositionRow>> = Vec::new();
        for row in self.rows(split)? {
            match index.get(&row.game_id) {
                Some(&g) => games[g].push(row),
                None => {
                    index.insert(row.game_id.clone(), games.len());
                    games.push(vec![row]);
                }
            }
        }
        for game in &mut games {
            game.sort_by_key(|r| r.ply);
        }
        Ok(games)
    }

    /// Reads shard `index` for streaming: its size is checked against the
    /// manifest always, its sha256 only when `verify_sha256`, then it is
    /// decoded (schema and row count checked). Errors name the shard file.
    pub(crate) fn read_shard_with(
        &self,
        index: usize,
        verify_sha256: bool,
    ) -> Result<Vec<RecordBatch>> {
        let bytes = self.shard_bytes(index, verify_sha256)?;
        self.decode_shard(index, bytes)
    }

    /// Checks every shard's size and sha256 against the manifest without
    /// decoding: for callers that must know the data is good before they
    /// give up something (e.g. an old training run being replaced).
    pub fn check_shards(&self) -> Result<()> {
        (0..self.manifest.shards.len())
            .into_par_iter()
            .try_for_each(|i| self.shard_bytes(i, true).map(drop))
    }

    /// The record batches of shard `index` as stored, every column
    /// included (size and sha256 checked, then decoded): for tools that
    /// export rows.
    pub fn shard_batches(&self, index: usize) -> Result<Vec<RecordBatch>> {
        self.read_shard(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::DatasetWriter;

    fn write_small(dir: &Path) -> Manifest {
        let mut w = DatasetWriter::create(dir, DatasetSpec::for_tests(50, 0)).unwrap();
        for g in 0..10 {
            for p in 0..5u32 {
                w.push(PositionRow {
                    position: "x".repeat(p as usize),
                    planes: vec![p as i8, -1, 0, 1],
                    label: if p % 2 == 0 { 1.0 } else { 0.0 },
                    move_played: (p < 4).then(|| format!("m{p}")),
                    termination: Some("normal".into()),
                    white_rating: Some(1000 + g),
                    ..PositionRow::for_tests(format!("g{g}"), p, 5)
                })
                .unwrap();
            }
        }
        w.finish(serde_json::json!({})).unwrap()
    }

    /// Truncations and flipped bytes must give errors, never panics, even
    /// without the sha256 check in front of the decoder.
    #[test]
    fn decoder_survives_truncation_and_bit_flips() {
        let dir = tempfile::tempdir().unwrap();
        write_small(dir.path());
        let ds = Dataset::open(dir.path()).unwrap();
        let bytes = std::fs::read(ds.shard_path(0)).unwrap();
        assert!(ds.decode_shard(0, bytes.clone()).is_ok());
        for len in (0..bytes.len()).step_by(7) {
            let r = ds.decode_shard(0, bytes[..len].to_vec());
            assert!(r.is_err(), "truncated to {len} bytes decoded");
        }
        for (i, x) in (0..bytes.len()).flat_map(|i| [(i, 0x01u8), (i, 0x80), (i, 0xff)]) {
            let mut b = bytes.clone();
            b[i] ^= x;
            // Either an error or a successful decode of some data; no panic.
            let _ = ds.decode_shard(0, b).and_then(|batches| {
                for batch in &batches {
                    let cols = Columns::new(batch, Path::new("x"), 0, 0)?;
                    for r in 0..cols.len() {
                        let _ = cols.row(r);
                        let _ = cols.split(r);
                    }
                }
                Ok(())
            });
        }
    }

    #[test]
    fn games_are_grouped_and_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let m = write_small(dir.path());
        let ds = Dataset::open(dir.path()).unwrap();
        let games = ds.games(None).unwrap();
        assert_eq!(games.len() as u64, m.totals.games);
        for g in &games {
            assert_eq!(g.iter().map(|r| r.ply).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
            assert!(g.iter().all(|r| r.game_id == g[0].game_id));
        }
        assert_eq!(ds.num_rows(None), 50);
        assert_eq!(ds.manifest_sha256().len(), 64);
    }
}
