//! `plies bench mcts`: MCTS simulations per second with the batched
//! evaluator service against the same search calling the model one
//! position at a time, at several thread counts, in one run.

use super::bench::RowsOutput;
use clap::Args;
use plies::bench::mcts::{self, MctsOptions};
use plies::games::GameKind;
use std::process::ExitCode;

#[derive(Args)]
pub struct MctsBenchArgs {
    /// arimaa (encoder arimaa-6x8x8), amazons (amazons-units, 10x10, with
    /// global features: a resnet model) or gomoku (stones-2, 15x15).
    #[arg(long, default_value = "arimaa")]
    game: GameKind,
    /// A model preset with fresh seeded weights: cnn3, resnet-tiny, resnet-small.
    #[arg(long, default_value = "cnn3")]
    model: String,
    /// Search threads to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,8,32")]
    threads: Vec<usize>,
    /// Simulations per search.
    #[arg(long, default_value_t = 400)]
    sims: u64,
    /// Root positions (from seeded random games) searched per measurement.
    #[arg(long, default_value_t = 3)]
    positions: usize,
    /// Longest wait of the batched service for a fuller batch, microseconds.
    #[arg(long, default_value_t = 500)]
    max_wait_us: u64,
    /// Largest batch of the service (default: MCTS's own, every thread's
    /// leaf on a GPU, three quarters of the threads on the CPU).
    #[arg(long)]
    max_batch: Option<usize>,
    /// Rounds per measurement, unbatched and batched taking turns; the
    /// fastest round of each counts (a 2-core machine's timings vary from
    /// run to run by tens of percent).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    #[arg(long, default_value = "cpu")]
    device: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    out: RowsOutput,
}

pub fn run(a: MctsBenchArgs) -> anyhow::Result<ExitCode> {
    let opts = MctsOptions {
        game: a.game,
        model: a.model,
        threads: a.threads,
        sims: a.sims,
        positions: a.positions,
        max_wait_us: a.max_wait_us,
        max_batch: a.max_batch,
        rounds: a.rounds,
        device: a.device,
        seed: a.seed,
    };
    let report = mcts::run(&opts, &mut |note| eprintln!("{note}"))?;
    a.out.emit(&report, || report.csv())?;
    Ok(ExitCode::SUCCESS)
}
