//! [`BatchedEvaluator`]: the client side. Callers look their positions up
//! in the cache, queue the rest for the worker (in pieces of at most
//! `max_batch`) and wait for its answers.

use super::cache::EvalCache;
use super::options::{BatchError, BatchOptions};
use super::queue::{Job, Queue};
use super::stats::{BatchStats, Stats, StatsHead};
use super::worker;
use crate::game::Game;
use crate::infer::{Evaluation, Evaluator, InferError};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// What a piece of a request gets back: its evaluations in order, or the
/// error its batch failed with.
pub(super) type Reply = Result<Vec<Evaluation>, Arc<str>>;

/// What the clients and the worker share.
pub(super) struct Shared<G: Game> {
    pub inner: Arc<dyn Evaluator<G>>,
    pub opts: BatchOptions,
    pub cache: Option<EvalCache>,
    pub stats: Stats,
    pub queue: Queue<G>,
}

/// The error of callers whose positions were never evaluated.
pub(super) const STOPPED: &str = "the batched evaluator has stopped";

/// An [`Evaluator`] that gathers the positions of concurrent callers into
/// batches for an inner evaluator, on [`BatchOptions::workers`] worker
/// threads.
///
/// Any number of threads call [`Evaluator::evaluate`] or
/// [`Evaluator::evaluate_full`] on a shared `Arc<BatchedEvaluator<G>>`.
/// Positions found in the cache are answered at once; the others are queued.
/// The worker takes the oldest queued request and those behind it, up to
/// `max_batch` positions, once `max_batch` positions are queued or
/// `max_wait` has passed since the oldest was queued, calls the inner
/// [`Evaluator::evaluate_full`] once on the distinct positions of the batch
/// and hands each caller its own answers. Answers are the inner evaluator's
/// own for the same positions; an error or a panic of the inner evaluator
/// reaches every caller of that batch as an [`InferError`], and the worker
/// goes on with the next batch.
///
/// Dropping the service (or [`BatchedEvaluator::shutdown`]) stops the
/// worker, answers callers still queued with an error and joins the thread.
///
/// ```
/// use plies::game::{Game, TicTacToe};
/// use plies::infer::{mlp_evaluator, BatchOptions, BatchedEvaluator, Evaluator};
/// # use plies::encode::{tictactoe_encoder, Encoder};
/// # use plies::model::{Activation, MlpConfig, NativeMlp, WeightInit};
/// # use std::sync::Arc;
/// # let cfg = MlpConfig { inputs: 9, hidden: vec![8], activation: Activation::Tanh,
/// #     init: WeightInit::Uniform { a: 0.3 } };
/// # let net = NativeMlp::new(&cfg, &mut plies::util::seeded_rng(1, 0)).unwrap();
/// # let enc: Arc<dyn Encoder<TicTacToe>> = Arc::from(tictactoe_encoder("tictactoe-9").unwrap());
/// let inner: Arc<dyn Evaluator<TicTacToe>> = Arc::new(mlp_evaluator(enc, &net));
/// let batched = Arc::new(BatchedEvaluator::new(inner.clone(), BatchOptions::default()).unwrap());
/// let start = [TicTacToe::new()];
/// assert_eq!(batched.evaluate(&start).unwrap(), inner.evaluate(&start).unwrap());
/// println!("{}", batched.stats());
/// ```
pub struct BatchedEvaluator<G: Game> {
    shared: Arc<Shared<G>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
    name: String,
    has_policy: bool,
}

