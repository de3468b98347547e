//! [`BatchOptions`]: how big a batch may grow, how long it may wait, how
//! many answers the cache keeps; and [`BatchError`], what refuses them.

use std::time::Duration;
use thiserror::Error;

/// The largest `max_batch` accepted.
pub const MAX_BATCH_LIMIT: usize = 1 << 16;
/// The longest `max_wait` accepted.
pub const MAX_WAIT_LIMIT: Duration = Duration::from_secs(1);
/// The most worker threads (batches in flight) accepted.
pub const WORKERS_LIMIT: usize = 8;
/// The largest `cache_entries` accepted.
pub const CACHE_ENTRIES_LIMIT: usize = 1 << 28;

/// How a [`super::BatchedEvaluator`] forms batches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchOptions {
    /// Most positions in one batch, so in one call of the inner evaluator
    /// (default 256; it sees each distinct position once). Larger requests
    /// are split into pieces of this size.
    pub max_batch: usize,
    /// How long a batch waits for more requests after the first of them
    /// was queued (default 200 microseconds); a full batch goes at once.
    pub max_wait: Duration,
    /// Answers kept by the cache, keyed by [`crate::game::Game::hash_key`]
    /// (default 65,536; 0 turns the cache off).
    pub cache_entries: usize,
    /// Worker threads, so batches in flight (default 1). With 2, one
    /// batch is formed and encoded while the previous one is in the
    /// network: a GPU never waits for the CPU. On the CPU one is best, the
    /// network already uses every core.
    pub workers: usize,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            max_batch: 256,
            max_wait: Duration::from_micros(200),
            cache_entries: 1 << 16,
            workers: 1,
        }
    }
}

impl BatchOptions {
    /// The workers for a network on a GPU (`gpu`) or on the CPU: two
    /// batches in flight on a GPU, one on the CPU (whose network already
    /// uses every core).
    pub fn workers_on(gpu: bool) -> usize {
        if gpu {
            2
        } else {
            1
        }
    }

    /// Refuses options the service cannot honour; the error names the field.
    pub fn validate(&self) -> Result<(), BatchError> {
        if self.max_batch == 0 {
            return Err(BatchError::option("max_batch", "must be at least 1, got 0"));
        }
        if self.max_batch > MAX_BATCH_LIMIT {
            return Err(BatchError::option(
                "max_batch",
                format!("must be at most {MAX_BATCH_LIMIT}, got {}", self.max_batch),
            ));
        }
        if self.max_wait > MAX_WAIT_LIMIT {
            return Err(BatchError::option(
                "max_wait",
                format!(
                    "must be at most {} ms, got {} ms",
                    MAX_WAIT_LIMIT.as_millis(),
                    self.max_wait.as_millis()
                ),
            ));
        }
        if !(1..=WORKERS_LIMIT).contains(&self.workers) {
            return Err(BatchError::option(
                "workers",
                format!("must be 1 to {WORKERS_LIMIT}, got {}", self.workers),
            ));
        }
        if self.cache_entries > CACHE_ENTRIES_LIMIT {
            return Err(BatchError::option(
                "cache_entries",
                format!(
                    "must be at most {CACHE_ENTRIES_LIMIT} (0 turns the cache off), got {}",
                    self.cache_entries
                ),
            ));
        }
        Ok(())
    }
}

/// Why a [`super::BatchedEvaluator`] could not start.
#[derive(Debug, Error)]
pub enum BatchError {
    /// An option out of range.
    #[error("batch options: `{field}` {why}")]
    Option { field: &'static str, why: String },
    /// The operating system refused the worker thread.
    #[error("batched evaluator: cannot start the worker thread: {0}")]
    Spawn(#[from] std::io::Error),
}

impl BatchError {
    fn option(field: &'static str, why: impl Into<String>) -> Self {
        BatchError::Option {
            field,
            why: why.into(),
        }
    }

    /// The option at fault, if an option is.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            BatchError::Option { field, .. } => Some(field),
            BatchError::Spawn(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        let o = BatchOptions::default();
        o.validate().unwrap();
        assert_eq!(o.max_wait, Duration::from_micros(200));
        assert!(o.max_batch >= 1 && o.cache_entries > 0);
    }

    #[test]
    fn errors_name_the_field() {
        /// Sets one field of the defaults out of range.
        type Break = fn(&mut BatchOptions);
        let cases: [(Break, &str); 6] = [
            (|o| o.workers = 0, "workers"),
            (|o| o.workers = WORKERS_LIMIT + 1, "workers"),
            (|o| o.max_batch = 0, "max_batch"),
            (|o| o.max_batch = MAX_BATCH_LIMIT + 1, "max_batch"),
            (|o| o.max_wait = Duration::from_secs(2), "max_wait"),
            (
                |o| o.cache_entries = CACHE_ENTRIES_LIMIT + 1,
                "cache_entries",
            ),
        ];
        for (set, field) in cases {
            let mut o = BatchOptions::default();
            set(&mut o);
            let e = o.validate().unwrap_err();
            assert_eq!(e.field(), Some(field));
            assert!(e.to_string().contains(&format!("`{field}`")), "{e}");
        }
    }

    #[test]
    fn edges_are_accepted() {
        for o in [
            BatchOptions {
                max_batch: 1,
                max_wait: Duration::ZERO,
                cache_entries: 0,
                workers: 1,
            },
            BatchOptions {
                max_batch: MAX_BATCH_LIMIT,
                max_wait: MAX_WAIT_LIMIT,
                cache_entries: CACHE_ENTRIES_LIMIT,
                workers: WORKERS_LIMIT,
            },
        ] {
            o.validate().unwrap();
        }
    }
}
