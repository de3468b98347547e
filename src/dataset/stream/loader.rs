//! [`StreamLoader`]: checks the settings against the dataset, counts the
//! rows served, orders the shards of each epoch and starts an epoch's
//! decoder and assembler threads.

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::mpsc::sync_channel;
use std::sync::Arc;

use candle_core::{Device, Tensor};
use rand::seq::SliceRandom;

use super::assembler::Assembler;
use super::decoder::decoder;
use super::{check_memory, StreamBatch, StreamConfig, StreamEpoch, StreamError, TensorBatch};
use crate::dataset::reader::Dataset;
use crate::encode::Symmetries;
use crate::util::{derive_seed, int8_planes, seeded_rng};

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
                weights: if b.weights.is_empty() {
                    None
                } else {
                    Some(Tensor::from_vec(b.weights, n, &device)?)
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
