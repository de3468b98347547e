//! The worker thread: forms batches from the queue, calls the inner
//! evaluator once per batch and answers every piece of every request in it.

use super::service::{Job, Msg, Reply, Shared};
use super::stats::Stats;
use crate::game::Game;
use crate::infer::{Evaluation, InferError};
use std::collections::hash_map::Entry;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::Instant;

/// Serves batches until the service stops. Pieces left in the queue, or in
/// a batch being formed when the stop arrives, are dropped unanswered:
/// their callers see their reply channel close and return an error.
pub(super) fn run<G: Game>(shared: &Shared<G>, queue: Receiver<Msg<G>>) {
    let max_batch = shared.opts.max_batch;
    let mut carry: Option<Job<G>> = None;
    'serve: loop {
        if shared.stopping.load(Ordering::Acquire) {
            break;
        }
        let first = match carry.take() {
            Some(job) => job,
            None => match queue.recv() {
                Ok(Msg::Job(job)) => job,
                Ok(Msg::Stop) | Err(_) => break,
            },
        };
        // The wait counts from when the first request was queued: one that
        // waited behind the previous batch goes out at once.
        let deadline = first.queued + shared.opts.max_wait;
        let mut batch = Batch::default();
        batch.add(first);
        while batch.distinct() < max_batch {
            let msg = match queue.try_recv() {
                Ok(msg) => msg,
                Err(TryRecvError::Disconnected) => break 'serve,
                Err(TryRecvError::Empty) => {
                    let now = Instant::now();
                    if now >= deadline {
                        break;
                    }
                    match queue.recv_timeout(deadline - now) {
                        Ok(msg) => msg,
                        Err(RecvTimeoutError::Timeout) => break,
                        Err(RecvTimeoutError::Disconnected) => break 'serve,
                    }
                }
            };
            match msg {
                Msg::Stop => break 'serve,
                Msg::Job(job) if batch.fits(&job, max_batch) => batch.add(job),
                Msg::Job(job) => {
                    carry = Some(job);
                    break;
                }
            }
        }
        batch.run(shared);
    }
}

/// The distinct positions of the pieces gathered so far, and where each
/// piece's positions are among them.
struct Batch<G> {
    jobs: Vec<(Job<G>, Vec<usize>)>,
    index: foldhash::HashMap<u64, usize>,
    keys: Vec<u64>,
    states: Vec<G>,
    duplicates: usize,
}

impl<G> Default for Batch<G> {
    fn default() -> Self {
        Batch {
            jobs: Vec::new(),
            index: foldhash::HashMap::default(),
            keys: Vec::new(),
            states: Vec::new(),
            duplicates: 0,
        }
    }
}

impl<G: Game> Batch<G> {
    fn distinct(&self) -> usize {
        self.keys.len()
    }

    /// Whether `job`'s new distinct positions keep the batch within `max_batch`.
    fn fits(&self, job: &Job<G>, max_batch: usize) -> bool {
        if self.keys.len() + job.keys.len() <= max_batch {
            return true;
        }
        let mut new = foldhash::HashSet::default();
        for k in &job.keys {
            if !self.index.contains_key(k) {
                new.insert(*k);
            }
        }
        self.keys.len() + new.len() <= max_batch
    }

    fn add(&mut self, mut job: Job<G>) {
        let mut slots = Vec::with_capacity(job.keys.len());
        for (&k, state) in job.keys.iter().zip(job.states.drain(..)) {
            match self.index.entry(k) {
                Entry::Occupied(e) => {
                    slots.push(*e.get());
                    self.duplicates += 1;
                }
                Entry::Vacant(e) => {
                    e.insert(self.keys.len());
                    slots.push(self.keys.len());
                    self.keys.push(k);
                    self.states.push(state);
                }
            }
        }
        self.jobs.push((job, slots));
    }

    /// Evaluates the distinct positions the cache does not know (one call
    /// of the inner evaluator) and answers every piece.
    fn run(self, shared: &Shared<G>) {
        let start = Instant::now();
        let stats = &shared.stats;
        for (job, _) in &self.jobs {
            stats
                .queue_wait
                .record(start.saturating_duration_since(job.queued));
        }
        Stats::add(&stats.deduplicated, self.duplicates);
        let n = self.keys.len();
        let mut answers: Vec<Option<Evaluation>> = vec![None; n];
        // Answers that reached the cache since the callers looked.
        let (todo, states): (Vec<usize>, Vec<G>) = match &shared.cache {
            Some(cache) => {
                let mut todo = (Vec::with_capacity(n), Vec::with_capacity(n));
                for (i, state) in self.states.into_iter().enumerate() {
                    match cache.peek(self.keys[i]) {
                        Some(e) => answers[i] = Some(e),
                        None => {
                            todo.0.push(i);
                            todo.1.push(state);
                        }
                    }
                }
                Stats::add(&stats.cache_hits, n - todo.0.len());
                todo
            }
            None => ((0..n).collect(), self.states),
        };
        let mut failure: Option<Arc<str>> = None;
        if !states.is_empty() {
            let t = Instant::now();
            let result = catch_unwind(AssertUnwindSafe(|| shared.inner.evaluate_full(&states)));
            let took = t.elapsed();
            let what = || {
                format!(
                    "{} on a batch of {} positions",
                    shared.inner.name(),
                    states.len()
                )
            };
            let result = match result {
                Ok(Ok(evals)) if evals.len() == states.len() => Ok(evals),
                Ok(Ok(evals)) => Err(format!("{} gave {} answers", what(), evals.len())),
                Ok(Err(e)) => Err(format!("{}: {}", what(), error_text(&e))),
                Err(panic) => Err(format!("{} panicked: {}", what(), panic_text(&*panic))),
            };
            stats.record_batch(states.len(), took, result.is_ok());
            match result {
                Ok(evals) => {
                    for (&i, e) in todo.iter().zip(evals) {
                        if let Some(cache) = &shared.cache {
                            cache.insert(self.keys[i], e.clone());
                        }
                        answers[i] = Some(e);
                    }
                }
                Err(why) => failure = Some(why.into()),
            }
        }
        // The last piece to use an answer takes it; the others copy it.
        let mut uses = vec![0usize; n];
        for (_, slots) in &self.jobs {
            for &i in slots {
                uses[i] += 1;
            }
        }
        for (job, slots) in self.jobs {
            let reply: Reply = match &failure {
                Some(why) => Err(why.clone()),
                None => slots
                    .iter()
                    .map(|&i| {
                        uses[i] -= 1;
                        if uses[i] == 0 {
                            answers[i].take()
                        } else {
                            answers[i].clone()
                        }
                    })
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| Arc::from("batched evaluator: an answer is missing")),
            };
            // The caller waits on a channel of one slot that nothing else
            // fills; it is never full. A caller that has gone is no error.
            let _ = job.reply.try_send(reply);
        }
    }
}

/// The inner error's message without the `evaluator:` prefix of
/// [`InferError`]'s display (the caller's error adds it again).
fn error_text(e: &InferError) -> String {
    match e {
        InferError::Candle(c) => c.to_string(),
        InferError::Other(s) => s.clone(),
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".into()
    }
}
