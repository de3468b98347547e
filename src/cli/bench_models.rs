//! `plies bench train` and `plies bench infer`: a value network's training
//! step and forward pass on the CPU, plies against candle's stock ops and
//! PyTorch in the same run (see [`plies::bench::models`]).

use clap::{Args, ValueEnum};
use plies::bench::models::{self, BenchModel, InferOptions, ModelBenchOptions, TrainOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// `--model` of the model benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModelArg {
    /// 6x8x8 planes -> 48 filters 4x4 (valid) -> tanh -> 384 tanh -> 1 sigmoid.
    Cnn3,
    /// The residual net's `tiny` preset on 6x8x8 planes, value head only:
    /// conv3x3 stem, 2 blocks of 32 channels (conv3x3-BN-relu-conv3x3-BN +
    /// skip), value head conv1x1-BN-relu-FC 64-relu-FC 1-sigmoid.
    ResnetTiny,
    /// The `small` preset: 6 blocks of 64 channels, value head 128.
    ResnetSmall,
}

impl From<ModelArg> for BenchModel {
    fn from(m: ModelArg) -> Self {
        match m {
            ModelArg::Cnn3 => BenchModel::Cnn3,
            ModelArg::ResnetTiny => BenchModel::ResnetTiny,
            ModelArg::ResnetSmall => BenchModel::ResnetSmall,
        }
    }
}

#[derive(Args)]
pub struct ModelBenchCommon {
    #[arg(long, value_enum, default_value = "cnn3")]
    model: ModelArg,
    /// Threads on both sides (RAYON_NUM_THREADS for plies,
    /// torch.set_num_threads for PyTorch); default: RAYON_NUM_THREADS, else
    /// the cores.
    #[arg(long)]
    threads: Option<usize>,
    /// Seconds per timed round (at least 3 iterations); the best of the
    /// rounds counts.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Python with torch (default: $PLIES_TORCH_PYTHON, then
    /// .venv-torch/bin/python, then python3).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the PyTorch column.
    #[arg(long)]
    no_torch: bool,
    /// Skip the candle stock-ops column.
    #[arg(long)]
    no_stock: bool,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct TrainBenchArgs {
    #[command(flatten)]
    common: ModelBenchCommon,
    #[arg(long, default_value_t = 1024)]
    batch: usize,
    /// Minimum training steps per timed round.
    #[arg(long, default_value_t = 10)]
    steps: usize,
}

#[derive(Args)]
pub struct InferBenchArgs {
    #[command(flatten)]
    common: ModelBenchCommon,
    /// Batch sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,64,1024")]
    batch: Vec<usize>,
}

impl ModelBenchCommon {
    fn options(self) -> (ModelBenchOptions, bool) {
        let opts = ModelBenchOptions {
            model: self.model.into(),
            threads: self.threads,
            seconds: self.seconds,
            rounds: self.rounds,
            python: self.python,
            no_torch: self.no_torch,
            no_stock: self.no_stock,
        };
        (opts, self.json)
    }
}

pub fn run_train(a: TrainBenchArgs) -> anyhow::Result<ExitCode> {
    let (common, json) = a.common.options();
    let report = models::train(&TrainOptions {
        common,
        batch: a.batch,
        steps: a.steps,
    })?;
    super::bench::print_report(&report, json)
}

pub fn run_infer(a: InferBenchArgs) -> anyhow::Result<ExitCode> {
    let (common, json) = a.common.options();
    let report = models::infer(&InferOptions {
        common,
        batches: a.batch,
    })?;
    super::bench::print_report(&report, json)
}
