//! `StreamLoader`: shuffled mini-batches streamed across shards, with memory
//! bounded by a shuffle buffer instead of by the dataset.
//!
//! Each epoch runs a small pipeline of background threads:
//!
//! ```text
//! shard order of epoch e (shuffled by (seed, e))
//!   -> decoder threads (shard k on thread k % T): read whole while
//!      hashing, check size and sha256, decode Arrow IPC + zstd, keep the
//!      split's rows, cut them into chunks of `chunk_rows`
//!   -> one bounded channel per decoder (`prefetch_chunks` chunks each)
//!   -> the assembler: takes chunks in shard order into a shuffle buffer of
//!      `buffer_rows` rows, draws each batch's rows from it at random,
//!      converts i8 planes to f32 (and builds tensors on the device)
//!   -> a bounded channel of `prefetch_batches` batches -> the consumer
//! ```
//!
//! The batches depend only on the dataset and (seed, epoch, buffer_rows,
//! batch_size, chunk_rows, split, drop_last), never on thread timing: the
//! assembler is a single thread that reads the decoders' output in shard
//! order, and every random draw comes from a generator seeded by
//! (seed, epoch). Every row of the split is drawn exactly once per epoch.
//!
//! Memory: the buffer holds at most `buffer_rows + chunk_rows - 1` rows (it
//! takes a whole chunk while it holds fewer than `buffer_rows`); each decoder
//! holds one decoded shard and up to `prefetch_chunks` chunks in its channel.
//! The buffer keeps planes as `i8`; batches are `f32`.
//!
//! A missing, truncated or corrupt shard (or a row count that differs from
//! the manifest) arrives as one `Err` item naming the shard file, after
//! which the iterator ends. Dropping a [`StreamEpoch`] mid-epoch stops and
//! joins its threads.
//!
//! ```no_run
//! # use plies::dataset::{Dataset, Split, StreamConfig, StreamLoader};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ds = Dataset::open("data/ttt")?;
//! let cfg = StreamConfig { split: Some(Split::Train), batch_size: 256, seed: 7, ..Default::default() };
//! let loader = StreamLoader::new(&ds, cfg)?;
//! let device = candle_core::Device::Cpu;
//! for epoch in 0..10 {
//!     for batch in loader.epoch_tensors(epoch, &device) {
//!         let batch = batch?; // planes [B, C, H, W], labels [B, 1]
//!         # let _ = batch;
//!     }
//! }
//! # Ok(()) }
//! ```

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use candle_core::{Device, Tensor};
use rand::seq::SliceRandom;
use rand::RngExt;

use super::error::DatasetError;
use super::reader::Dataset;
use super::schema::Columns;
use super::spec::EncoderInfo;
use super::split::Split;
use crate::encode::Symmetries;
use crate::util::memory::{bytes_for, MemoryError, MemoryLimit};
use crate::util::{derive_seed, int8_planes, seeded_rng, SeededRng};

/// Errors of the streaming loader.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// Reading or decoding a shard failed; the message names the file.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// Building a batch's tensors on the device failed.
    #[error("could not build the batch tensors on the device: {0}")]
    Candle(#[from] candle_core::Error),
    /// A setting of [`StreamConfig`] is out of range.
    #[error("invalid stream loader setting `{field}`: {found}, expected {expected}")]
    InvalidArgument {
        field: &'static str,
        expected: String,
        found: String,
    },
    /// A batch or buffer size that needs more memory than there is.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// A background thread ended without finishing its work (a bug).
    #[error("the stream loader's {0} thread stopped unexpectedly")]
    Stopped(&'static str),
}

/// Settings of a [`StreamLoader`].
#[derive(Clone, Debug, PartialEq)]
pub struct StreamConfig {
    /// Split to serve; `None` serves every row (default: train).
    pub split: Option<Split>,
    /// Cross-validation folds to serve (the `fold` column), together with
    /// the split filter; `None` serves every fold (default). With a fold
    /// filter the row count is taken by one pass over the shards when the
    /// loader is built.
    pub folds: Option<Vec<u8>>,
    /// Several splits at once (e.g. train and valid for cross-validation);
    /// when set it replaces `split` (default `None`: `split` decides).
    pub splits: Option<Vec<Split>>,
    /// Rows per batch (default 1024).
    pub batch_size: usize,
    /// Shuffle buffer capacity in rows, at least `batch_size` (default 65536).
    pub buffer_rows: usize,
    /// Seed of the shard order and the draws (default 0).
    pub seed: u64,
    /// Drop a final batch shorter than `batch_size` (default false).
    pub drop_last: bool,
    /// Decoder threads (default: available cores, at most 4).
    pub decode_threads: usize,
    /// Decoded chunks each decoder may hold ready (default 4).
    pub prefetch_chunks: usize,
    /// Finished batches held ready for the consumer (default 4).
    pub prefetch_batches: usize,
    /// Rows per decoded chunk (default 4096).
    pub chunk_rows: usize,
    /// Check each shard's sha256 against the manifest while reading it,
    /// before decoding (default true; the size and row counts are always
    /// checked). Turning it off is for measuring what the check costs.
    pub verify_sha256: bool,
    /// Carry each row's game id, position text and move played
    /// ([`RowText`]) into the batches (default false: comparison training
    /// needs them, value training does not).
    pub with_text: bool,
    /// Serve each row's policy target as a dense row of this many
    /// probabilities (a policy head's size; rows without a target are all
    /// zeros); 0 (default): no policy targets.
    pub policy_len: usize,
    /// Serve each row's planes mapped by one of these symmetries, drawn
    /// per row from the seeded stream (default none: as stored). Not with
    /// policy targets, whose points would need the same map.
    pub symmetries: Symmetries,
}

impl StreamConfig {
    /// The splits served (`None`: all rows): `splits`, else `split`.
    pub fn wanted_splits(&self) -> Option<Vec<Split>> {
        match &self.splits {
            Some(v) => {
                let mut v = v.clone();
                v.sort();
                v.dedup();
                Some(v)
            }
            None => self.split.map(|s| vec![s]),
        }
    }
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig {
            split: Some(Split::Train),
            folds: None,
            splits: None,
            batch_size: 1024,
            buffer_rows: 65_536,
            seed: 0,
            drop_last: false,
            decode_threads: std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .clamp(1, 4),
            prefetch_chunks: 4,
            prefetch_batches: 4,
            chunk_rows: 4096,
            verify_sha256: true,
            with_text: false,
            policy_len: 0,
            symmetries: Symmetries::None,
        }
    }
}

