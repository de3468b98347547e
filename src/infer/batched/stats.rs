//! Counters of a [`super::BatchedEvaluator`] and their snapshot
//! ([`BatchStats`]): requests, positions, batches, the batch-size
//! histogram, queue wait and latency percentiles, cache hits.
//!
//! Every counter is an atomic updated without a lock; a snapshot taken
//! while clients run may see one request's counters half updated, one
//! taken when they are done adds up exactly:
//! `positions = cache_hits + deduplicated + evaluated + dropped`.

use serde::Serialize;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Values below this are counted exactly (microseconds).
const EXACT: u64 = 32;
/// Sub-buckets per power of two above [`EXACT`]: at most 1/32 relative error
/// for a bucket's midpoint.
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
/// Powers of two covered above [`EXACT`] (up to about 2^45 us, a year).
const OCTAVES: usize = 40;

/// A log-scale histogram of durations in microseconds, safe to record from
/// any number of threads.
pub struct LatencyHistogram {
    buckets: Vec<AtomicU64>,
    count: AtomicU64,
    sum: AtomicU64,
    max: AtomicU64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            buckets: (0..EXACT as usize + OCTAVES * SUB as usize)
                .map(|_| AtomicU64::new(0))
                .collect(),
            count: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            max: AtomicU64::new(0),
        }
    }
}

/// The bucket of `us`.
fn bucket(us: u64) -> usize {
    if us < EXACT {
        return us as usize;
    }
    let e = 63 - us.leading_zeros(); // >= 5
    let sub = (us >> (e - SUB_BITS)) & (SUB - 1);
    let i = EXACT as usize + (e as usize - 5) * SUB as usize + sub as usize;
    i.min(EXACT as usize + OCTAVES * SUB as usize - 1)
}

/// The smallest value of bucket `i` and the bucket's width.
fn bucket_range(i: usize) -> (u64, u64) {
    if i < EXACT as usize {
        return (i as u64, 1);
    }
    let j = i - EXACT as usize;
    let e = (j / SUB as usize) as u32 + 5;
    let sub = (j % SUB as usize) as u64;
    let width = 1u64 << (e - SUB_BITS);
    ((SUB + sub) * width, width)
}

impl LatencyHistogram {
    pub fn record(&self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.record_us(us);
    }

    pub fn record_us(&self, us: u64) {
        self.buckets[bucket(us)].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum.fetch_add(us, Ordering::Relaxed);
        self.max.fetch_max(us, Ordering::Relaxed);
    }

    /// The `q` quantile (`0 <= q <= 1`) in microseconds: the midpoint of
    /// the bucket holding it (exact below 32 us, within 1/32 above), never
    /// above the largest value recorded; 0 when nothing was recorded.
    pub fn quantile(&self, q: f64) -> f64 {
        let counts: Vec<u64> = self
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return 0.0;
        }
        // The rank of the quantile, 1-based (nearest-rank definition).
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, width) = bucket_range(i);
                let mid = if width == 1 {
                    lo as f64
                } else {
                    lo as f64 + (width - 1) as f64 / 2.0
                };
                return mid.min(self.max.load(Ordering::Relaxed) as f64);
            }
        }
        self.max.load(Ordering::Relaxed) as f64
    }

    pub fn snapshot(&self) -> Percentiles {
        let count = self.count.load(Ordering::Relaxed);
        Percentiles {
            count,
            mean_us: if count == 0 {
                0.0
            } else {
                self.sum.load(Ordering::Relaxed) as f64 / count as f64
            },
            p50_us: self.quantile(0.50),
            p99_us: self.quantile(0.99),
            max_us: self.max.load(Ordering::Relaxed) as f64,
        }
    }
}

/// Summary of a [`LatencyHistogram`], in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Percentiles {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// One bar of the batch-size histogram: batches of `min..=max` positions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BatchBucket {
    pub min: usize,
    pub max: usize,
    pub count: u64,
}

/// The live counters (see the module docs).
pub struct Stats {
    pub requests: AtomicU64,
    pub failed_requests: AtomicU64,
    pub positions: AtomicU64,
    pub cache_hits: AtomicU64,
    pub deduplicated: AtomicU64,
    pub evaluated: AtomicU64,
    pub dropped: AtomicU64,
    pub batches: AtomicU64,
    pub failed_batches: AtomicU64,
    /// Batches by size, `0..=max_batch`.
    pub batch_sizes: Vec<AtomicU64>,
    /// From a piece of a request entering the queue to its batch's start.
    pub queue_wait: LatencyHistogram,
    /// From a request's call to its return.
    pub latency: LatencyHistogram,
    /// Time spent inside the inner evaluator, nanoseconds.
    pub inner_ns: AtomicU64,
    /// Nanoseconds by [`Phase`].
    pub phase_ns: [AtomicU64; 5],
}

