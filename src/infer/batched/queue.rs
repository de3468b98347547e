//! The queue between callers and the workers: pieces of requests in a
//! deque behind a mutex, and a condition variable the forming worker sleeps
//! on.
//!
//! One worker at a time forms a batch (it holds the turn); the others
//! evaluate theirs or wait for the turn. With two workers, one batch is
//! formed while the previous one is in the network: two batches in flight.
//!
//! Callers wake the forming worker only when it needs waking: when it waits
//! for a first piece, or when it waits for a batch to fill and the queue
//! now holds `max_batch` positions. A worker busy evaluating is never woken
//! (it takes what has queued up when it is done), so a caller's piece costs
//! a lock and a push, not a thread switch.

use super::service::Reply;
use std::collections::VecDeque;
use std::sync::mpsc::SyncSender;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A piece of one request: at most `max_batch` positions, their keys, when
/// it was queued and where its answers go.
pub(super) struct Job<G> {
    pub states: Vec<G>,
    pub keys: Vec<u64>,
    pub queued: Instant,
    pub reply: SyncSender<Reply>,
}

/// What the worker holding the turn is doing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Worker {
    /// Evaluating, or already woken (or no worker holds the turn).
    Busy,
    /// Waiting for a first piece.
    Idle,
    /// Waiting for `max_batch` positions or the deadline.
    Filling,
}

struct State<G> {
    jobs: VecDeque<Job<G>>,
    /// Positions in `jobs`.
    positions: usize,
    worker: Worker,
    /// A worker is forming a batch.
    forming: bool,
    stopped: bool,
}

pub(super) struct Queue<G> {
    state: Mutex<State<G>>,
    wake: Condvar,
    /// Workers waiting for the turn to form a batch.
    turn: Condvar,
    max_batch: usize,
    max_wait: Duration,
}