/// One batch as plain vectors, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamBatch {
    /// `len * C*H*W` values (empty when the planes stay int8, below).
    pub planes: Vec<f32>,
    /// The same values as stored, int8, when the batch goes to a GPU as
    /// int8 ([`StreamLoader::epoch_tensors_via_int8`]); empty otherwise.
    pub planes_int8: Vec<i8>,
    /// `len * G` values.
    pub globals: Vec<f32>,
    /// Result for the side to move, one per row.
    pub labels: Vec<f32>,
    /// 0 = first player, one per row.
    pub side_to_move: Vec<u8>,
    /// Plies played before the position, one per row.
    pub ply: Vec<u32>,
    /// Plies from the position to the end of the game, one per row.
    pub plies_to_end: Vec<u32>,
    /// Rows in this batch.
    pub len: usize,
    /// Per row, with [`StreamConfig::with_text`]; empty otherwise.
    pub text: Vec<RowText>,
    /// `len * policy_len` target probabilities ([`StreamConfig::policy_len`]).
    pub policy: Vec<f32>,
}

/// A row's text fields: what its position was and which move was played.
#[derive(Clone, Debug, PartialEq)]
pub struct RowText {
    pub game_id: String,
    pub position: String,
    /// `None` at a game's final position.
    pub move_played: Option<String>,
}

/// One batch as tensors on a device, plus the side fields as vectors.
#[derive(Clone, Debug)]
pub struct TensorBatch {
    /// `[B, C, H, W]` f32.
    pub planes: Tensor,
    /// `[B, G]` f32; `None` when the encoder has no global features.
    pub globals: Option<Tensor>,
    /// `[B, 1]` f32.
    pub labels: Tensor,
    pub side_to_move: Vec<u8>,
    pub ply: Vec<u32>,
    pub plies_to_end: Vec<u32>,
    pub len: usize,
    /// Per row, with [`StreamConfig::with_text`]; empty otherwise.
    pub text: Vec<RowText>,
    /// `[B, policy_len]` target probabilities, with
    /// [`StreamConfig::policy_len`]; rows without a target are zeros.
    pub policy: Option<Tensor>,
}

/// Rows of one shard's split, as decoded.
#[derive(Default)]
struct Rows {
    planes: Vec<i8>,
    globals: Vec<f32>,
    labels: Vec<f32>,
    side_to_move: Vec<u8>,
    ply: Vec<u32>,
    plies_to_end: Vec<u32>,
    text: Vec<RowText>,
    /// Dense policy targets, `policy_len` per row (empty without).
    policy: Vec<f32>,
}

impl Rows {
    fn len(&self) -> usize {
        self.labels.len()
    }

    fn push_from(
        &mut self,
        cols: &Columns<'_>,
        i: usize,
        with_text: bool,
        policy_len: usize,
    ) -> Result<(), DatasetError> {
        if policy_len > 0 {
            let at = self.policy.len();
            self.policy.resize(at + policy_len, 0.0);
            if let Some(p) = cols.policy(i)? {
                for (&k, &q) in p.index.iter().zip(&p.prob) {
                    let slot = self.policy[at..].get_mut(k as usize).ok_or_else(|| {
                        cols.row_error(
                            i,
                            "policy_index",
                            format!("indices below {policy_len} (the policy head's size)"),
                            k.to_string(),
                        )
                    })?;
                    *slot = q;
                }
            }
        }
        if with_text {
            self.text.push(RowText {
                game_id: cols.game_id.value(i).to_string(),
                position: cols.position.value(i).to_string(),
                move_played: (!arrow_array::Array::is_null(cols.move_played, i))
                    .then(|| cols.move_played.value(i).to_string()),
            });
        }
        self.planes.extend_from_slice(cols.planes(i));
        self.globals.extend_from_slice(cols.globals(i));
        self.labels.push(cols.label.value(i));
        self.side_to_move.push(cols.side_to_move.value(i));
        self.ply.push(cols.ply.value(i));
        self.plies_to_end.push(cols.plies_to_end.value(i));
        Ok(())
    }

    fn append(&mut self, mut other: Rows) {
        self.planes.append(&mut other.planes);
        self.globals.append(&mut other.globals);
        self.labels.append(&mut other.labels);
        self.side_to_move.append(&mut other.side_to_move);
        self.ply.append(&mut other.ply);
        self.plies_to_end.append(&mut other.plies_to_end);
        self.text.append(&mut other.text);
        self.policy.append(&mut other.policy);
    }
}

/// What a decoder sends: chunks of a shard, then the end of that shard.
enum Msg {
    Chunk(Rows),
    ShardDone,
}

/// What the assembler sends the consumer.
enum Out<T> {
    Batch(T),
    Err(StreamError),
    End,
}

/// Shuffled mini-batches of one split, streamed from the shards.
///
/// Cheap to clone; each [`StreamEpoch`] runs its own threads.
#[derive(Clone, Debug)]
pub struct StreamLoader {
    dataset: Arc<Dataset>,
    cfg: StreamConfig,
    /// Shards with rows in the split, in stored order.
    shards: Vec<usize>,
    rows: u64,
    shape: [usize; 3],
    planes_len: usize,
    globals_len: usize,
}

