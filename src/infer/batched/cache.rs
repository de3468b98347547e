//! The answer cache: evaluations by [`crate::game::Game::hash_key`], bounded,
//! shared by every client thread and the worker.
//!
//! The keys are split over shards, each behind its own lock. A shard keeps
//! two generations: new answers go to the current one; when it is full it
//! becomes the old one and the previous old one is forgotten. A hit in the
//! old generation moves the answer back to the current one, so answers in
//! use survive (an approximation of least-recently-used at the price of two
//! hash lookups). The entries never exceed the configured bound.
//!
//! Two positions with the same 64-bit key share an answer; keys are the
//! games' own position hashes, where a collision is as unlikely as in a
//! transposition table.

use crate::infer::Evaluation;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

const MAX_SHARDS: usize = 16;

#[derive(Default)]
struct Shard {
    current: foldhash::HashMap<u64, Evaluation>,
    old: foldhash::HashMap<u64, Evaluation>,
}

/// A bounded, thread-safe map from position keys to evaluations.
pub struct EvalCache {
    shards: Vec<Mutex<Shard>>,
    /// Entries of one generation of one shard.
    generation: usize,
    /// Whether a shard keeps two generations (it keeps one when its share
    /// of the bound is a single entry).
    two_generations: bool,
    capacity: usize,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl EvalCache {
    /// A cache of at most `entries` answers; `None` for 0 (no cache).
    pub fn new(entries: usize) -> Option<Self> {
        if entries == 0 {
            return None;
        }
        let shards = MAX_SHARDS.min(entries / 2).max(1);
        let per_shard = entries / shards;
        let generation = (per_shard / 2).max(1);
        Some(EvalCache {
            shards: (0..shards).map(|_| Mutex::default()).collect(),
            generation,
            two_generations: 2 * generation <= per_shard,
            capacity: entries,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        })
    }

    fn shard(&self, key: u64) -> MutexGuard<'_, Shard> {
        // Keys of small games can be small integers: mix before picking.
        let i = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as usize % self.shards.len();
        // A panic while the lock was held (none is expected: the maps do
        // not call out) leaves whole entries; keep using them.
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The answer for `key`, counting a hit or a miss.
    pub fn get(&self, key: u64) -> Option<Evaluation> {
        let found = self.peek(key);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// The answer for `key` without counting.
    pub fn peek(&self, key: u64) -> Option<Evaluation> {
        let mut s = self.shard(key);
        if let Some(e) = s.current.get(&key) {
            return Some(e.clone());
        }
        let e = s.old.remove(&key)?;
        self.insert_locked(&mut s, key, e.clone());
        Some(e)
    }

    /// Keeps `value` for `key`.
    pub fn insert(&self, key: u64, value: Evaluation) {
        let mut s = self.shard(key);
        if let Some(slot) = s.current.get_mut(&key) {
            *slot = value;
            return;
        }
        s.old.remove(&key);
        self.insert_locked(&mut s, key, value);
    }

    fn insert_locked(&self, s: &mut Shard, key: u64, value: Evaluation) {
        if s.current.len() >= self.generation {
            let full = std::mem::take(&mut s.current);
            if self.two_generations {
                s.old = full;
            }
        }
        s.current.insert(key, value);
    }

    /// Entries held now.
    pub fn len(&self) -> usize {
        (0..self.shards.len())
            .map(|i| {
                let s = self.shards[i].lock().unwrap_or_else(|p| p.into_inner());
                s.current.len() + s.old.len()
            })
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bound on [`EvalCache::len`].
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Lookups by [`EvalCache::get`] that found an answer.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Lookups by [`EvalCache::get`] that found none.
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::hash_of;

    fn eval(v: f32) -> Evaluation {
        Evaluation {
            value: v,
            policy: Some(vec![v, -v]),
        }
    }

    #[test]
    fn zero_entries_is_no_cache() {
        assert!(EvalCache::new(0).is_none());
    }

    #[test]
    fn hits_and_misses_are_counted() {
        let c = EvalCache::new(100).unwrap();
        assert_eq!(c.get(7), None);
        c.insert(7, eval(0.5));
        assert_eq!(c.get(7), Some(eval(0.5)));
        assert_eq!(c.get(7), Some(eval(0.5)));
        assert_eq!(c.get(8), None);
        assert_eq!((c.hits(), c.misses()), (2, 2));
        // peek does not count.
        assert_eq!(c.peek(7), Some(eval(0.5)));
        assert_eq!((c.hits(), c.misses()), (2, 2));
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn never_holds_more_than_its_bound() {
        for cap in [1, 2, 3, 5, 16, 17, 31, 100, 1000] {
            let c = EvalCache::new(cap).unwrap();
            for i in 0..(5 * cap as u64 + 50) {
                c.insert(hash_of(&i), eval(i as f32));
                assert!(c.len() <= cap, "cap {cap}: {} entries", c.len());
            }
            assert!(c.len() >= cap / 4, "cap {cap}: only {} entries", c.len());
            assert_eq!(c.capacity(), cap);
        }
    }

    #[test]
    fn recent_answers_survive_and_are_right() {
        let c = EvalCache::new(64).unwrap();
        let hot = hash_of(&"hot");
        c.insert(hot, eval(9.0));
        for i in 0..10_000u64 {
            c.insert(hash_of(&i), eval(i as f32));
            // Used all the time: never evicted.
            assert_eq!(c.peek(hot), Some(eval(9.0)), "after {i}");
        }
        // Whatever is found is the answer stored for that key.
        for i in 0..10_000u64 {
            if let Some(e) = c.peek(hash_of(&i)) {
                assert_eq!(e, eval(i as f32));
            }
        }
    }

    #[test]
    fn replaces_an_answer() {
        let c = EvalCache::new(10).unwrap();
        c.insert(1, eval(1.0));
        c.insert(1, eval(2.0));
        assert_eq!(c.peek(1), Some(eval(2.0)));
        assert_eq!(c.len(), 1);
    }
}
