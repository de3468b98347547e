//! `plies bench conv`: the direct 3x3 convolution kernel against im2col
//! plus gemm on the same data, in one run.

use clap::Args;
use plies::bench::conv::{self, ConvOptions};
use std::process::ExitCode;

#[derive(Args)]
pub struct ConvBenchArgs {
    /// Channels (in = out), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "32,64,128")]
    channels: Vec<usize>,
    /// Board side (square boards).
    #[arg(long, default_value_t = 8)]
    board: usize,
    #[arg(long, default_value_t = 256)]
    batch: usize,
    /// Timed repetitions; the fastest counts.
    #[arg(long, default_value_t = 10)]
    rounds: usize,
    #[arg(long)]
    json: bool,
}

pub fn run(a: ConvBenchArgs) -> anyhow::Result<ExitCode> {
    let report = conv::run(&ConvOptions {
        channels: a.channels,
        board: a.board,
        batch: a.batch,
        rounds: a.rounds,
    })?;
    super::bench::print_report(&report, a.json)
}