/// Refuses a batch size or shuffle buffer whose rows (of `encoder`'s
/// planes) need more memory than there is, before a loader allocates them
/// (the buffer is reserved whole when an epoch starts). [`StreamLoader::new`]
/// checks this; callers with more to set up first check it earlier.
pub fn check_memory(cfg: &StreamConfig, encoder: &EncoderInfo) -> Result<(), StreamError> {
    let (p, g) = (encoder.planes_len() as u64, encoder.globals as u64);
    // Besides planes and globals: a label (f32), the side to move (u8), the
    // ply and the plies to the end (u32 each).
    let extra = 4 + 1 + 8;
    // In a batch the planes are f32; in the buffer, the stored i8.
    let batch_row = p.saturating_add(g).saturating_mul(4).saturating_add(extra);
    let buffer_row = p.saturating_add(g.saturating_mul(4)).saturating_add(extra);
    // The batches waiting in the queue, the one being built, the one in use.
    let in_flight = (cfg.prefetch_batches as u64).saturating_add(2);
    let limit = MemoryLimit::current()?;
    let batches = bytes_for(cfg.batch_size, batch_row).and_then(|b| b.checked_mul(in_flight));
    let batches = limit.check("batch_size", cfg.batch_size as u64, batches)?;
    let buffer = cfg
        .buffer_rows
        .checked_add(cfg.chunk_rows)
        .and_then(|rows| bytes_for(rows, buffer_row))
        .and_then(|b| b.checked_add(batches));
    limit.check("buffer_rows", cfg.buffer_rows as u64, buffer)?;
    Ok(())
}

impl StreamLoader {
    /// A loader over `dataset` (nothing is read until an epoch starts).
    pub fn new(dataset: &Dataset, cfg: StreamConfig) -> Result<Self, StreamError> {
        let positive = |field: &'static str, v: usize| {
            if v == 0 {
                Err(StreamError::InvalidArgument {
                    field,
                    expected: "at least 1".into(),
                    found: "0".into(),
                })
            } else {
                Ok(())
            }
        };
        positive("batch_size", cfg.batch_size)?;
        positive("decode_threads", cfg.decode_threads)?;
        positive("prefetch_chunks", cfg.prefetch_chunks)?;
        positive("prefetch_batches", cfg.prefetch_batches)?;
        positive("chunk_rows", cfg.chunk_rows)?;
        if cfg.buffer_rows < cfg.batch_size {
            return Err(StreamError::InvalidArgument {
                field: "buffer_rows",
                expected: format!("at least batch_size ({})", cfg.batch_size),
                found: cfg.buffer_rows.to_string(),
            });
        }
        check_memory(&cfg, &dataset.manifest().encoder)?;
        let manifest = dataset.manifest();
        if cfg.symmetries != Symmetries::None {
            let shape = manifest.encoder.shape;
            let found = format!("{:?} with planes {shape:?}", cfg.symmetries);
            if !cfg.symmetries.fits(shape) {
                return Err(StreamError::InvalidArgument {
                    field: "symmetries",
                    expected: "a square board for the dihedral group".into(),
                    found,
                });
            }
            if cfg.policy_len > 0 {
                return Err(StreamError::InvalidArgument {
                    field: "symmetries",
                    expected: "no policy targets (their points are not mapped)".into(),
                    found,
                });
            }
        }
        if let Some(folds) = &cfg.folds {
            let k = manifest.folds.k;
            if let Some(f) = folds.iter().find(|&&f| f >= k) {
                return Err(StreamError::InvalidArgument {
                    field: "folds",
                    expected: format!("folds below the dataset's k = {k}"),
                    found: f.to_string(),
                });
            }
        }
        let wanted = cfg.wanted_splits();
        let in_split = |name: &str| {
            wanted
                .as_ref()
                .is_none_or(|w| w.iter().any(|s| s.as_str() == name))
        };
        let rows = match &cfg.folds {
            None => match &wanted {
                None => dataset.num_rows(None),
                Some(w) => w.iter().map(|&s| dataset.num_rows(Some(s))).sum(),
            },
            Some(folds) => {
                let counts = dataset.map_shards(None, |cols| {
                    Ok((0..cols.len())
                        .filter(|&i| {
                            in_split(cols.split.value(i)) && folds.contains(&cols.fold.value(i))
                        })
                        .count() as u64)
                })?;
                counts.into_iter().flatten().sum()
            }
        };
        let shards = (0..manifest.shards.len())
            .filter(|&i| match &wanted {
                Some(w) => w.iter().any(|&s| manifest.shards[i].rows_per_split[s] > 0),
                None => manifest.shards[i].rows > 0,
            })
            .collect();
        let encoder = &manifest.encoder;
        Ok(StreamLoader {
            dataset: Arc::new(dataset.clone()),
            rows,
            shape: encoder.shape,
            planes_len: encoder.planes_len(),
            globals_len: encoder.globals,
            cfg,
            shards,
        })
    }

    /// The settings.
    pub fn config(&self) -> &StreamConfig {
        &self.cfg
    }

    /// Rows per epoch (from the manifest).
    pub fn len(&self) -> u64 {
        self.rows
    }

    /// No rows in the split.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Batches per epoch.
    pub fn num_batches(&self) -> u64 {
        let b = self.cfg.batch_size as u64;
        if self.cfg.drop_last {
            self.rows / b
        } else {
            self.rows.div_ceil(b)
        }
    }

    /// Plane shape `[C, H, W]`.
    pub fn shape(&self) -> [usize; 3] {
        self.shape
    }

    /// Global features per row.
    pub fn globals_len(&self) -> usize {
        self.globals_len
    }

    /// The shards read in epoch `epoch`, in reading order.
    pub fn shard_order(&self, epoch: u64) -> Vec<usize> {
        let mut order = self.shards.clone();
        order.shuffle(&mut seeded_rng(derive_seed(self.cfg.seed, epoch), 1));
        order
    }

    /// The batches of epoch `epoch` as vectors.
    pub fn epoch(&self, epoch: u64) -> StreamEpoch<StreamBatch> {
        self.epoch_from(epoch, 0)
    }

    /// The batches of epoch `epoch` from batch `skip` on (the first `skip`
    /// batches are drawn but not built): for resuming a run mid-epoch.
    pub fn epoch_from(&self, epoch: u64, skip: u64) -> StreamEpoch<StreamBatch> {
        self.start(epoch, skip, false, Ok)
    }

    /// The batches of epoch `epoch` as tensors on `device`, built on the
    /// loader's thread.
    pub fn epoch_tensors(&self, epoch: u64, device: &Device) -> StreamEpoch<TensorBatch> {
        self.epoch_tensors_from(epoch, 0, device)
    }

    /// [`StreamLoader::epoch_tensors`] from batch `skip` on. On a GPU the
    /// planes travel as int8 and are widened there
    /// ([`StreamLoader::epoch_tensors_via_int8`]).
    pub fn epoch_tensors_from(
        &self,
        epoch: u64,
        skip: u64,
        device: &Device,
    ) -> StreamEpoch<TensorBatch> {
        self.tensors(epoch, skip, device, !device.is_cpu())
    }

    /// [`StreamLoader::epoch_tensors_from`] with the planes sent to the
    /// device as int8 (a quarter of the f32 bytes) and widened to f32 there
    /// ([`crate::util::int8_planes`]): what a GPU gets. The tensors equal
    /// the f32 route's exactly.
    pub fn epoch_tensors_via_int8(
        &self,
        epoch: u64,
        skip: u64,
        device: &Device,
    ) -> StreamEpoch<TensorBatch> {
        self.tensors(epoch, skip, device, true)
    }

    fn tensors(
        &self,
        epoch: u64,
        skip: u64,
        device: &Device,
        int8: bool,
    ) -> StreamEpoch<TensorBatch> {
        let device = device.clone();
        let [c, h, w] = self.shape;
        let g = self.globals_len;
        let q = self.cfg.policy_len;
        self.start(epoch, skip, int8, move |b: StreamBatch| {
            let n = b.len;
            let globals = if g > 0 {
                Some(Tensor::from_vec(b.globals, (n, g), &device)?)
            } else {
                None
            };
            let planes = if int8 {
                let bytes = int8_planes::int8_tensor(&b.planes_int8, (n, c, h, w), &device)?;
                int8_planes::widen(&bytes)?
            } else {
                Tensor::from_vec(b.planes, (n, c, h, w), &device)?
            };
            Ok(TensorBatch {
                planes,
                globals,
                labels: Tensor::from_vec(b.labels, (n, 1), &device)?,
                policy: if q > 0 {
                    Some(Tensor::from_vec(b.policy, (n, q), &device)?)
                } else {
                    None
                },
                side_to_move: b.side_to_move,
                ply: b.ply,
                plies_to_end: b.plies_to_end,
                len: n,
                text: b.text,
            })
        })
    }

    /// Starts an epoch's threads; `int8`: batches keep their planes as
    /// int8 ([`StreamBatch::planes_int8`]).
    fn start<T, F>(&self, epoch: u64, skip: u64, int8: bool, convert: F) -> StreamEpoch<T>
    where
        T: Send + 'static,
        F: Fn(StreamBatch) -> Result<T, StreamError> + Send + 'static,
    {
        let order = Arc::new(self.shard_order(epoch));
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicUsize::new(0));
        let threads_n = self.cfg.decode_threads.min(order.len()).max(1);
        let mut threads = Vec::with_capacity(threads_n + 1);
        let mut receivers = Vec::with_capacity(threads_n);
        for t in 0..threads_n {
            let (tx, rx) = sync_channel(self.cfg.prefetch_chunks);
            receivers.push(rx);
            let (ds, cfg, order, stop) = (
                self.dataset.clone(),
                self.cfg.clone(),
                order.clone(),
                stop.clone(),
            );
            threads.push(std::thread::spawn(move || {
                decoder(&ds, &cfg, &order, t, threads_n, &stop, &tx)
            }));
        }
        let (tx, rx) = sync_channel(self.cfg.prefetch_batches);
        let asm = Assembler {
            cfg: self.cfg.clone(),
            shape: self.shape,
            planes_len: self.planes_len,
            globals_len: self.globals_len,
            shards: order.len(),
            rng: seeded_rng(derive_seed(self.cfg.seed, epoch), 2),
            skip,
            int8,
            stop: stop.clone(),
            peak: peak.clone(),
        };
        threads.push(std::thread::spawn(move || {
            asm.run(receivers, &tx, convert);
        }));
        StreamEpoch {
            rx: Some(rx),
            threads,
            stop,
            peak,
            done: false,
        }
    }
}