impl<G> Queue<G> {
    pub fn new(max_batch: usize, max_wait: Duration) -> Self {
        Queue {
            state: Mutex::new(State {
                jobs: VecDeque::new(),
                positions: 0,
                worker: Worker::Busy,
                forming: false,
                stopped: false,
            }),
            wake: Condvar::new(),
            turn: Condvar::new(),
            max_batch,
            max_wait,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<G>> {
        // Nothing panics while holding the lock; if something did, the
        // deque is still whole.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `job`; gives it back when the queue has stopped.
    pub fn push(&self, job: Job<G>) -> Result<(), Job<G>> {
        let mut s = self.lock();
        if s.stopped {
            return Err(job);
        }
        s.positions += job.states.len();
        s.jobs.push_back(job);
        let wake = match s.worker {
            Worker::Idle => true,
            Worker::Filling => s.positions >= self.max_batch,
            Worker::Busy => false,
        };
        if wake {
            s.worker = Worker::Busy;
        }
        drop(s);
        if wake {
            self.wake.notify_one();
        }
        Ok(())
    }

    /// Waits for the next batch: the oldest pieces, at most `max_batch`
    /// positions together (at least one piece), once `max_batch` positions
    /// are queued or `max_wait` has passed since the oldest was queued.
    /// `None` once the queue has stopped. Workers take turns: one forms a
    /// batch while the others evaluate.
    pub fn next_batch(&self) -> Option<Vec<Job<G>>> {
        let mut s = self.lock();
        while s.forming && !s.stopped {
            s = self.turn.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.forming = true;
        let (mut s, batch) = self.form(s);
        s.forming = false;
        s.worker = Worker::Busy;
        drop(s);
        self.turn.notify_one();
        batch
    }

    /// [`Queue::next_batch`] for the worker holding the turn.
    fn form<'a>(
        &'a self,
        mut s: MutexGuard<'a, State<G>>,
    ) -> (MutexGuard<'a, State<G>>, Option<Vec<Job<G>>>) {
        loop {
            if s.stopped {
                return (s, None);
            }
            if !s.jobs.is_empty() {
                break;
            }
            s.worker = Worker::Idle;
            s = self.wake.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        // Counted from when the oldest piece was queued: one that waited
        // behind the previous batch goes at once.
        let Some(deadline) = s.jobs.front().map(|j| j.queued + self.max_wait) else {
            return (s, None);
        };
        while !s.stopped && s.positions < self.max_batch {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            s.worker = Worker::Filling;
            s = self
                .wake
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        s.worker = Worker::Busy;
        if s.stopped {
            return (s, None);
        }
        let mut taken = 0;
        let mut batch = Vec::new();
        while let Some(job) = s.jobs.front() {
            let n = job.states.len();
            if !batch.is_empty() && taken + n > self.max_batch {
                break;
            }
            taken += n;
            batch.extend(s.jobs.pop_front());
        }
        s.positions -= taken;
        (s, Some(batch))
    }

    /// Refuses new pieces, drops the queued ones (their callers see their
    /// reply channel close) and wakes the worker to end.
    pub fn stop(&self) {
        let mut s = self.lock();
        s.stopped = true;
        s.positions = 0;
        let dropped = std::mem::take(&mut s.jobs);
        drop(s);
        self.wake.notify_all();
        self.turn.notify_all();
        drop(dropped);
    }

    pub fn is_stopped(&self) -> bool {
        self.lock().stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::{sync_channel, Receiver};
    use std::sync::Arc;

    fn job(n: usize) -> (Job<u8>, Receiver<Reply>) {
        let (reply, rx) = sync_channel(1);
        let job = Job {
            states: vec![0; n],
            keys: vec![0; n],
            queued: Instant::now(),
            reply,
        };
        (job, rx)
    }

    #[test]
    fn batches_take_the_oldest_pieces_up_to_max_batch() {
        let q = Queue::new(5, Duration::ZERO);
        let mut rxs = Vec::new();
        for n in [2, 2, 2, 5, 1] {
            let (j, rx) = job(n);
            assert!(q.push(j).is_ok());
            rxs.push(rx);
        }
        let sizes = |b: Vec<Job<u8>>| b.iter().map(|j| j.states.len()).collect::<Vec<_>>();
        assert_eq!(sizes(q.next_batch().unwrap()), vec![2, 2]);
        assert_eq!(sizes(q.next_batch().unwrap()), vec![2]);
        assert_eq!(sizes(q.next_batch().unwrap()), vec![5]);
        assert_eq!(sizes(q.next_batch().unwrap()), vec![1]);
    }

    #[test]
    fn a_full_queue_wakes_a_filling_worker() {
        let q = Arc::new(Queue::new(4, Duration::from_secs(1)));
        let worker = {
            let q = q.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                let b = q.next_batch().unwrap();
                (b.len(), t.elapsed())
            })
        };
        let mut rxs = Vec::new();
        for _ in 0..4 {
            std::thread::sleep(Duration::from_millis(5));
            let (j, rx) = job(1);
            assert!(q.push(j).is_ok());
            rxs.push(rx);
        }
        let (n, took) = worker.join().unwrap();
        assert_eq!(n, 4);
        assert!(took < Duration::from_millis(700), "{took:?}");
    }

    #[test]
    fn stop_drops_queued_pieces_and_refuses_new_ones() {
        let q = Arc::new(Queue::<u8>::new(4, Duration::from_secs(1)));
        let (j, rx) = job(1);
        assert!(q.push(j).is_ok());
        let waiting = {
            let q = q.clone();
            std::thread::spawn(move || {
                // Takes the piece after waiting, or sees the stop.
                q.next_batch().map(|b| b.len())
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        q.stop();
        assert_eq!(waiting.join().unwrap(), None);
        assert!(rx.recv().is_err(), "the dropped piece's caller is told");
        assert!(q.push(job(1).0).is_err());
        assert!(q.is_stopped());
        assert!(q.next_batch().is_none());
    }
}
