//! Speed measurements, each against a named reference timed in the same
//! run: pyrimaa, OpenSpiel, PyTorch, candle's stock ops or the unbatched
//! path. Every harness takes an options struct, runs, and returns a typed
//! report that renders as the text table (`Display`) and as JSON or CSV;
//! `plies bench` only parses flags into the options and prints.
//!
//! The Python references run as child processes ([`peer`]); when one
//! cannot run, its column is left empty and the report says why.

pub mod conv;
pub mod device;
pub mod evaluator;
pub mod loader;
pub mod mcts;
pub mod mlp_eval;
pub mod models;
pub mod movegen;
pub mod peer;
pub mod playouts;
pub mod policy;
pub mod report;
pub mod step_search;
pub mod td;
pub mod vs_spiel;

use std::path::PathBuf;

use candle_nn::Optimizer;

use crate::dataset::{DatasetError, StreamError};
use crate::encode::EncodeError;
use crate::game::GameError;
use crate::games::SupportError;
use crate::infer::batched::BatchError;
use crate::infer::InferError;
use crate::model::ModelError;
use crate::optim::{Momentum, MomentumConfig};
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
    Checkpoint(Box<crate::checkpoint::CheckpointError>),
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
    crate::checkpoint::CheckpointError => Checkpoint,
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

/// Names the step an error came from, as `anyhow::Context` would.
pub(crate) trait StepContext<T> {
    fn step(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Into<BenchError>> StepContext<T> for std::result::Result<T, E> {
    fn step(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| BenchError::Step {
            what: what(),
            source: Box::new(e.into()),
        })
    }
}

/// Where a harness reports progress while it runs (the command line
/// passes `eprintln!`, or nothing when quiet).
pub type Notes<'a> = &'a mut dyn FnMut(&str);

/// The optimizer of the training-step benchmarks: SGD with Nesterov
/// momentum 0.9 at learning rate 0.01, as the experiments train cnn3.
pub(crate) fn nesterov_sgd(vars: Vec<candle_core::Var>) -> Result<Momentum> {
    Ok(Momentum::new(
        vars,
        MomentumConfig {
            lr: 0.01,
            momentum: 0.9,
            nesterov: true,
            ..Default::default()
        },
    )?)
}

/// One mean-squared-error training step of `y` against `target`; the loss.
pub(crate) fn mse_step(
    opt: &mut Momentum,
    y: candle_core::Tensor,
    target: &candle_core::Tensor,
) -> Result<candle_core::Tensor> {
    let loss = (y - target)?.sqr()?.mean_all()?;
    opt.backward_step(&loss)?;
    Ok(loss)
}

#[cfg(test)]
mod tests;