/// Decoder thread `t` of `n`: shards at positions t, t+n, ... of `order`.
fn decoder(
    ds: &Dataset,
    cfg: &StreamConfig,
    order: &[usize],
    t: usize,
    n: usize,
    stop: &AtomicBool,
    tx: &SyncSender<Result<Msg, DatasetError>>,
) {
    for &shard in order.iter().skip(t).step_by(n) {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let sent = match decode_shard(ds, cfg, shard, stop, tx) {
            Ok(true) => tx.send(Ok(Msg::ShardDone)).is_ok(),
            Ok(false) => false,
            Err(e) => {
                let _ = tx.send(Err(e));
                false
            }
        };
        if !sent {
            return;
        }
    }
}

/// Sends the split's rows of `shard` in chunks; `Ok(false)` when the
/// receiver is gone or the loader was stopped.
fn decode_shard(
    ds: &Dataset,
    cfg: &StreamConfig,
    shard: usize,
    stop: &AtomicBool,
    tx: &SyncSender<Result<Msg, DatasetError>>,
) -> Result<bool, DatasetError> {
    let path = ds.shard_path(shard);
    let batches = ds.read_shard_with(shard, cfg.verify_sha256)?;
    let wanted = cfg.wanted_splits();
    let mut chunk = Rows::default();
    let mut found = 0u64;
    let mut offset = 0;
    for batch in &batches {
        let cols = Columns::new(batch, &path, shard, offset)?;
        offset += batch.num_rows();
        for i in 0..cols.len() {
            if let Some(w) = &wanted {
                let name = cols.split.value(i);
                if !w.iter().any(|s| s.as_str() == name) {
                    continue;
                }
            }
            found += 1;
            if let Some(folds) = &cfg.folds {
                if !folds.contains(&cols.fold.value(i)) {
                    continue;
                }
            }
            chunk.push_from(&cols, i, cfg.with_text, cfg.policy_len)?;
            if chunk.len() == cfg.chunk_rows {
                let full = std::mem::take(&mut chunk);
                if stop.load(Ordering::Relaxed) || tx.send(Ok(Msg::Chunk(full))).is_err() {
                    return Ok(false);
                }
            }
        }
    }
    if let Some(w) = &wanted {
        let expected = w
            .iter()
            .map(|&s| ds.manifest().shards[shard].rows_per_split[s])
            .sum();
        if found != expected {
            let names: Vec<&str> = w.iter().map(|s| s.as_str()).collect();
            return Err(DatasetError::CountMismatch {
                path,
                what: format!("rows of split {}", names.join("+")),
                expected,
                found,
            });
        }
    }
    if chunk.len() > 0 && tx.send(Ok(Msg::Chunk(chunk))).is_err() {
        return Ok(false);
    }
    Ok(true)
}

