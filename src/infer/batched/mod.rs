//! A batching evaluator service: many search threads, one model call per
//! batch.
//!
//! MCTS and alpha-beta threads each ask for a few positions at a time; a
//! network evaluates a batch of hundreds in little more time than one.
//! [`BatchedEvaluator`] sits between them: it is itself an
//! [`Evaluator`](super::Evaluator), so search code is unchanged, and behind
//! it a worker thread per service (one per device) gathers the callers'
//! positions into batches of at most [`BatchOptions::max_batch`], waiting at
//! most [`BatchOptions::max_wait`] after the first, calls the inner
//! evaluator once and hands each caller its own answers. With
//! [`BatchOptions::workers`] at 2, workers take turns forming batches, so
//! one batch is formed while another is in the network.
//!
//! | file | concept |
//! | --- | --- |
//! | `options.rs` | [`BatchOptions`], [`BatchError`] |
//! | `service.rs` | [`BatchedEvaluator`]: the callers' side |
//! | `queue.rs` | the queue of pieces of requests; when a worker wakes, whose turn it is to form a batch |
//! | `worker.rs` | a worker thread: deduplication, the inner call, replies |
//! | `cache.rs` | [`EvalCache`]: answers by position key, bounded |
//! | `stats.rs` | [`BatchStats`]: counters, batch sizes, latency percentiles |
//!
//! Answers are the inner evaluator's own: each position goes to the inner
//! evaluator unchanged and each caller gets exactly what the inner
//! evaluator answered for its positions in their batch. Batch composition
//! changes a candle model's answers only by float reordering (CPU matrix
//! products sum in another order for another number of rows): within one
//! unit in the last place, 1.2e-7, on cnn3 and the residual net's values
//! and policies (`tests/batched_soak.rs` asserts 1e-6). Positions with the
//! same [`Game::hash_key`](crate::game::Game::hash_key) are evaluated once
//! per batch and, with the cache on, once while their answer stays cached.

mod cache;
mod options;
mod queue;
mod service;
mod stats;
mod worker;

pub use cache::EvalCache;
pub use options::{
    BatchError, BatchOptions, CACHE_ENTRIES_LIMIT, MAX_BATCH_LIMIT, MAX_WAIT_LIMIT, WORKERS_LIMIT,
};
pub use service::BatchedEvaluator;
pub use stats::{BatchBucket, BatchSplit, BatchStats, LatencyHistogram, Percentiles};

#[cfg(test)]
mod tests;
