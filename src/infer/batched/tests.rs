//! The service against a scripted inner evaluator: batch sizes, waiting,
//! the cache, deduplication, errors, panics and shutdown.

use super::*;
use crate::game::{Game, TicTacToe};
use crate::infer::{Evaluation, Evaluator, InferError};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const OK: u8 = 0;
const FAIL: u8 = 1;
const PANIC: u8 = 2;
const SHORT: u8 = 3;

/// Answers a value and a policy computed from each position's key, and
/// records every batch it is given.
#[derive(Default)]
struct Scripted {
    batches: Mutex<Vec<usize>>,
    mode: AtomicU8,
    delay: Duration,
    /// While closed (`false`), calls wait.
    gate: Option<(Mutex<bool>, Condvar)>,
    _dropped: Option<DropFlag>,
}

/// Set when the evaluator that holds it is dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn value_of(s: &TicTacToe) -> f32 {
    (s.hash_key() % 2001) as f32 / 1000.0 - 1.0
}

fn eval_of(s: &TicTacToe) -> Evaluation {
    let v = value_of(s);
    Evaluation {
        value: v,
        policy: Some(vec![v; 9]),
    }
}

impl Scripted {
    fn batches(&self) -> Vec<usize> {
        self.batches.lock().unwrap().clone()
    }

    fn open(&self) {
        let (m, c) = self.gate.as_ref().unwrap();
        *m.lock().unwrap() = true;
        c.notify_all();
    }
}

impl Evaluator<TicTacToe> for Scripted {
    fn evaluate(&self, states: &[TicTacToe]) -> Result<Vec<f32>, InferError> {
        self.evaluate_full(states).map(Evaluation::values)
    }

    fn evaluate_full(&self, states: &[TicTacToe]) -> Result<Vec<Evaluation>, InferError> {
        self.batches.lock().unwrap().push(states.len());
        if let Some((m, c)) = &self.gate {
            let mut open = m.lock().unwrap();
            while !*open {
                open = c.wait(open).unwrap();
            }
        }
        std::thread::sleep(self.delay);
        match self.mode.load(Ordering::SeqCst) {
            FAIL => Err(InferError::Other("device lost".into())),
            PANIC => panic!("kernel exploded"),
            SHORT => Ok(states.iter().skip(1).map(eval_of).collect()),
            _ => Ok(states.iter().map(eval_of).collect()),
        }
    }

    fn has_policy(&self) -> bool {
        true
    }

    fn name(&self) -> String {
        "scripted".into()
    }
}

/// `n` distinct positions (by key), in a fixed order.
fn positions(n: usize) -> Vec<TicTacToe> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut stack = vec![TicTacToe::new()];
    let mut moves = Vec::new();
    while let Some(g) = stack.pop() {
        if out.len() == n {
            break;
        }
        if !seen.insert(g.hash_key()) {
            continue;
        }
        g.legal_moves(&mut moves);
        for &m in moves.iter().rev() {
            let mut next = g;
            next.play(m);
            stack.push(next);
        }
        out.push(g);
    }
    assert_eq!(out.len(), n);
    out
}

fn service(
    inner: Arc<Scripted>,
    max_batch: usize,
    max_wait: Duration,
    cache_entries: usize,
) -> BatchedEvaluator<TicTacToe> {
    BatchedEvaluator::new(
        inner,
        BatchOptions {
            max_batch,
            max_wait,
            cache_entries,
            workers: 1,
        },
    )
    .unwrap()
}

/// The service's statistics, after checking that they add up: every
/// position is answered one way, every batch and request is counted.
fn checked_stats(svc: &BatchedEvaluator<TicTacToe>) -> BatchStats {
    let s = svc.stats();
    assert_eq!(
        s.positions,
        s.cache_hits + s.deduplicated + s.evaluated + s.dropped,
        "{s}"
    );
    assert_eq!(
        s.batch_sizes.iter().map(|b| b.count).sum::<u64>(),
        s.batches
    );
    assert_eq!(s.latency.count, s.requests);
    s
}

#[test]
fn batches_never_exceed_max_batch_and_answers_are_the_callers_own() {
    let inner = Arc::new(Scripted::default());
    let svc = Arc::new(service(inner.clone(), 4, Duration::from_millis(2), 0));
    let pool = positions(200);
    let threads: Vec<_> = (0..12)
        .map(|t| {
            let (svc, pool) = (svc.clone(), pool.clone());
            std::thread::spawn(move || {
                let mut asked = 0;
                for r in 0..40 {
                    // 1 to 7 positions, duplicates included: pieces of 4.
                    let len = 1 + (t + r) % 7;
                    let req: Vec<TicTacToe> = (0..len)
                        .map(|i| pool[(t * 31 + r * 7 + i * i) % pool.len()])
                        .collect();
                    let got = svc.evaluate_full(&req).unwrap();
                    let want: Vec<Evaluation> = req.iter().map(eval_of).collect();
                    assert_eq!(got, want);
                    asked += len;
                }
                asked
            })
        })
        .collect();
    let asked: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let batches = inner.batches();
    assert!(batches.iter().all(|&b| (1..=4).contains(&b)), "{batches:?}");
    let s = checked_stats(&svc);
    assert_eq!(s.requests, 12 * 40);
    assert_eq!(s.positions, asked as u64);
    assert_eq!(s.batches, batches.len() as u64);
    assert_eq!(s.evaluated, batches.iter().sum::<usize>() as u64);
    assert!(s.largest_batch <= 4);
    assert_eq!((s.dropped, s.failed_batches, s.cache_hits), (0, 0, 0));
}