/// The single thread that owns the shuffle buffer and builds batches.
struct Assembler {
    cfg: StreamConfig,
    shape: [usize; 3],
    planes_len: usize,
    globals_len: usize,
    shards: usize,
    rng: SeededRng,
    skip: u64,
    /// Keep the planes int8 in the batches.
    int8: bool,
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicUsize>,
}

impl Assembler {
    fn run<T, F>(
        mut self,
        receivers: Vec<Receiver<Result<Msg, DatasetError>>>,
        tx: &SyncSender<Out<T>>,
        convert: F,
    ) where
        F: Fn(StreamBatch) -> Result<T, StreamError>,
    {
        // Reserved once: the buffer never holds more than this.
        let cap = self.cfg.buffer_rows + self.cfg.chunk_rows;
        let mut buf = Rows {
            planes: Vec::with_capacity(cap * self.planes_len),
            globals: Vec::with_capacity(cap * self.globals_len),
            labels: Vec::with_capacity(cap),
            side_to_move: Vec::with_capacity(cap),
            ply: Vec::with_capacity(cap),
            plies_to_end: Vec::with_capacity(cap),
            text: Vec::new(),
            policy: Vec::with_capacity(cap * self.cfg.policy_len),
        };
        let mut next = 0; // position in the shard order
        let mut produced = 0u64;
        let batch = self.cfg.batch_size;
        loop {
            while next < self.shards && buf.len() < self.cfg.buffer_rows {
                if self.stop.load(Ordering::Relaxed) {
                    return;
                }
                match receivers[next % receivers.len()].recv() {
                    Ok(Ok(Msg::Chunk(rows))) => {
                        buf.append(rows);
                        self.peak.fetch_max(buf.len(), Ordering::Relaxed);
                    }
                    Ok(Ok(Msg::ShardDone)) => next += 1,
                    Ok(Err(e)) => {
                        let _ = tx.send(Out::Err(e.into()));
                        return;
                    }
                    Err(_) => {
                        let _ = tx.send(Out::Err(StreamError::Stopped("shard decoder")));
                        return;
                    }
                }
            }
            let take = batch.min(buf.len());
            if take == 0 || (self.cfg.drop_last && take < batch) {
                let _ = tx.send(Out::End);
                return;
            }
            let skipping = produced < self.skip;
            let b = self.draw(&mut buf, take, skipping);
            produced += 1;
            if skipping {
                continue;
            }
            let out = match convert(b) {
                Ok(t) => Out::Batch(t),
                Err(e) => Out::Err(e),
            };
            let failed = matches!(out, Out::Err(_));
            if tx.send(out).is_err() || failed {
                return;
            }
        }
    }

    /// Draws `take` rows at random out of `buf` (each removed by moving the
    /// last row into its place); `discard` only removes them.
    fn draw(&mut self, buf: &mut Rows, take: usize, discard: bool) -> StreamBatch {
        let (p, g, q) = (self.planes_len, self.globals_len, self.cfg.policy_len);
        let cap = if discard { 0 } else { take };
        let (cap_f32, cap_i8) = if self.int8 { (0, cap) } else { (cap, 0) };
        let mut b = StreamBatch {
            planes: Vec::with_capacity(cap_f32 * p),
            planes_int8: Vec::with_capacity(cap_i8 * p),
            globals: Vec::with_capacity(cap * g),
            labels: Vec::with_capacity(cap),
            side_to_move: Vec::with_capacity(cap),
            ply: Vec::with_capacity(cap),
            plies_to_end: Vec::with_capacity(cap),
            len: cap,
            text: Vec::new(),
            policy: Vec::with_capacity(cap * q),
        };
        for _ in 0..take {
            let n = buf.len();
            let i = self.rng.random_range(0..n);
            let last = n - 1;
            if !discard {
                let row = &buf.planes[i * p..(i + 1) * p];
                let sym = self.cfg.symmetries;
                // Drawn only when augmenting, so other runs keep their stream.
                let k = if sym.count() > 1 {
                    self.rng.random_range(0..sym.count())
                } else {
                    0
                };
                if self.int8 {
                    sym.map_into(k, row, self.shape, &mut b.planes_int8, |v| v);
                } else {
                    sym.map_into(k, row, self.shape, &mut b.planes, f32::from);
                }
                b.globals
                    .extend_from_slice(&buf.globals[i * g..(i + 1) * g]);
                b.policy.extend_from_slice(&buf.policy[i * q..(i + 1) * q]);
            }
            if i != last {
                buf.planes.copy_within(last * p..n * p, i * p);
                buf.globals.copy_within(last * g..n * g, i * g);
                buf.policy.copy_within(last * q..n * q, i * q);
            }
            buf.planes.truncate(last * p);
            buf.globals.truncate(last * g);
            buf.policy.truncate(last * q);
            let label = buf.labels.swap_remove(i);
            let side = buf.side_to_move.swap_remove(i);
            let ply = buf.ply.swap_remove(i);
            let to_end = buf.plies_to_end.swap_remove(i);
            let text = (!buf.text.is_empty()).then(|| buf.text.swap_remove(i));
            if !discard {
                b.text.extend(text);
                b.labels.push(label);
                b.side_to_move.push(side);
                b.ply.push(ply);
                b.plies_to_end.push(to_end);
            }
        }
        b
    }
}

