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
//! | file | concept |
//! | --- | --- |
//! | `config.rs` | [`StreamConfig`]; [`check_memory`]: settings that would not fit in memory |
//! | `error.rs` | [`StreamError`] |
//! | `batch.rs` | what is served: [`StreamBatch`], [`TensorBatch`], [`RowText`] |
//! | `loader.rs` | [`StreamLoader`]: settings checked, rows counted, shard order, an epoch's threads started |
//! | `rows.rs` | decoded rows column by column: the decoders' chunks and the shuffle buffer |
//! | `decoder.rs` | a decoder thread: its shards read, checked, filtered and sent in chunks |
//! | `assembler.rs` | the assembler thread: the shuffle buffer and the seeded draws of each batch |
//! | `epoch.rs` | [`StreamEpoch`]: the consumer's iterator; stops and joins the threads when dropped |
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

mod assembler;
mod batch;
mod config;
mod decoder;
mod epoch;
mod error;
mod loader;
mod rows;

pub use batch::{RowText, StreamBatch, TensorBatch};
pub use config::{check_memory, StreamConfig};
pub use epoch::StreamEpoch;
pub use error::StreamError;
pub use loader::StreamLoader;

#[cfg(test)]
mod tests;