/// The service's phases of a batch, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Gathering the pieces: duplicates merged, the cache asked again.
    Form = 0,
    /// The inner evaluator encoding the positions.
    Encode,
    /// The network, host-device copies included.
    Network,
    /// Raw outputs to side-to-move values.
    Finish,
    /// Answers handed to every caller and stored in the cache.
    Reply,
}

/// Mean microseconds per batch in each [`Phase`] (queue wait is per
/// request, in [`BatchStats::queue_wait`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BatchSplit {
    pub form_us: f64,
    pub encode_us: f64,
    pub network_us: f64,
    pub finish_us: f64,
    pub reply_us: f64,
}

impl BatchSplit {
    /// The phases' mean times with their names, in order.
    pub fn phases(&self) -> [(&'static str, f64); 5] {
        [
            ("form", self.form_us),
            ("encode", self.encode_us),
            ("network", self.network_us),
            ("finish", self.finish_us),
            ("reply", self.reply_us),
        ]
    }
}

impl Stats {
    pub fn new(max_batch: usize) -> Self {
        let z = || AtomicU64::new(0);
        Stats {
            requests: z(),
            failed_requests: z(),
            positions: z(),
            cache_hits: z(),
            deduplicated: z(),
            evaluated: z(),
            dropped: z(),
            batches: z(),
            failed_batches: z(),
            batch_sizes: (0..=max_batch).map(|_| z()).collect(),
            queue_wait: LatencyHistogram::default(),
            latency: LatencyHistogram::default(),
            inner_ns: z(),
            phase_ns: std::array::from_fn(|_| z()),
        }
    }

