//! The worker thread: forms batches from the queue, calls the inner
//! evaluator once per batch and answers every piece of every request in it.

use super::queue::Job;
use super::service::{Reply, Shared};
use super::stats::{Phase, Stats};
use crate::game::Game;
use crate::infer::{EvalSplit, Evaluation, InferError};
use std::collections::hash_map::Entry;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

/// Serves batches until the service stops. Pieces still queued then are
/// dropped unanswered: their callers see their reply channel close and
/// return an error.
pub(super) fn run<G: Game>(shared: &Shared<G>) {
    tight_timers();
    while let Some(jobs) = shared.queue.next_batch() {
        let formed = Instant::now();
        let mut batch = Batch::default();
        for job in jobs {
            batch.add(job);
        }
        batch.run(shared, formed);
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
    /// of the inner evaluator) and answers every piece; the batch began
    /// forming at `formed`.
    fn run(self, shared: &Shared<G>, formed: Instant) {
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
        let mut replied = Instant::now();
        stats.add_phase(Phase::Form, replied.saturating_duration_since(formed));
        if !states.is_empty() {
            let t = Instant::now();
            let mut split = EvalSplit::default();
            let result = catch_unwind(AssertUnwindSafe(|| {
                shared.inner.evaluate_full_split(&states, &mut split)
            }));
            let took = t.elapsed();
            stats.add_phase(Phase::Encode, split.encode);
            stats.add_phase(Phase::Network, split.network);
            stats.add_phase(Phase::Finish, split.finish);
            replied = Instant::now();
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
                        answers[i] = Some(e);
                    }
                }
                Err(why) => failure = Some(why.into()),
            }
        }
        // Kept for the cache before the replies take them; stored after the
        // callers have their answers.
        let fresh: Vec<(u64, Evaluation)> = match (&shared.cache, &failure) {
            (Some(_), None) => todo
                .iter()
                .filter_map(|&i| Some((self.keys[i], answers[i].clone()?)))
                .collect(),
            _ => Vec::new(),
        };
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
        if let Some(cache) = &shared.cache {
            for (key, e) in fresh {
                cache.insert(key, e);
            }
        }
        stats.add_phase(Phase::Reply, replied.elapsed());
    }
}

/// The inner error's message without the `evaluator:` prefix of
/// [`InferError`]'s display (the caller's error adds it again).
fn error_text(e: &InferError) -> String {
    match e {
        InferError::Candle(c) => c.to_string(),
        InferError::Model(m) => m.to_string(),
        InferError::Other(s) => s.clone(),
        InferError::Plan(_) | InferError::Device(_) => e.to_string(),
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

/// Asks Linux to end this thread's timed waits within a microsecond of
/// their deadline rather than the default 50 (`max_wait` is a few hundred
/// microseconds). Elsewhere, and if refused, the default stays.
fn tight_timers() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument (nanoseconds)
    // and changes only the calling thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
    }
}