/// The batches of one epoch of a [`StreamLoader`]: `Ok(batch)` items, or one
/// `Err` (naming the shard file) after which the iterator ends.
///
/// Dropping it stops and joins the background threads.
pub struct StreamEpoch<T> {
    rx: Option<Receiver<Out<T>>>,
    threads: Vec<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicUsize>,
    done: bool,
}

impl<T> StreamEpoch<T> {
    /// The most rows the shuffle buffer has held so far this epoch.
    pub fn peak_buffer_rows(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

impl<T> Iterator for StreamEpoch<T> {
    type Item = Result<T, StreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let msg = self.rx.as_ref()?.recv();
        match msg {
            Ok(Out::Batch(b)) => Some(Ok(b)),
            Ok(Out::Err(e)) => {
                self.done = true;
                Some(Err(e))
            }
            Ok(Out::End) => {
                self.done = true;
                None
            }
            Err(_) => {
                self.done = true;
                Some(Err(StreamError::Stopped("batch assembler")))
            }
        }
    }
}

impl<T> Drop for StreamEpoch<T> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Closing the channel wakes an assembler blocked on a full channel;
        // its exit closes the decoders' channels in turn.
        drop(self.rx.take());
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{DatasetSpec, DatasetWriter, PositionRow};
    use std::path::Path;
    use std::time::Duration;

    const PLANES: usize = 4;

    /// 40 games of 10 plies in shards of 64 rows; row `r` has globals `[r]`.
    fn write(dir: &Path) -> Dataset {
        let mut w = DatasetWriter::create(dir, DatasetSpec::for_tests(64, 1)).unwrap();
        let mut r = 0u32;
        for g in 0..40 {
            for p in 0..10u32 {
                w.push(PositionRow {
                    position: format!("pos {r}"),
                    planes: vec![(r % 100) as i8, -((r / 100) as i8), 1, 0],
                    globals: vec![r as f32],
                    label: (r % 3) as f32 / 2.0,
                    ..PositionRow::for_tests(format!("game-{g}"), p, 10)
                })
                .unwrap();
                r += 1;
            }
        }
        w.finish(serde_json::json!({})).unwrap();
        Dataset::open(dir).unwrap()
    }

    fn cfg(split: Option<Split>, batch: usize, buffer: usize) -> StreamConfig {
        StreamConfig {
            split,
            batch_size: batch,
            buffer_rows: buffer,
            seed: 5,
            decode_threads: 3,
            prefetch_chunks: 2,
            chunk_rows: 16,
            ..Default::default()
        }
    }

    fn collect(loader: &StreamLoader, epoch: u64) -> Vec<StreamBatch> {
        loader.epoch(epoch).map(|b| b.unwrap()).collect()
    }

    /// (id, planes, label, side, ply) of every row, sorted by id.
    fn row_keys(batches: &[StreamBatch]) -> Vec<(u32, Vec<i32>, u32, u8, u32, u32)> {
        let mut keys = Vec::new();
        for b in batches {
            for i in 0..b.len {
                let planes = b.planes[i * PLANES..(i + 1) * PLANES]
                    .iter()
                    .map(|&v| v as i32)
                    .collect();
                keys.push((
                    b.globals[i] as u32,
                    planes,
                    (b.labels[i] * 2.0) as u32,
                    b.side_to_move[i],
                    b.ply[i],
                    b.plies_to_end[i],
                ));
            }
        }
        keys.sort();
        keys
    }

    #[test]
    fn every_row_of_the_split_once_per_epoch() {
        let dir = tempfile::tempdir().unwrap();
        let ds = write(dir.path());
        assert!(ds.manifest().shards.len() >= 6);
        for split in [Some(Split::Train), Some(Split::Valid), None] {
            let expected: Vec<_> = ds
                .rows(split)
                .unwrap()
                .into_iter()
                .map(|r| {
                    let planes = r.planes.iter().map(|&v| i32::from(v)).collect();
                    let label = (r.label * 2.0) as u32;
                    (
                        r.globals[0] as u32,
                        planes,
                        label,
                        r.side_to_move,
                        r.ply,
                        r.plies_to_end,
                    )
                })
                .collect();
            let mut expected = expected;
            expected.sort();
            let loader = StreamLoader::new(&ds, cfg(split, 7, 50)).unwrap();
            assert_eq!(loader.len() as usize, expected.len());
            for epoch in 0..3 {
                let batches = collect(&loader, epoch);
                assert_eq!(batches.len() as u64, loader.num_batches());
                assert!(batches[..batches.len() - 1].iter().all(|b| b.len == 7));
                assert_eq!(
                    row_keys(&batches),
                    expected,
                    "split {split:?} epoch {epoch}"
                );
            }
        }
    }