impl<G: Game> BatchedEvaluator<G> {
    /// Starts the worker threads over `inner`.
    pub fn new(inner: Arc<dyn Evaluator<G>>, opts: BatchOptions) -> Result<Self, BatchError> {
        opts.validate()?;
        let name = format!("batched({})", inner.name());
        let has_policy = inner.has_policy();
        let shared = Arc::new(Shared {
            cache: EvalCache::new(opts.cache_entries),
            stats: Stats::new(opts.max_batch),
            queue: Queue::new(opts.max_batch, opts.max_wait),
            inner,
            opts,
        });
        let mut workers = Vec::with_capacity(shared.opts.workers);
        for i in 0..shared.opts.workers {
            let worker_shared = shared.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("plies-batcher-{i}"))
                .spawn(move || worker::run(&worker_shared));
            match spawned {
                Ok(h) => workers.push(h),
                Err(e) => {
                    // The ones started end with the queue.
                    shared.queue.stop();
                    for h in workers {
                        let _ = h.join();
                    }
                    return Err(e.into());
                }
            }
        }
        Ok(BatchedEvaluator {
            shared,
            workers: Mutex::new(workers),
            name,
            has_policy,
        })
    }

    pub fn options(&self) -> &BatchOptions {
        &self.shared.opts
    }

    /// The inner evaluator.
    pub fn inner(&self) -> &Arc<dyn Evaluator<G>> {
        &self.shared.inner
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> BatchStats {
        let s = &self.shared;
        s.stats.snapshot(
            StatsHead {
                evaluator: s.inner.name(),
                max_batch: s.opts.max_batch,
                max_wait_us: s.opts.max_wait.as_secs_f64() * 1e6,
                cache_capacity: s.cache.as_ref().map_or(0, EvalCache::capacity),
            },
            s.cache.as_ref().map_or(0, EvalCache::len),
        )
    }

    /// Whether the worker still takes requests.
    pub fn is_running(&self) -> bool {
        !self.shared.queue.is_stopped()
    }

    /// Stops the worker: the batch it is evaluating is answered, requests
    /// still queued and later ones get an error. Returns once the worker
    /// thread has ended. Dropping the service does the same.
    pub fn shutdown(&self) {
        self.shared.queue.stop();
        let handles = std::mem::take(&mut *self.workers.lock().unwrap_or_else(|p| p.into_inner()));
        for h in handles {
            // An inner evaluator that owns this service and drops it on the
            // worker thread must not wait for itself.
            if h.thread().id() != std::thread::current().id() {
                // The worker catches the inner evaluator's panics; a join
                // error would be a bug of the worker, with nothing to undo.
                let _ = h.join();
            }
        }
    }

    fn answer(&self, states: &[G]) -> Result<Vec<Evaluation>, InferError> {
        let n = states.len();
        let s = &self.shared;
        let keys: Vec<u64> = states.iter().map(Game::hash_key).collect();
        let mut out: Vec<Option<Evaluation>> = vec![None; n];
        let mut missing = Vec::with_capacity(n);
        match &s.cache {
            Some(cache) => {
                for (i, &k) in keys.iter().enumerate() {
                    match cache.get(k) {
                        Some(e) => out[i] = Some(e),
                        None => missing.push(i),
                    }
                }
                Stats::add(&s.stats.cache_hits, n - missing.len());
            }
            None => missing.extend(0..n),
        }
        if !missing.is_empty() {
            let mut failure: Option<InferError> = None;
            let mut waiting = Vec::new();
            for piece in missing.chunks(s.opts.max_batch) {
                let (reply, answer) = mpsc::sync_channel(1);
                let job = Job {
                    states: piece.iter().map(|&i| states[i].clone()).collect(),
                    keys: piece.iter().map(|&i| keys[i]).collect(),
                    queued: Instant::now(),
                    reply,
                };
                if s.queue.push(job).is_err() {
                    // The service has stopped: this piece and the later
                    // ones are never evaluated.
                    let sent: usize = waiting.iter().map(|(p, _): &(&[usize], _)| p.len()).sum();
                    Stats::add(&s.stats.dropped, missing.len() - sent);
                    failure = Some(InferError::Other(STOPPED.into()));
                    break;
                }
                waiting.push((piece, answer));
            }
            // Every piece sent is waited for, even after an error, so that
            // each is counted once: evaluated, or dropped here.
            for (piece, answer) in waiting {
                match answer.recv() {
                    Ok(Ok(evals)) => {
                        for (&i, e) in piece.iter().zip(evals) {
                            out[i] = Some(e);
                        }
                    }
                    Ok(Err(why)) => {
                        failure.get_or_insert(InferError::Other(why.to_string()));
                    }
                    // The worker dropped the piece unanswered: it stopped.
                    Err(_) => {
                        Stats::add(&s.stats.dropped, piece.len());
                        failure.get_or_insert(InferError::Other(STOPPED.into()));
                    }
                }
            }
            if let Some(e) = failure {
                return Err(e);
            }
        }
        out.into_iter()
            .map(|e| {
                e.ok_or_else(|| InferError::Other("batched evaluator: an answer is missing".into()))
            })
            .collect()
    }
}

impl<G: Game> Evaluator<G> for BatchedEvaluator<G> {
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, InferError> {
        self.evaluate_full(states).map(Evaluation::values)
    }

    fn evaluate_full(&self, states: &[G]) -> Result<Vec<Evaluation>, InferError> {
        if states.is_empty() {
            return Ok(Vec::new());
        }
        let t = Instant::now();
        let st = &self.shared.stats;
        Stats::add(&st.requests, 1);
        Stats::add(&st.positions, states.len());
        let r = self.answer(states);
        if r.is_err() {
            Stats::add(&st.failed_requests, 1);
        }
        st.latency.record(t.elapsed());
        r
    }

    fn has_policy(&self) -> bool {
        self.has_policy
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

impl<G: Game> Drop for BatchedEvaluator<G> {
    fn drop(&mut self) {
        self.shutdown();
    }
}