#[test]
fn a_lone_request_is_answered_after_about_max_wait() {
    let inner = Arc::new(Scripted::default());
    let wait = Duration::from_millis(40);
    let svc = service(inner.clone(), 64, wait, 0);
    let p = positions(3);
    let t = Instant::now();
    assert_eq!(svc.evaluate(&p[..1]).unwrap(), vec![value_of(&p[0])]);
    let took = t.elapsed();
    assert!(took >= wait, "{took:?}");
    assert!(took < wait + Duration::from_millis(400), "{took:?}");
    let s = svc.stats();
    assert!(s.queue_wait.p50_us >= 0.9 * wait.as_micros() as f64, "{s}");
    // No wait at all: answered at once.
    let svc = service(inner, 64, Duration::ZERO, 0);
    let t = Instant::now();
    svc.evaluate(&p[1..2]).unwrap();
    assert!(t.elapsed() < Duration::from_millis(200));
}

#[test]
fn a_full_batch_goes_without_waiting() {
    let inner = Arc::new(Scripted::default());
    let svc = Arc::new(service(inner.clone(), 4, Duration::from_secs(1), 0));
    let p = positions(4);
    let t = Instant::now();
    assert_eq!(
        svc.evaluate(&p).unwrap(),
        p.iter().map(value_of).collect::<Vec<_>>()
    );
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
    // Four callers of one position each fill a batch together.
    let t = Instant::now();
    let q = positions(12)[8..].to_vec();
    let threads: Vec<_> = q
        .iter()
        .cloned()
        .map(|g| {
            let svc = svc.clone();
            std::thread::spawn(move || svc.evaluate(&[g]).unwrap()[0])
        })
        .collect();
    for (h, g) in threads.into_iter().zip(&q) {
        assert_eq!(h.join().unwrap(), value_of(g));
    }
    assert!(
        t.elapsed() < Duration::from_millis(800),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(inner.batches(), vec![4, 4]);
}

#[test]
fn large_requests_are_split_into_pieces_of_max_batch() {
    let inner = Arc::new(Scripted::default());
    let svc = service(inner.clone(), 3, Duration::ZERO, 0);
    let p = positions(10);
    let got = svc.evaluate_full(&p).unwrap();
    assert_eq!(got, p.iter().map(eval_of).collect::<Vec<_>>());
    let b = inner.batches();
    assert_eq!(b.iter().sum::<usize>(), 10);
    assert!(b.iter().all(|&n| n <= 3), "{b:?}");
    checked_stats(&svc);
}

#[test]
fn duplicates_in_a_batch_are_evaluated_once() {
    let inner = Arc::new(Scripted::default());
    let svc = service(inner.clone(), 8, Duration::ZERO, 0);
    let p = positions(3);
    let req = [p[0], p[1], p[0], p[0], p[2], p[1]];
    let got = svc.evaluate_full(&req).unwrap();
    assert_eq!(got, req.iter().map(eval_of).collect::<Vec<_>>());
    assert_eq!(inner.batches(), vec![3]);
    let s = checked_stats(&svc);
    assert_eq!((s.positions, s.deduplicated, s.evaluated), (6, 3, 3));
}

#[test]
fn cache_hits_never_reach_the_worker() {
    let inner = Arc::new(Scripted::default());
    let svc = service(inner.clone(), 8, Duration::ZERO, 100);
    let p = positions(6);
    let want: Vec<Evaluation> = p.iter().map(eval_of).collect();
    assert_eq!(svc.evaluate_full(&p).unwrap(), want);
    assert_eq!(inner.batches(), vec![6]);
    assert_eq!(svc.evaluate_full(&p).unwrap(), want);
    assert_eq!(inner.batches(), vec![6], "all hits: no batch");
    let s = checked_stats(&svc);
    assert_eq!((s.cache_hits, s.positions, s.cache_entries), (6, 12, 6));
    assert_eq!(s.cache_hit_rate, 0.5);
    // Even with the worker gone, hits are answered.
    svc.shutdown();
    assert!(!svc.is_running());
    assert_eq!(svc.evaluate_full(&p[2..4]).unwrap(), want[2..4].to_vec());
    // A miss is not.
    let q = positions(7);
    let e = svc.evaluate(&q[6..]).unwrap_err();
    assert!(e.to_string().contains("stopped"), "{e}");
    let s = checked_stats(&svc);
    assert_eq!((s.dropped, s.failed_requests), (1, 1));
}

#[test]
fn an_empty_request_is_answered_empty() {
    let svc = service(Arc::new(Scripted::default()), 8, Duration::ZERO, 0);
    assert!(svc.evaluate(&[]).unwrap().is_empty());
    assert_eq!(svc.stats().requests, 0);
    assert!(svc.has_policy());
    assert_eq!(svc.name(), "batched(scripted)");
}

/// Runs `f` on a thread and fails (instead of hanging) if it takes longer
/// than `secs`.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("no answer in time: the service hangs (or the closure panicked)")
}

