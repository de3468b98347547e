//! A transposition table for alpha-beta: results of searched positions by
//! [`crate::game::Game::hash_key`], so a position reached again by another
//! move order is not searched twice, and the best move found there is
//! tried first next time.
//!
//! Fixed size, one entry per slot; a new result replaces the old one
//! unless the old one was searched deeper for the same position. Won and
//! lost scores are stored relative to the position (not the root), so they
//! stay right when the position is met at another distance from the root.

use super::alphabeta::WIN_THRESHOLD;

/// What a stored score says about the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Exact,
    /// The true value is at least the score (a beta cut-off).
    Lower,
    /// The true value is at most the score (no move raised alpha).
    Upper,
}

#[derive(Clone, Copy, Debug)]
pub struct Entry<M> {
    pub key: u64,
    pub depth: u32,
    pub score: i32,
    pub bound: Bound,
    pub best: Option<M>,
}

pub struct TranspositionTable<M> {
    slots: Vec<Option<Entry<M>>>,
    mask: usize,
    pub hits: u64,
}

impl<M: Copy> TranspositionTable<M> {
    /// A table of `2^bits` entries.
    pub fn new(bits: u32) -> Self {
        let n = 1usize << bits;
        TranspositionTable {
            slots: vec![None; n],
            mask: n - 1,
            hits: 0,
        }
    }

    /// The entry for `key`, with its score made relative to the root
    /// `ply` moves above.
    pub fn probe(&mut self, key: u64, ply: u32) -> Option<Entry<M>> {
        let e = self.slots[key as usize & self.mask]?;
        if e.key != key {
            return None;
        }
        self.hits += 1;
        Some(Entry {
            score: from_tt(e.score, ply),
            ..e
        })
    }

    pub fn store(
        &mut self,
        key: u64,
        ply: u32,
        depth: u32,
        score: i32,
        bound: Bound,
        best: Option<M>,
    ) {
        let slot = &mut self.slots[key as usize & self.mask];
        if let Some(old) = slot {
            if old.key == key && old.depth > depth {
                return;
            }
        }
        *slot = Some(Entry {
            key,
            depth,
            score: to_tt(score, ply),
            bound,
            best,
        });
    }
}

/// A win `n` moves from the root is stored as a win `n - ply` moves from
/// the position.
fn to_tt(score: i32, ply: u32) -> i32 {
    if score >= WIN_THRESHOLD {
        score + ply as i32
    } else if score <= -WIN_THRESHOLD {
        score - ply as i32
    } else {
        score
    }
}

fn from_tt(score: i32, ply: u32) -> i32 {
    if score >= WIN_THRESHOLD {
        score - ply as i32
    } else if score <= -WIN_THRESHOLD {
        score + ply as i32
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::alphabeta::WIN;

    #[test]
    fn stores_probes_and_keeps_deeper_results() {
        let mut tt: TranspositionTable<u8> = TranspositionTable::new(4);
        tt.store(17, 0, 3, 40, Bound::Exact, Some(2));
        tt.store(17, 0, 1, 10, Bound::Lower, Some(5));
        let e = tt.probe(17, 0).unwrap();
        assert_eq!((e.depth, e.score, e.best), (3, 40, Some(2)));
        assert!(tt.probe(17 + 16, 0).is_none(), "same slot, other key");
        tt.store(17 + 16, 0, 0, 1, Bound::Upper, None);
        assert!(tt.probe(17, 0).is_none());
        assert_eq!(tt.hits, 1);
    }

    #[test]
    fn win_scores_are_relative_to_the_position() {
        let mut tt: TranspositionTable<u8> = TranspositionTable::new(2);
        // A win 5 moves from the root, found at ply 2: 3 moves from there.
        tt.store(1, 2, 4, WIN - 5, Bound::Exact, None);
        assert_eq!(tt.probe(1, 2).unwrap().score, WIN - 5);
        assert_eq!(tt.probe(1, 4).unwrap().score, WIN - 7);
        tt.store(2, 1, 4, -(WIN - 3), Bound::Exact, None);
        assert_eq!(tt.probe(2, 3).unwrap().score, -(WIN - 5));
    }
}
