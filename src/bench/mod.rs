//! Speed measurements, each against a named reference timed in the same
//! run: pyrimaa, OpenSpiel, PyTorch, candle's stock ops or the unbatched
//! path. Every harness takes an options struct, runs, and returns a typed
//! report that renders as the text table (`Display`) and as JSON or CSV;
//! `plies bench` only parses flags into the options and prints.
//!
//! The Python references run as child processes ([`peer`]); when one
//! cannot run, its column is left empty and the report says why.

pub mod conv;
pub mod mcts;
pub mod movegen;
pub mod peer;
pub mod playouts;
pub mod report;
pub mod td;
pub mod vs_spiel;

use std::path::PathBuf;

use crate::dataset::{DatasetError, StreamError};
use crate::encode::EncodeError;
use crate::game::GameError;
use crate::games::SupportError;
use crate::infer::batched::BatchError;
use crate::infer::InferError;
use crate::model::ModelError;
use crate::search::SearchError;
use crate::util::{AtomicWriteError, DeviceError};

/// Why a benchmark could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// An option is out of range or names something unknown; `option` is
    /// the flag, with the value given when that helps.
    #[error("{option}: {why}")]
    BadOption { option: String, why: String },

    /// The game cannot be played by this benchmark.
    #[error("{0}")]
    Unsupported(String),

    /// An input file could not be read.
    #[error("{}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A line of an input file does not parse.
    #[error("{}: line {line}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        #[source]
        source: GameError,
    },

    /// A position file holds no position.
    #[error("{}: no positions", path.display())]
    NoPositions { path: PathBuf },

    /// The dataset split to stream has no rows.
    #[error("{}: split {split} has no rows", data.display())]
    EmptySplit { data: PathBuf, split: String },

    /// The loader ended before its first batch.
    #[error("the loader gave no batch")]
    NoBatch,

    /// A kernel that always runs on this machine gave no result.
    #[error("the {0} kernel did not run")]
    KernelMissing(&'static str),

    /// A measuring thread panicked.
    #[error("a client thread panicked")]
    ClientPanicked,

    /// A step of the benchmark failed; `what` says which.
    #[error("{what}")]
    Step {
        what: String,
        #[source]
        source: Box<BenchError>,
    },

    // The library's errors, boxed: some are large, and a benchmark's
    // Result should stay small.
    #[error(transparent)]
    Candle(Box<candle_core::Error>),
    #[error(transparent)]
    Model(Box<ModelError>),
    #[error(transparent)]
    Game(Box<GameError>),
    #[error(transparent)]
    Support(Box<SupportError>),
    #[error(transparent)]
    Encode(Box<EncodeError>),
    #[error(transparent)]
    Search(Box<SearchError>),
    #[error(transparent)]
    Infer(Box<InferError>),
    #[error(transparent)]
    Batch(Box<BatchError>),
    #[error(transparent)]
    Arena(Box<crate::arena::ArenaError>),
    #[error(transparent)]
    Dataset(Box<DatasetError>),
    #[error(transparent)]
    Stream(Box<StreamError>),
    #[error(transparent)]
    Device(Box<DeviceError>),
    #[error(transparent)]
    Write(Box<AtomicWriteError>),
    #[error(transparent)]
    ThreadPool(Box<rayon::ThreadPoolBuildError>),
}

/// `From` for the boxed variants, so `?` converts the library's errors.
macro_rules! boxed_from {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl From<$t> for BenchError {
            fn from(e: $t) -> Self {
                BenchError::$v(Box::new(e))
            }
        }
    )*};
}

boxed_from! {
    candle_core::Error => Candle,
    ModelError => Model,
    GameError => Game,
    SupportError => Support,
    EncodeError => Encode,
    SearchError => Search,
    InferError => Infer,
    BatchError => Batch,
    crate::arena::ArenaError => Arena,
    DatasetError => Dataset,
    StreamError => Stream,
    DeviceError => Device,
    AtomicWriteError => Write,
    rayon::ThreadPoolBuildError => ThreadPool,
}

impl BenchError {
    pub fn bad_option(option: impl Into<String>, why: impl Into<String>) -> Self {
        BenchError::BadOption {
            option: option.into(),
            why: why.into(),
        }
    }
}

pub type Result<T, E = BenchError> = std::result::Result<T, E>;

/// Where a harness reports progress while it runs (the command line
/// passes `eprintln!`, or nothing when quiet).
pub type Notes<'a> = &'a mut dyn FnMut(&str);

#[cfg(test)]
mod tests;