    pub fn add_phase(&self, phase: Phase, took: Duration) {
        self.phase_ns[phase as usize].fetch_add(
            u64::try_from(took.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    pub fn add(counter: &AtomicU64, n: usize) {
        counter.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// One call of the inner evaluator on `size` positions.
    pub fn record_batch(&self, size: usize, took: Duration, ok: bool) {
        Self::add(&self.batches, 1);
        Self::add(&self.evaluated, size);
        if !ok {
            Self::add(&self.failed_batches, 1);
        }
        let i = size.min(self.batch_sizes.len() - 1);
        Self::add(&self.batch_sizes[i], 1);
        self.inner_ns.fetch_add(
            u64::try_from(took.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// Power-of-two bars (1, 2, 3-4, 5-8, ...) up to `max_batch`, empty
    /// bars left out; the largest batch seen.
    fn histogram(&self) -> (Vec<BatchBucket>, usize) {
        let counts: Vec<u64> = self
            .batch_sizes
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        let largest = counts.iter().rposition(|&c| c > 0).unwrap_or(0);
        let mut bars = Vec::new();
        let (mut lo, mut hi) = (1usize, 1usize);
        while lo < counts.len() {
            let top = hi.min(counts.len() - 1);
            let count = counts[lo..=top].iter().sum();
            if count > 0 {
                bars.push(BatchBucket {
                    min: lo,
                    max: top,
                    count,
                });
            }
            lo = hi + 1;
            hi *= 2;
        }
        (bars, largest)
    }

    pub fn snapshot(&self, head: StatsHead, cache_len: usize) -> BatchStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let (batch_sizes, largest_batch) = self.histogram();
        let positions = get(&self.positions);
        let batches = get(&self.batches);
        let evaluated = get(&self.evaluated);
        let cache_hits = get(&self.cache_hits);
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        BatchStats {
            evaluator: head.evaluator,
            max_batch: head.max_batch,
            max_wait_us: head.max_wait_us,
            cache_capacity: head.cache_capacity,
            requests: get(&self.requests),
            failed_requests: get(&self.failed_requests),
            positions,
            cache_hits,
            cache_hit_rate: ratio(cache_hits, positions),
            cache_entries: cache_len,
            deduplicated: get(&self.deduplicated),
            evaluated,
            dropped: get(&self.dropped),
            batches,
            failed_batches: get(&self.failed_batches),
            mean_batch: ratio(evaluated, batches),
            largest_batch,
            batch_sizes,
            inner_seconds: get(&self.inner_ns) as f64 * 1e-9,
            split: {
                let per_batch = |p: Phase| {
                    get(&self.phase_ns[p as usize]) as f64 * 1e-3 / batches.max(1) as f64
                };
                BatchSplit {
                    form_us: per_batch(Phase::Form),
                    encode_us: per_batch(Phase::Encode),
                    network_us: per_batch(Phase::Network),
                    finish_us: per_batch(Phase::Finish),
                    reply_us: per_batch(Phase::Reply),
                }
            },
            queue_wait: self.queue_wait.snapshot(),
            latency: self.latency.snapshot(),
        }
    }
}

/// The service's settings, repeated in each snapshot.
pub struct StatsHead {
    pub evaluator: String,
    pub max_batch: usize,
    pub max_wait_us: f64,
    pub cache_capacity: usize,
}

/// What a [`super::BatchedEvaluator`] has done so far
/// ([`super::BatchedEvaluator::stats`]). When no request is in flight,
/// `positions == cache_hits + deduplicated + evaluated + dropped` and the
/// bars of `batch_sizes` add up to `batches`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BatchStats {
    /// The inner evaluator's name.
    pub evaluator: String,
    pub max_batch: usize,
    pub max_wait_us: f64,
    /// The cache's bound (0: no cache).
    pub cache_capacity: usize,
    /// Calls of `evaluate` / `evaluate_full` with at least one position.
    pub requests: u64,
    /// Requests answered with an error.
    pub failed_requests: u64,
    /// Positions asked for.
    pub positions: u64,
    /// Positions answered from the cache.
    pub cache_hits: u64,
    /// `cache_hits / positions`.
    pub cache_hit_rate: f64,
    /// Answers in the cache now.
    pub cache_entries: usize,
    /// Positions answered by another copy of the same position in their batch.
    pub deduplicated: u64,
    /// Positions sent to the inner evaluator (the batches' sizes added up).
    pub evaluated: u64,
    /// Positions whose requests were refused because the service stopped.
    pub dropped: u64,
    /// Calls of the inner evaluator.
    pub batches: u64,
    /// Calls that returned an error or panicked.
    pub failed_batches: u64,
    /// `evaluated / batches`.
    pub mean_batch: f64,
    pub largest_batch: usize,
    /// Batches by size in power-of-two bars; empty bars left out.
    pub batch_sizes: Vec<BatchBucket>,
    /// Seconds inside the inner evaluator.
    pub inner_seconds: f64,
    /// Where a batch's time goes, by phase.
    pub split: BatchSplit,
    /// From a request (or a `max_batch` piece of one) entering the queue to
    /// the start of its batch.
    pub queue_wait: Percentiles,
    /// From a request's call to its answer, cache hits included.
    pub latency: Percentiles,
}

impl fmt::Display for BatchStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |a: u64| {
            if self.positions == 0 {
                0.0
            } else {
                100.0 * a as f64 / self.positions as f64
            }
        };
        writeln!(
            f,
            "batched {}: max_batch {}, max_wait {} us, cache {}",
            self.evaluator,
            self.max_batch,
            self.max_wait_us,
            if self.cache_capacity == 0 {
                "off".to_string()
            } else {
                format!("{} of {} entries", self.cache_entries, self.cache_capacity)
            }
        )?;
        writeln!(f, "{:<22} {:>12}", "requests", self.requests)?;
        if self.failed_requests > 0 {
            writeln!(f, "{:<22} {:>12}", "  failed", self.failed_requests)?;
        }
        writeln!(f, "{:<22} {:>12}", "positions", self.positions)?;
        for (label, n) in [
            ("  cache hits", self.cache_hits),
            ("  duplicates", self.deduplicated),
            ("  evaluated", self.evaluated),
            ("  dropped", self.dropped),
        ] {
            writeln!(f, "{label:<22} {n:>12} {:>7.1}%", pct(n))?;
        }
        writeln!(
            f,
            "{:<22} {:>12}   mean {:.1}, largest {}, {} failed",
            "batches", self.batches, self.mean_batch, self.largest_batch, self.failed_batches
        )?;
        for b in &self.batch_sizes {
            let range = if b.min == b.max {
                b.min.to_string()
            } else {
                format!("{}-{}", b.min, b.max)
            };
            let share = if self.batches == 0 {
                0.0
            } else {
                100.0 * b.count as f64 / self.batches as f64
            };
            writeln!(f, "  {range:<20} {:>12} {share:>7.1}%", b.count)?;
        }
        writeln!(
            f,
            "{:<22} {:>12} {:>12} {:>12} {:>12}",
            "microseconds", "p50", "p99", "mean", "max"
        )?;
        for (label, p) in [("queue wait", &self.queue_wait), ("latency", &self.latency)] {
            writeln!(
                f,
                "{label:<22} {:>12.0} {:>12.0} {:>12.1} {:>12.0}",
                p.p50_us, p.p99_us, p.mean_us, p.max_us
            )?;
        }
        write!(f, "{:<22}", "per batch, us")?;
        for (name, us) in self.split.phases() {
            write!(f, " {name} {us:.0}")?;
        }
        writeln!(f)?;
        write!(f, "{:<22} {:>12.3}", "inner seconds", self.inner_seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut last = 0;
        for us in (0..5000u64).chain([1 << 20, (1 << 20) + 12345, 1 << 40, u64::MAX]) {
            let b = bucket(us);
            assert!(b >= last, "{us}");
            last = b;
            let (lo, width) = bucket_range(b);
            if us < 1 << 44 {
                assert!(lo <= us && us < lo + width, "{us}: [{lo}, {})", lo + width);
                assert!(width as f64 <= (us as f64 / 16.0).max(1.0), "{us}");
            }
        }
    }

    #[test]
    fn quantiles_are_exact_for_small_values_and_close_for_large() {
        let h = LatencyHistogram::default();
        assert_eq!(h.quantile(0.5), 0.0);
        for us in 1..=20 {
            h.record_us(us);
        }
        assert_eq!(h.quantile(0.5), 10.0);
        assert_eq!(h.quantile(1.0), 20.0);
        assert_eq!(h.quantile(0.0), 1.0);
        let s = h.snapshot();
        assert_eq!(s.count, 20);
        assert_eq!(s.mean_us, 10.5);
        assert_eq!(s.p99_us, 20.0);
        assert_eq!(s.max_us, 20.0);

        let h = LatencyHistogram::default();
        for us in 1..=10_000u64 {
            h.record_us(us);
        }
        let p50 = h.quantile(0.5);
        let p99 = h.quantile(0.99);
        assert!((p50 - 5000.0).abs() / 5000.0 < 1.0 / 16.0, "{p50}");
        assert!((p99 - 9900.0).abs() / 9900.0 < 1.0 / 16.0, "{p99}");
        assert!(h.quantile(1.0) <= 10_000.0);
    }

    #[test]
    fn histogram_bars_add_up() {
        let s = Stats::new(100);
        for size in [1, 1, 2, 3, 4, 5, 8, 9, 64, 65, 100] {
            s.record_batch(size, Duration::from_micros(10), size != 3);
        }
        let (bars, largest) = s.histogram();
        let want = [(1, 1, 2), (2, 2, 1), (3, 4, 2), (5, 8, 2), (9, 16, 1)];
        for (b, (lo, hi, n)) in bars.iter().zip(want) {
            assert_eq!((b.min, b.max, b.count), (lo, hi, n));
        }
        assert_eq!(bars[5..].len(), 2);
        assert_eq!((bars[5].min, bars[5].max, bars[5].count), (33, 64, 1));
        assert_eq!((bars[6].min, bars[6].max, bars[6].count), (65, 100, 2));
        assert_eq!(largest, 100);
        let head = StatsHead {
            evaluator: "x".into(),
            max_batch: 100,
            max_wait_us: 200.0,
            cache_capacity: 0,
        };
        let snap = s.snapshot(head, 0);
        assert_eq!(snap.batches, 11);
        assert_eq!(snap.failed_batches, 1);
        assert_eq!(snap.evaluated, 262);
        assert_eq!(snap.batch_sizes.iter().map(|b| b.count).sum::<u64>(), 11);
        assert!((snap.mean_batch - 262.0 / 11.0).abs() < 1e-12);
        assert!((snap.inner_seconds - 110e-6).abs() < 1e-12);
        let table = snap.to_string();
        assert!(table.contains("65-100"), "{table}");
        assert!(table.contains("cache off"), "{table}");
        let json = serde_json::to_value(&snap).unwrap();
        assert_eq!(json["batches"], 11);
        assert_eq!(json["batch_sizes"][0]["count"], 2);
    }

    #[test]
    fn rates_are_zero_without_positions() {
        let head = || StatsHead {
            evaluator: "x".into(),
            max_batch: 4,
            max_wait_us: 0.0,
            cache_capacity: 8,
        };
        let s = Stats::new(4);
        let snap = s.snapshot(head(), 0);
        assert_eq!(snap.cache_hit_rate, 0.0);
        assert_eq!(snap.mean_batch, 0.0);
        assert!(snap.batch_sizes.is_empty());
        Stats::add(&s.positions, 4);
        Stats::add(&s.cache_hits, 1);
        let snap = s.snapshot(head(), 1);
        assert_eq!(snap.cache_hit_rate, 0.25);
    }
}
