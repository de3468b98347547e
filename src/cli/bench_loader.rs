//! `plies bench loader`: the streaming loader's throughput against cnn3's
//! training step rate and a pyarrow + numpy loader on the same shards (see
//! [`plies::bench::loader`]).

use clap::Args;
use plies::bench::loader::{self, LoaderOptions};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct LoaderBenchArgs {
    /// Dataset directory.
    #[arg(long)]
    data: PathBuf,
    #[arg(long, default_value_t = 1024)]
    batch: usize,
    /// Shuffle buffer capacity in rows.
    #[arg(long, default_value_t = 65_536)]
    buffer_rows: usize,
    #[arg(long, default_value_t = 1)]
    epochs: u64,
    /// cpu, cuda, cuda:N or metal.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// train, valid, test or all.
    #[arg(long, default_value = "train")]
    split: String,
    /// Timed cnn3 training steps (after 3 warm-up steps).
    #[arg(long, default_value_t = 30)]
    train_steps: usize,
    /// Decoder threads of the loader (default: cores, at most 4).
    #[arg(long)]
    threads: Option<usize>,
    /// Check every shard's sha256 while reading.
    #[arg(long)]
    verify_sha256: bool,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Python with pyarrow and numpy (default: $PLIES_DATA_PYTHON, then
    /// .venv-data/bin/python, then python3).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the pyarrow side.
    #[arg(long)]
    no_python: bool,
    #[arg(long)]
    json: bool,
    /// Bench only: when --data holds no dataset, first write a SYNTHETIC
    /// Arimaa-shaped dataset of this many rows there (random sparse 6x8x8
    /// planes, 80-ply games, random results).
    #[arg(long, hide = true)]
    synthetic: Option<usize>,
}

pub fn run(a: LoaderBenchArgs) -> anyhow::Result<ExitCode> {
    let opts = LoaderOptions {
        data: a.data,
        batch: a.batch,
        buffer_rows: a.buffer_rows,
        epochs: a.epochs,
        device: a.device,
        split: a.split,
        train_steps: a.train_steps,
        threads: a.threads,
        verify_sha256: a.verify_sha256,
        seed: a.seed,
        python: a.python,
        no_python: a.no_python,
        synthetic: a.synthetic,
    };
    let report = loader::run(&opts, &mut |note| eprintln!("{note}"))?;
    super::bench::print_report(&report, a.json)
}
