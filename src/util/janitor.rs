//! Freeing big values off the caller's thread. An engine answers within a
//! clock, and freeing a search tree of a million nodes takes tens of
//! milliseconds: the tree goes to one background thread, which frees it
//! while the engine has already answered.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};

type Garbage = Box<dyn Send>;

/// The janitor's inbox; the thread starts with the first value sent.
fn inbox() -> Option<&'static Mutex<Sender<Garbage>>> {
    static INBOX: OnceLock<Option<Mutex<Sender<Garbage>>>> = OnceLock::new();
    INBOX
        .get_or_init(|| {
            let (tx, rx) = channel::<Garbage>();
            std::thread::Builder::new()
                .name("plies-janitor".into())
                .spawn(move || {
                    for garbage in rx {
                        drop(garbage);
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

/// Drops `value` on the janitor thread (here, when that thread cannot be
/// started or has gone).
pub fn drop_later<T: Send + 'static>(value: T) {
    let garbage: Garbage = Box::new(value);
    match inbox() {
        Some(tx) => {
            let tx = tx.lock().unwrap_or_else(|p| p.into_inner());
            // A janitor that has gone hands the value back: dropped here.
            let _ = tx.send(garbage);
        }
        None => drop(garbage),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    struct Flagged(Arc<AtomicBool>, std::thread::ThreadId);

    impl Drop for Flagged {
        fn drop(&mut self) {
            assert_ne!(std::thread::current().id(), self.1);
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn values_are_dropped_on_another_thread() {
        let dropped = Arc::new(AtomicBool::new(false));
        drop_later(Flagged(Arc::clone(&dropped), std::thread::current().id()));
        let until = Instant::now() + Duration::from_secs(10);
        while !dropped.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(dropped.load(Ordering::SeqCst));
    }
}