    #[test]
    fn fold_filter_serves_the_listed_folds_only_each_row_once() {
        let dir = tempfile::tempdir().unwrap();
        let ds = write(dir.path());
        let k = ds.manifest().folds.k;
        assert!(k >= 3);
        let key = |r: &PositionRow| r.globals[0] as u32;
        let train_valid = [Split::Train, Split::Valid];
        for (split, splits) in [
            (Some(Split::Train), None),
            (Some(Split::Valid), None),
            (None, None),
            (Some(Split::Test), Some(train_valid.to_vec())),
        ] {
            let all: Vec<PositionRow> = match &splits {
                None => ds.rows(split).unwrap(),
                Some(v) => v.iter().flat_map(|&s| ds.rows(Some(s)).unwrap()).collect(),
            };
            for folds in [vec![0u8], vec![1, 2], (0..k).collect::<Vec<u8>>()] {
                let mut expected: Vec<u32> = all
                    .iter()
                    .filter(|r| folds.contains(&crate::dataset::fold_of(&r.game_id, k)))
                    .map(key)
                    .collect();
                expected.sort();
                let mut others: Vec<u32> = all
                    .iter()
                    .filter(|r| !folds.contains(&crate::dataset::fold_of(&r.game_id, k)))
                    .map(key)
                    .collect();
                others.sort();
                let c = StreamConfig {
                    folds: Some(folds.clone()),
                    splits: splits.clone(),
                    ..cfg(split, 7, 50)
                };
                let loader = StreamLoader::new(&ds, c).unwrap();
                assert_eq!(loader.len() as usize, expected.len(), "{split:?} {folds:?}");
                for epoch in 0..2 {
                    let batches = collect(&loader, epoch);
                    assert_eq!(batches.len() as u64, loader.num_batches());
                    let got: Vec<u32> = row_keys(&batches).into_iter().map(|k| k.0).collect();
                    assert_eq!(got, expected, "split {split:?} folds {folds:?}");
                    assert!(got.iter().all(|g| others.binary_search(g).is_err()));
                }
            }
        }
        // The held-out fold and the other folds partition the split.
        let train = |folds: Vec<u8>| {
            let c = StreamConfig {
                folds: Some(folds),
                ..cfg(Some(Split::Train), 7, 50)
            };
            let l = StreamLoader::new(&ds, c).unwrap();
            let mut v: Vec<u32> = row_keys(&collect(&l, 0)).into_iter().map(|k| k.0).collect();
            v.sort();
            v
        };
        let held = train(vec![0]);
        let rest = train((1..k).collect());
        assert!(!held.is_empty() && !rest.is_empty());
        assert!(held.iter().all(|h| rest.binary_search(h).is_err()));
        assert_eq!(
            held.len() + rest.len() as usize,
            ds.num_rows(Some(Split::Train)) as usize
        );
        let e = StreamLoader::new(
            &ds,
            StreamConfig {
                folds: Some(vec![k]),
                ..cfg(None, 7, 50)
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("folds") && e.contains(&k.to_string()), "{e}");
    }

    #[test]
    fn drop_last_drops_only_the_short_batch() {
        let dir = tempfile::tempdir().unwrap();
        let ds = write(dir.path());
        let c = StreamConfig {
            drop_last: true,
            ..cfg(None, 64, 64)
        };
        let loader = StreamLoader::new(&ds, c).unwrap();
        let batches = collect(&loader, 0);
        assert_eq!(batches.len(), 400 / 64);
        assert_eq!(loader.num_batches(), 400 / 64);
        assert!(batches.iter().all(|b| b.len == 64));
    }

    #[test]
    fn same_settings_same_batches_and_epochs_differ() {
        let dir = tempfile::tempdir().unwrap();
        let ds = write(dir.path());
        let a = StreamLoader::new(&ds, cfg(None, 10, 40)).unwrap();
        // Other thread counts and prefetch depths must not change anything.
        let b = StreamLoader::new(
            &ds,
            StreamConfig {
                decode_threads: 1,
                prefetch_chunks: 1,
                prefetch_batches: 1,
                ..cfg(None, 10, 40)
            },
        )
        .unwrap();
        let e0 = collect(&a, 0);
        assert_eq!(e0, collect(&b, 0));
        assert_eq!(e0, collect(&a, 0));
        let e1 = collect(&a, 1);
        assert_ne!(e0, e1);
        assert_ne!(a.shard_order(0), a.shard_order(1));
        // Resuming at batch 3 of epoch 1 gives the rest of epoch 1.
        let resumed: Vec<_> = a.epoch_from(1, 3).map(|b| b.unwrap()).collect();
        assert_eq!(resumed, e1[3..]);
        // Another seed, other batches.
        let c = StreamLoader::new(
            &ds,
            StreamConfig {
                seed: 6,
                ..cfg(None, 10, 40)
            },
        )
        .unwrap();
        assert_ne!(collect(&c, 0), e0);
    }

    #[test]
    fn buffer_stays_within_capacity_plus_one_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let ds = write(dir.path());
        let c = cfg(None, 8, 30);
        let loader = StreamLoader::new(&ds, c.clone()).unwrap();
        let mut epoch = loader.epoch(0);
        let mut rows = 0;
        for b in epoch.by_ref() {
            rows += b.unwrap().len;
        }
        assert_eq!(rows, 400);
        let peak = epoch.peak_buffer_rows();
        assert!(peak >= c.buffer_rows, "peak {peak}");
        assert!(peak < c.buffer_rows + c.chunk_rows, "peak {peak}");
    }

    #[test]
    fn tensors_have_the_documented_shapes() {
        let dir = tempfile::tempdir().unwrap();
        let ds = write(dir.path());
        let loader = StreamLoader::new(&ds, cfg(None, 16, 64)).unwrap();
        let first = loader
            .epoch_tensors(0, &Device::Cpu)
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(first.planes.dims(), &[16, 1, 2, 2]);
        assert_eq!(first.globals.as_ref().unwrap().dims(), &[16, 1]);
        assert_eq!(first.labels.dims(), &[16, 1]);
        assert_eq!(first.side_to_move.len(), 16);
        let raw = collect(&loader, 0).remove(0);
        let planes: Vec<f32> = first.planes.flatten_all().unwrap().to_vec1().unwrap();
        assert_eq!(planes, raw.planes);
        assert!(raw.planes_int8.is_empty());
    }

