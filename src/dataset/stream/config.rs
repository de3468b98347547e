//! [`StreamConfig`], the loader's settings, and [`check_memory`], which
//! refuses settings whose batches and shuffle buffer would not fit in
//! memory before anything is allocated.

use super::StreamError;
use crate::dataset::source_weights::SourceWeights;
use crate::dataset::spec::EncoderInfo;
use crate::dataset::split::Split;
use crate::encode::Symmetries;
use crate::util::memory::{bytes_for, MemoryLimit};

/// Settings of a [`StreamLoader`](super::StreamLoader).
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
    /// ([`RowText`](super::RowText)) into the batches (default false:
    /// comparison training needs them, value training does not).
    pub with_text: bool,
    /// Serve each row's policy target as a dense row of this many
    /// probabilities (a policy head's size; rows without a target are all
    /// zeros); 0 (default): no policy targets.
    pub policy_len: usize,
    /// Serve each row's planes mapped by one of these symmetries, drawn
    /// per row from the seeded stream (default none: as stored). Not with
    /// policy targets, whose points would need the same map.
    pub symmetries: Symmetries,
    /// Serve each row's weight in the loss, by its `source`
    /// ([`SourceWeights`]); empty (default): no weights are served.
    pub source_weights: SourceWeights,
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
            source_weights: SourceWeights::default(),
        }
    }
}

/// Refuses a batch size or shuffle buffer whose rows (of `encoder`'s
/// planes) need more memory than there is, before a loader allocates them
/// (the buffer is reserved whole when an epoch starts).
/// [`StreamLoader::new`](super::StreamLoader::new) checks this; callers with
/// more to set up first check it earlier.
pub fn check_memory(cfg: &StreamConfig, encoder: &EncoderInfo) -> Result<(), StreamError> {
    let (p, g) = (encoder.planes_len() as u64, encoder.globals as u64);
    // Besides planes and globals: a label (f32), the side to move (u8), the
    // ply and the plies to the end (u32 each), a weight (f32).
    let extra = 4 + 1 + 8 + 4;
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
