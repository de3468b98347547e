//! `plies bench evaluator`: the batched evaluator service against the
//! unbatched path on the same model in the same run, and PyTorch's forward
//! pass at the same batch sizes (see [`plies::bench::evaluator`]).

use super::bench_models::ModelArg;
use clap::Args;
use plies::bench::evaluator::{self, EvaluatorOptions};
use plies::bench::report::write_csv;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct EvaluatorBenchArgs {
    /// The network, with fresh seeded weights, on Arimaa's 6x8x8 planes.
    #[arg(long, value_enum, default_value = "cnn3")]
    model: ModelArg,
    /// Client thread counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,8,32,64")]
    clients: Vec<usize>,
    /// The service's max_batch values, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,64,256")]
    max_batch: Vec<usize>,
    /// The service's max_wait, microseconds.
    #[arg(long, default_value_t = 200)]
    max_wait_us: u64,
    /// The service's cache (0, the default, turns it off so that every
    /// position reaches the model).
    #[arg(long, default_value_t = 0)]
    cache_entries: usize,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 0.5)]
    seconds: f64,
    /// Measurements per cell; the fastest counts (with its latencies).
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Positions taken from random Arimaa games (clients pick among them at random).
    #[arg(long, default_value_t = 4096)]
    positions: usize,
    /// Python with torch for the PyTorch column (as `plies bench infer`).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the PyTorch comparison.
    #[arg(long)]
    no_torch: bool,
    /// One JSON object on stdout instead of the tables.
    #[arg(long)]
    json: bool,
    /// Also write the rows as CSV to this file.
    #[arg(long)]
    csv: Option<PathBuf>,
}

pub fn run(a: EvaluatorBenchArgs) -> anyhow::Result<ExitCode> {
    let report = evaluator::run(&EvaluatorOptions {
        model: a.model.into(),
        clients: a.clients,
        max_batch: a.max_batch,
        max_wait_us: a.max_wait_us,
        cache_entries: a.cache_entries,
        seconds: a.seconds,
        rounds: a.rounds,
        positions: a.positions,
        python: a.python,
        no_torch: a.no_torch,
    })?;
    if let Some(path) = &a.csv {
        write_csv(path, &report.csv())?;
    }
    super::bench::print_report(&report, a.json)
}