fn failing_batch_reaches_every_caller(mode: u8, needle: &'static str) {
    within(30, move || {
        let inner = Arc::new(Scripted {
            delay: Duration::from_millis(5),
            ..Default::default()
        });
        inner.mode.store(mode, Ordering::SeqCst);
        let svc = Arc::new(service(inner.clone(), 16, Duration::from_millis(20), 16));
        let p = positions(8);
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (svc, g) = (svc.clone(), p[i]);
                std::thread::spawn(move || svc.evaluate(&[g]))
            })
            .collect();
        for h in threads {
            let e = h.join().unwrap().unwrap_err();
            assert!(e.to_string().contains(needle), "{e}");
            assert!(e.to_string().contains("scripted"), "{e}");
        }
        let s = checked_stats(&svc);
        assert!(s.failed_batches >= 1);
        assert_eq!(s.failed_batches, s.batches);
        assert_eq!(s.failed_requests, 8);
        assert_eq!(s.cache_entries, 0, "no failed answer is cached");
        // The worker goes on.
        inner.mode.store(OK, Ordering::SeqCst);
        assert_eq!(
            svc.evaluate(&p[..2]).unwrap(),
            vec![value_of(&p[0]), value_of(&p[1])]
        );
    });
}

#[test]
fn an_inner_error_reaches_every_caller_of_the_batch() {
    failing_batch_reaches_every_caller(FAIL, "device lost");
}

#[test]
fn an_inner_panic_becomes_an_error_for_every_caller() {
    failing_batch_reaches_every_caller(PANIC, "panicked: kernel exploded");
}

#[test]
fn a_short_answer_is_an_error() {
    failing_batch_reaches_every_caller(SHORT, "gave");
}