    /// The route a GPU takes (int8 planes widened on the device) gives the
    /// f32 route's tensors exactly, batch for batch, negative values too.
    #[test]
    fn int8_planes_widen_to_the_same_tensors() {
        let dir = tempfile::tempdir().unwrap();
        let ds = write(dir.path());
        let loader = StreamLoader::new(&ds, cfg(None, 16, 64)).unwrap();
        let plain: Vec<TensorBatch> = loader
            .epoch_tensors(1, &Device::Cpu)
            .collect::<Result<_, _>>()
            .unwrap();
        let via_int8: Vec<TensorBatch> = loader
            .epoch_tensors_via_int8(1, 0, &Device::Cpu)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(plain.len(), via_int8.len());
        let mut negative = false;
        for (a, b) in plain.iter().zip(&via_int8) {
            assert_eq!(b.planes.dtype(), candle_core::DType::F32);
            assert_eq!(a.planes.dims(), b.planes.dims());
            let (x, y): (Vec<f32>, Vec<f32>) = (
                a.planes.flatten_all().unwrap().to_vec1().unwrap(),
                b.planes.flatten_all().unwrap().to_vec1().unwrap(),
            );
            assert_eq!(x, y);
            negative |= x.iter().any(|&v| v < 0.0);
            assert_eq!(a.side_to_move, b.side_to_move);
        }
        assert!(negative, "the fixture has negative planes");
    }

    fn first_error(loader: &StreamLoader) -> String {
        let mut items = loader.epoch(0);
        let err = items.by_ref().find_map(|b| b.err()).expect("an error item");
        assert!(items.next().is_none(), "the epoch ends after an error");
        err.to_string()
    }

    #[test]
    fn corrupt_or_missing_shard_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let ds = write(dir.path());
        let path = ds.shard_path(2);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let mut bytes = std::fs::read(&path).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x5a;
        std::fs::write(&path, &bytes).unwrap();
        let c = StreamConfig {
            verify_sha256: true,
            ..cfg(None, 8, 30)
        };
        let msg = first_error(&StreamLoader::new(&ds, c).unwrap());
        assert!(msg.contains(&name) && msg.contains("sha256"), "{msg}");

        bytes.truncate(bytes.len() - 10);
        std::fs::write(&path, &bytes).unwrap();
        let msg = first_error(&StreamLoader::new(&ds, cfg(None, 8, 30)).unwrap());
        assert!(msg.contains(&name) && msg.contains("bytes"), "{msg}");

        std::fs::remove_file(&path).unwrap();
        let msg = first_error(&StreamLoader::new(&ds, cfg(None, 8, 30)).unwrap());
        assert!(msg.contains(&name) && msg.contains("missing"), "{msg}");
    }

    #[test]
    fn dropping_mid_epoch_stops_the_threads() {
        let dir = tempfile::tempdir().unwrap();
        let ds = write(dir.path());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let loader = StreamLoader::new(
                &ds,
                StreamConfig {
                    decode_threads: 2,
                    prefetch_chunks: 1,
                    prefetch_batches: 1,
                    ..cfg(None, 4, 8)
                },
            )
            .unwrap();
            for epoch in 0..20 {
                let mut e = loader.epoch(epoch);
                let first = e.next().unwrap().unwrap();
                assert_eq!(first.len, 4);
                drop(e);
            }
            // Never started at all.
            drop(loader.epoch(99));
            tx.send(()).unwrap();
        });
        rx.recv_timeout(Duration::from_secs(30))
            .expect("dropping epochs mid-way hung");
    }

    #[test]
    fn bad_settings_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let ds = write(dir.path());
        let e = StreamLoader::new(&ds, cfg(None, 64, 32)).unwrap_err();
        assert!(e.to_string().contains("buffer_rows"), "{e}");
        let e = StreamLoader::new(&ds, cfg(None, 0, 32)).unwrap_err();
        assert!(e.to_string().contains("batch_size"), "{e}");
    }

    #[test]
    fn augmented_rows_are_images_of_the_stored_ones_under_the_drawn_map() {
        let dir = tempfile::tempdir().unwrap();
        let ds = write(dir.path());
        let augmented = |seed| {
            let loader = StreamLoader::new(
                &ds,
                StreamConfig {
                    symmetries: Symmetries::Dihedral,
                    seed,
                    ..cfg(None, 32, 128)
                },
            )
            .unwrap();
            row_keys(&collect(&loader, 0))
        };
        let plain = row_keys(&collect(
            &StreamLoader::new(&ds, cfg(None, 32, 128)).unwrap(),
            0,
        ));
        let rows = augmented(5);
        assert_eq!(rows.len(), plain.len());
        let mut used = std::collections::BTreeSet::new();
        for (aug, orig) in rows.iter().zip(&plain) {
            // Same row (globals, label, side, ply), planes mapped by one of
            // the 8 maps of the 2x2 board.
            assert_eq!(
                (aug.0, aug.2, aug.3, aug.4, aug.5),
                (orig.0, orig.2, orig.3, orig.4, orig.5)
            );
            let stored: Vec<i8> = orig.1.iter().map(|&v| v as i8).collect();
            let k = (0..8)
                .find(|&k| {
                    let mut img = Vec::new();
                    Symmetries::Dihedral.map_into(k, &stored, [1, 2, 2], &mut img, i32::from);
                    img == aug.1
                })
                .unwrap_or_else(|| {
                    panic!("row {} is no image of {:?}: {:?}", aug.0, orig.1, aug.1)
                });
            used.insert(k);
        }
        // Every map is drawn somewhere among 400 rows (a row with two equal
        // values, like row 0, matches several maps; the first is counted).
        assert_eq!(used.len(), 8, "{used:?}");
        // Seeded: the same seed serves the same images.
        assert_eq!(augmented(5), rows);
        assert_ne!(augmented(6), rows);
        // A non-square board or policy targets are refused, naming the field.
        let e = StreamLoader::new(
            &ds,
            StreamConfig {
                symmetries: Symmetries::Dihedral,
                policy_len: 4,
                ..cfg(None, 32, 128)
            },
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("symmetries"), "{e}");
    }
}
