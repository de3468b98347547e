//! [`StreamEpoch`]: the consumer's end of one epoch's pipeline, an
//! iterator over the assembler's output that stops and joins the threads
//! when dropped.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::thread::JoinHandle;

use super::StreamError;

/// What the assembler sends the consumer.
pub(super) enum Out<T> {
    Batch(T),
    Err(StreamError),
    End,
}

/// The batches of one epoch of a [`StreamLoader`](super::StreamLoader):
/// `Ok(batch)` items, or one `Err` (naming the shard file) after which the
/// iterator ends.
///
/// Dropping it stops and joins the background threads.
pub struct StreamEpoch<T> {
    pub(super) rx: Option<Receiver<Out<T>>>,
    pub(super) threads: Vec<JoinHandle<()>>,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) peak: Arc<AtomicUsize>,
    pub(super) done: bool,
}

impl<T> StreamEpoch<T> {
    /// The most rows the shuffle buffer has held so far this epoch.
    pub fn peak_buffer_rows(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

impl<T> Iterator for StreamEpoch<T> {
    type Item = Result<T, StreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let msg = self.rx.as_ref()?.recv();
        match msg {
            Ok(Out::Batch(b)) => Some(Ok(b)),
            Ok(Out::Err(e)) => {
                self.done = true;
                Some(Err(e))
            }
            Ok(Out::End) => {
                self.done = true;
                None
            }
            Err(_) => {
                self.done = true;
                Some(Err(StreamError::Stopped("batch assembler")))
            }
        }
    }
}

impl<T> Drop for StreamEpoch<T> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Closing the channel wakes an assembler blocked on a full channel;
        // its exit closes the decoders' channels in turn.
        drop(self.rx.take());
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
