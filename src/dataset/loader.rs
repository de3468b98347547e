//! `Loader`: shuffled mini-batches of one split, held in memory.
//!
//! The split is read once (planes kept as `i8`), and each batch is converted
//! to `f32` as it is taken. The order of epoch `e` is a pure function of
//! `(seed, e)`: the same seed gives the same batches on every run, and
//! [`Loader::epoch`] can start any epoch (e.g. when resuming a run).
//! Shuffling is by row (position), not by game.

use rand::rngs::Xoshiro256PlusPlus;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::error::{DatasetError, Result};
use super::reader::Dataset;
use super::split::Split;

/// One mini-batch, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// `len * C*H*W` values, converted from the stored `i8`.
    pub planes: Vec<f32>,
    /// `len * G` values.
    pub globals: Vec<f32>,
    /// Result for the side to move, one per row.
    pub labels: Vec<f32>,
    /// 0 = first player, one per row.
    pub side_to_move: Vec<u8>,
    /// Rows in this batch (the last batch of an epoch may be short).
    pub len: usize,
}

/// Mini-batches over one split of a dataset (or all of it), held in memory.
///
/// ```no_run
/// # use plies::dataset::{Dataset, Loader, Split};
/// # fn main() -> Result<(), plies::dataset::DatasetError> {
/// let ds = Dataset::open("data/ttt")?;
/// let loader = Loader::new(&ds, Some(Split::Train), 256, 7, true, false)?;
/// for epoch in 0..10 {
///     for batch in loader.epoch(epoch) {
///         // train on batch.planes / batch.labels (batch.len rows)
///         # let _ = batch;
///     }
/// }
/// # Ok(()) }
/// ```
///
/// Batches are built on the calling thread as they are taken (no prefetch:
/// converting a batch is a copy, small next to a training step).
#[derive(Clone, Debug)]
pub struct Loader {
    split: Option<Split>,
    shape: [usize; 3],
    planes_len: usize,
    globals_len: usize,
    planes: Vec<i8>,
    globals: Vec<f32>,
    labels: Vec<f32>,
    side_to_move: Vec<u8>,
    batch_size: usize,
    seed: u64,
    shuffle: bool,
    drop_last: bool,
}

/// SplitMix64 finaliser: spreads (seed, epoch) into an RNG seed.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Columns of one batch's rows that belong to the split.
#[derive(Default)]
struct Part {
    planes: Vec<i8>,
    globals: Vec<f32>,
    labels: Vec<f32>,
    side_to_move: Vec<u8>,
}

impl Loader {
    /// Loads `split` of `dataset` (every row for `None`) into memory.
    ///
    /// `shuffle = false` keeps the stored order; `drop_last` drops a final
    /// batch shorter than `batch_size`. An empty split gives a loader with no
    /// batches (check [`Loader::is_empty`]).
    pub fn new(
        dataset: &Dataset,
        split: Option<Split>,
        batch_size: usize,
        seed: u64,
        shuffle: bool,
        drop_last: bool,
    ) -> Result<Self> {
        DatasetError::refuse_zero("loader", "batch_size", batch_size, "at least 1")?;
        let spec = dataset.spec();
        let parts = dataset.map_shards(split, |cols| {
            let mut p = Part::default();
            for i in 0..cols.len() {
                if split.is_none() || Some(cols.split(i)?) == split {
                    p.planes.extend_from_slice(cols.planes(i));
                    p.globals.extend_from_slice(cols.globals(i));
                    p.labels.push(cols.label.value(i));
                    p.side_to_move.push(cols.side_to_move.value(i));
                }
            }
            Ok(p)
        })?;
        let mut all = Part::default();
        for p in parts.into_iter().flatten() {
            all.planes.extend(p.planes);
            all.globals.extend(p.globals);
            all.labels.extend(p.labels);
            all.side_to_move.extend(p.side_to_move);
        }
        Ok(Loader {
            split,
            shape: spec.encoder.shape,
            planes_len: spec.encoder.planes_len(),
            globals_len: spec.encoder.globals,
            planes: all.planes,
            globals: all.globals,
            labels: all.labels,
            side_to_move: all.side_to_move,
            batch_size,
            seed,
            shuffle,
            drop_last,
        })
    }

    /// The batches of epoch `epoch`, in an order that depends only on the
    /// seed and `epoch` (stored order when not shuffling).
    pub fn epoch(&self, epoch: u64) -> Epoch<'_> {
        Epoch {
            loader: self,
            order: self.order(epoch),
            pos: 0,
        }
    }

    /// Row order of epoch `epoch`: indices into the split's rows in stored order.
    pub fn order(&self, epoch: u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.len()).collect();
        if self.shuffle {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(mix(self.seed) ^ mix(!epoch));
            order.shuffle(&mut rng);
        }
        order
    }

    /// The split being served (`None`: all rows).
    pub fn split(&self) -> Option<Split> {
        self.split
    }

    /// Rows loaded.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// No rows loaded.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Batches per epoch.
    pub fn num_batches(&self) -> usize {
        if self.drop_last {
            self.len() / self.batch_size
        } else {
            self.len().div_ceil(self.batch_size)
        }
    }

    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Plane shape `[C, H, W]` of every row.
    pub fn shape(&self) -> [usize; 3] {
        self.shape
    }

    /// Global features per row.
    pub fn globals_len(&self) -> usize {
        self.globals_len
    }

    /// The batch made of rows `rows` (indices as in [`Loader::order`]).
    pub fn batch(&self, rows: &[usize]) -> Batch {
        let (p, g) = (self.planes_len, self.globals_len);
        let mut batch = Batch {
            planes: Vec::with_capacity(rows.len() * p),
            globals: Vec::with_capacity(rows.len() * g),
            labels: Vec::with_capacity(rows.len()),
            side_to_move: Vec::with_capacity(rows.len()),
            len: 0,
        };
        for &r in rows.iter().filter(|&&r| r < self.len()) {
            batch.planes.extend(
                self.planes[r * p..(r + 1) * p]
                    .iter()
                    .map(|&v| f32::from(v)),
            );
            batch
                .globals
                .extend_from_slice(&self.globals[r * g..(r + 1) * g]);
            batch.labels.push(self.labels[r]);
            batch.side_to_move.push(self.side_to_move[r]);
            batch.len += 1;
        }
        batch
    }
}

/// The batches of one epoch of a [`Loader`].
#[derive(Clone, Debug)]
pub struct Epoch<'a> {
    loader: &'a Loader,
    order: Vec<usize>,
    pos: usize,
}

impl Iterator for Epoch<'_> {
    type Item = Batch;

    fn next(&mut self) -> Option<Batch> {
        let n = self.order.len();
        let size = self.loader.batch_size;
        let end = self.pos.saturating_add(size).min(n);
        if self.pos >= n || (self.loader.drop_last && end - self.pos < size) {
            return None;
        }
        let batch = self.loader.batch(&self.order[self.pos..end]);
        self.pos = end;
        Some(batch)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let taken = self.pos.div_ceil(self.loader.batch_size);
        let left = self.loader.num_batches().saturating_sub(taken);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Epoch<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_separates_seeds_and_epochs() {
        let a = mix(1) ^ mix(!0);
        let b = mix(1) ^ mix(!1);
        let c = mix(2) ^ mix(!0);
        assert!(a != b && a != c && b != c);
    }
}
