//! The assembler thread: takes the decoders' chunks in shard order into
//! the shuffle buffer and draws each batch's rows from it at random, with
//! one seeded generator so the batches never depend on thread timing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;

use rand::RngExt;

use super::decoder::Msg;
use super::epoch::Out;
use super::rows::Rows;
use super::{StreamBatch, StreamConfig, StreamError};
use crate::dataset::error::DatasetError;
use crate::util::SeededRng;

/// The single thread that owns the shuffle buffer and builds batches.
pub(super) struct Assembler {
    pub(super) cfg: StreamConfig,
    pub(super) shape: [usize; 3],
    pub(super) planes_len: usize,
    pub(super) globals_len: usize,
    pub(super) shards: usize,
    pub(super) rng: SeededRng,
    pub(super) skip: u64,
    /// Keep the planes int8 in the batches.
    pub(super) int8: bool,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) peak: Arc<AtomicUsize>,
}

impl Assembler {
    pub(super) fn run<T, F>(
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
            weights: Vec::with_capacity(if self.cfg.source_weights.is_empty() {
                0
            } else {
                cap
            }),
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
                        buf.append(*rows);
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
            weights: Vec::new(),
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
            let weight = (!buf.weights.is_empty()).then(|| buf.weights.swap_remove(i));
            if !discard {
                b.text.extend(text);
                b.weights.extend(weight);
                b.labels.push(label);
                b.side_to_move.push(side);
                b.ply.push(ply);
                b.plies_to_end.push(to_end);
            }
        }
        b
    }
}