#[test]
fn shutdown_answers_waiting_callers_with_an_error() {
    within(30, || {
        let inner = Arc::new(Scripted {
            gate: Some((Mutex::new(false), Condvar::new())),
            ..Default::default()
        });
        let svc = Arc::new(service(inner.clone(), 1, Duration::ZERO, 0));
        let p = positions(4);
        // The first request blocks the worker inside the inner evaluator.
        let first = {
            let (svc, g) = (svc.clone(), p[0]);
            std::thread::spawn(move || svc.evaluate(&[g]))
        };
        while inner.batches().is_empty() {
            std::thread::sleep(Duration::from_millis(1));
        }
        // Three more wait in the queue.
        let queued: Vec<_> = p[1..]
            .iter()
            .cloned()
            .map(|g| {
                let svc = svc.clone();
                std::thread::spawn(move || svc.evaluate(&[g]))
            })
            .collect();
        while svc.stats().positions < 4 {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        let stopper = {
            let svc = svc.clone();
            std::thread::spawn(move || svc.shutdown())
        };
        while svc.is_running() {
            std::thread::sleep(Duration::from_millis(1));
        }
        inner.open();
        stopper.join().unwrap();
        // The batch being evaluated is answered; the queued callers are not.
        assert_eq!(first.join().unwrap().unwrap(), vec![value_of(&p[0])]);
        for h in queued {
            let e = h.join().unwrap().unwrap_err();
            assert!(e.to_string().contains("stopped"), "{e}");
        }
        assert_eq!(inner.batches(), vec![1]);
        let s = checked_stats(&svc);
        assert_eq!((s.dropped, s.failed_requests, s.evaluated), (3, 3, 1));
    });
}

#[test]
fn dropping_the_service_ends_its_worker_thread() {
    within(30, || {
        for _ in 0..20 {
            let dropped = Arc::new(AtomicBool::new(false));
            let inner = Arc::new(Scripted {
                _dropped: Some(DropFlag(dropped.clone())),
                ..Default::default()
            });
            let svc = service(inner.clone(), 8, Duration::from_millis(1), 8);
            svc.evaluate(&positions(2)).unwrap();
            drop(inner);
            assert!(!dropped.load(Ordering::SeqCst));
            // Dropping joins the worker, which held the last reference to
            // the inner evaluator.
            drop(svc);
            assert!(dropped.load(Ordering::SeqCst));
        }
    });
}

#[test]
fn options_are_validated_before_the_thread_starts() {
    let e = BatchedEvaluator::new(
        Arc::new(Scripted::default()) as Arc<dyn Evaluator<TicTacToe>>,
        BatchOptions {
            max_batch: 0,
            ..Default::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(e.field(), Some("max_batch"));
}

/// Sleeps a known time in each phase an evaluator reports.
struct Phased;

const PHASE_MS: [u64; 3] = [3, 6, 1];

impl Evaluator<TicTacToe> for Phased {
    fn evaluate(&self, states: &[TicTacToe]) -> Result<Vec<f32>, InferError> {
        Ok(states.iter().map(value_of).collect())
    }

    fn evaluate_full_split(
        &self,
        states: &[TicTacToe],
        split: &mut crate::infer::EvalSplit,
    ) -> Result<Vec<Evaluation>, InferError> {
        let nap = |ms| move || std::thread::sleep(Duration::from_millis(ms));
        split.time(|s| &mut s.encode, nap(PHASE_MS[0]));
        split.time(|s| &mut s.network, nap(PHASE_MS[1]));
        split.time(|s| &mut s.finish, nap(PHASE_MS[2]));
        Ok(states.iter().map(eval_of).collect())
    }

    fn name(&self) -> String {
        "phased".into()
    }
}

#[test]
fn a_batch_s_time_is_split_by_phase() {
    let svc = BatchedEvaluator::new(
        Arc::new(Phased),
        BatchOptions {
            max_batch: 4,
            max_wait: Duration::ZERO,
            cache_entries: 0,
            workers: 1,
        },
    )
    .unwrap();
    for chunk in positions(12).chunks(3) {
        svc.evaluate_full(chunk).unwrap();
    }
    let s = checked_stats(&svc);
    assert_eq!(s.batches, 4);
    let got = [s.split.encode_us, s.split.network_us, s.split.finish_us];
    for (us, ms) in got.iter().zip(PHASE_MS) {
        let want = ms as f64 * 1000.0;
        // Sleeps overrun, never underrun, so the floors catch a phase charged
        // to another bucket; a loaded machine may overrun by a lot, so the
        // ceiling only catches a runaway.
        assert!(
            *us >= want && *us < want + 25_000.0,
            "{got:?} for {PHASE_MS:?} ms"
        );
    }
    // The service's own phases do no sleeping: 20 ms a batch is far more
    // than they take even on a loaded machine.
    assert!(
        s.split.form_us < 20_000.0 && s.split.reply_us < 20_000.0,
        "{:?}",
        s.split
    );
    let shown = s.to_string();
    let network = format!("network {:.0}", s.split.network_us);
    assert!(shown.contains(&network), "{shown}");

    // An evaluator that does not split its time is all network.
    let inner = Arc::new(Scripted {
        delay: Duration::from_millis(2),
        ..Scripted::default()
    });
    let svc = service(inner, 4, Duration::ZERO, 0);
    svc.evaluate_full(&positions(3)).unwrap();
    let s = checked_stats(&svc);
    assert!(
        s.split.network_us >= 2000.0 && s.split.encode_us == 0.0,
        "{:?}",
        s.split
    );
}

#[test]
fn with_two_workers_a_second_batch_is_in_flight_while_the_first_waits() {
    for workers in [1, 2] {
        within(30, move || {
            let inner = Arc::new(Scripted {
                gate: Some((Mutex::new(false), Condvar::new())),
                ..Default::default()
            });
            let svc = Arc::new(
                BatchedEvaluator::new(
                    inner.clone(),
                    BatchOptions {
                        max_batch: 1,
                        max_wait: Duration::ZERO,
                        cache_entries: 0,
                        workers,
                    },
                )
                .unwrap(),
            );
            let p = positions(5);
            let callers: Vec<_> = p
                .iter()
                .map(|&g| {
                    let svc = svc.clone();
                    std::thread::spawn(move || svc.evaluate(&[g]))
                })
                .collect();
            // Every worker enters the inner evaluator (which waits at its
            // gate), and no more batches than workers are ever in flight.
            while inner.batches().len() < workers {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(30));
            assert_eq!(inner.batches().len(), workers);
            inner.open();
            for (h, g) in callers.into_iter().zip(&p) {
                assert_eq!(h.join().unwrap().unwrap(), vec![value_of(g)]);
            }
            assert_eq!(inner.batches(), vec![1; 5]);
            let s = checked_stats(&svc);
            assert_eq!((s.batches, s.evaluated), (5, 5));
            svc.shutdown();
            assert!(!svc.is_running());
        });
    }
}
