//! `plies bench device`: the GPU check's benchmarks on any device, against
//! PyTorch on the same device (see [`plies::bench::device`]).

use clap::Args;
use plies::bench::device::{self, DeviceBenchOptions};
use plies::bench::report::Report;
use plies::util::write_atomic;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct DeviceBenchArgs {
    /// cpu, cuda, cuda:N or metal.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Tiny sizes, to check the whole path on a CPU (figures not to quote).
    #[arg(long)]
    quick: bool,
    /// Folder for the report (device-bench.txt, device-bench.json) and the
    /// checkpoints and inputs PyTorch reads (under work/).
    #[arg(long, default_value = "target/device-bench")]
    out: PathBuf,
    /// Python with torch and safetensors (default: $PLIES_TORCH_PYTHON,
    /// then .venv-torch/bin/python, then python3).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip PyTorch.
    #[arg(long)]
    no_torch: bool,
    /// Only these networks, comma-separated (to run the plan in pieces).
    #[arg(long, value_delimiter = ',')]
    nets: Vec<String>,
    /// Skip the MCTS rows.
    #[arg(long)]
    no_mcts: bool,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the JSON instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn run(a: DeviceBenchArgs) -> anyhow::Result<ExitCode> {
    let report = device::run(
        &DeviceBenchOptions {
            device: a.device,
            quick: a.quick,
            work: a.out.join("work"),
            python: a.python,
            no_torch: a.no_torch,
            nets: a.nets,
            no_mcts: a.no_mcts,
            seed: a.seed,
        },
        &mut |note| eprintln!("{note}"),
    )?;
    let text = report.to_string();
    let json = report.json()?;
    write_atomic(a.out.join("device-bench.txt"), text.as_bytes())?;
    write_atomic(a.out.join("device-bench.json"), json.as_bytes())?;
    eprintln!(
        "wrote {0}/device-bench.txt and {0}/device-bench.json",
        a.out.display()
    );
    super::bench::print_report(&report, a.json)
}
