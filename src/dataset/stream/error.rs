//! [`StreamError`]: what can go wrong while a loader is built or an epoch
//! is streamed, one variant per cause so callers can tell a bad shard from
//! a bad setting.

use crate::dataset::error::DatasetError;
use crate::util::memory::MemoryError;

/// Errors of the streaming loader.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// Reading or decoding a shard failed; the message names the file.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// Building a batch's tensors on the device failed.
    #[error("could not build the batch tensors on the device: {0}")]
    Candle(#[from] candle_core::Error),
    /// A setting of [`StreamConfig`](super::StreamConfig) is out of range.
    #[error("invalid stream loader setting `{field}`: {found}, expected {expected}")]
    InvalidArgument {
        field: &'static str,
        expected: String,
        found: String,
    },
    /// A batch or buffer size that needs more memory than there is.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// A background thread ended without finishing its work (a bug).
    #[error("the stream loader's {0} thread stopped unexpectedly")]
    Stopped(&'static str),
}
