use super::bench_evaluator::EvaluatorBenchArgs;
use super::bench_loader::LoaderBenchArgs;
use super::bench_models::{InferBenchArgs, TrainBenchArgs};
use super::bench_playouts::PlayoutsArgs;
use clap::{Args, Subcommand};
use plies::bench::mlp_eval::{self, MlpEvalOptions};
use plies::bench::movegen::{self, MovegenOptions};
use plies::bench::report::{write_csv, Report};
use plies::bench::td::{self, TdOptions};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum BenchCmd {
    /// TD(lambda) updates per second: the plain-Rust learner against the
    /// same update through candle's autograd, on the same network and games.
    Td(TdBenchArgs),
    /// Values per second of a one-hidden-layer Elliott MLP on encoded
    /// Amazons positions, one at a time as a search asks: the evaluators'
    /// input-major copy that skips zero inputs against the learner's
    /// row-major dense pass, same weights and inputs.
    Mlp(MlpBenchArgs),
    /// MCTS simulations per second with the batched evaluator service
    /// against the same search calling the model one position at a time,
    /// at 1, 2, 8 and 32 threads (a fresh seeded cnn3 or resnet).
    Mcts(super::bench_mcts::MctsBenchArgs),
    /// plies' MCTS against OpenSpiel's MCTS bot at the same simulations and
    /// at the same time per move: equity, Elo, ms per move and games/s.
    VsSpiel(super::bench_vs_spiel::VsSpielArgs),
    /// Distinct full moves per second (and single steps per second) for
    /// each position of a file, on one thread. `scripts/bench_arimaa_movegen.sh`
    /// times pyrimaa on the same file in the same run and prints the ratio.
    Movegen(MovegenBenchArgs),
    /// Uniformly random games from the start, one thread: games/s, moves/s
    /// and mean length. `scripts/bench_playouts.sh` times OpenSpiel on the
    /// same games in the same run and prints the ratio.
    Playouts(PlayoutsArgs),
    /// Streaming loader positions/s (f32 tensors on the device) against
    /// cnn3's training step rate on the same batch size, and against a
    /// pyarrow + numpy loader (`scripts/bench_loader_pyarrow.py`) run on the
    /// same shards in the same run; peak RSS of each side.
    Loader(LoaderBenchArgs),
    /// Training steps of a value network on the CPU, positions/s: plies'
    /// fused kernels, candle's stock ops and PyTorch
    /// (`scripts/bench_torch_models.py`) in the same run, with the ratios.
    Train(TrainBenchArgs),
    /// Forward passes of a value network on the CPU at several batch sizes,
    /// positions/s: plies, candle's stock ops and PyTorch in the same run.
    Infer(InferBenchArgs),
    /// The 3x3 convolution kernel of the residual nets (direct register
    /// tiles) against im2col plus gemm on the same data: GFLOP/s of the
    /// forward pass and the weight gradient, and the ratio.
    Conv(super::bench_conv::ConvBenchArgs),
    /// The batched evaluator service against every client calling the
    /// model itself: positions/s and latency p50/p99 by client threads and
    /// max_batch, with the ratio, and PyTorch's forward pass at the same
    /// batch sizes (through `plies bench infer`), in one run.
    Evaluator(EvaluatorBenchArgs),
    /// The MDRNN as a player: ms per policy move on 5x5, 9x9 and 19x19
    /// (plain Rust against the candle model, beside the paper's 2 ms / 20
    /// ms) and fitness games per second against naive.
    Policy(PolicyBenchArgs),
    /// The GPU check's benchmarks on any device: inference positions/s of
    /// cnn3, two residual nets and four MDRNNs at several batch sizes (f32
    /// and bf16), training positions/s, and MCTS with the batched evaluator
    /// against unbatched; PyTorch eager and torch.compile on the same
    /// device, weights and inputs in the same run; the targets marked.
    Device(super::bench_device::DeviceBenchArgs),
    /// Arimaa's step-level alpha-beta against the full-move alpha-beta on
    /// the same positions at the same depth (1 turn = 4 steps, 2 turns = 8
    /// steps), both with material: nodes/s and ms per position of each,
    /// the ratio, and how many positions both scored alike.
    Steps(StepsBenchArgs),
}

#[derive(Args)]
pub struct StepsBenchArgs {
    /// Positions from seeded random-step games.
    #[arg(long, default_value_t = 20)]
    positions: usize,
    /// Depth in turns: 1 or 2.
    #[arg(long, default_value_t = 1)]
    turns: u32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    json: bool,
}

fn bench_steps(a: StepsBenchArgs) -> anyhow::Result<ExitCode> {
    let report = plies::bench::step_search::run(&plies::bench::step_search::StepBenchOptions {
        positions: a.positions,
        turns: a.turns,
        seed: a.seed,
    })?;
    print_report(&report, a.json)
}

#[derive(Args)]
pub struct PolicyBenchArgs {
    #[arg(long, value_delimiter = ',', default_value = "5,9,19")]
    sizes: Vec<usize>,
    #[arg(long, default_value_t = 10)]
    hidden: usize,
    /// Moves timed per board size.
    #[arg(long, default_value_t = 200)]
    moves: usize,
    /// Fitness games timed on 5x5 and 7x7.
    #[arg(long, default_value_t = 400)]
    fitness_games: usize,
    #[arg(long)]
    json: bool,
}

fn bench_policy(a: PolicyBenchArgs) -> anyhow::Result<ExitCode> {
    let report = plies::bench::policy::run(&plies::bench::policy::PolicyBenchOptions {
        sizes: a.sizes,
        hidden: a.hidden,
        moves: a.moves,
        fitness_games: a.fitness_games,
    })?;
    print_report(&report, a.json)
}

/// `--json` and `--csv` of the benchmarks that print rows.
#[derive(Args)]
pub struct RowsOutput {
    /// Print the rows as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write the rows as CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

impl RowsOutput {
    /// Prints `report`, then writes its CSV where `--csv` asks.
    pub fn emit(&self, report: &impl Report, csv: impl FnOnce() -> String) -> anyhow::Result<()> {
        print_report(report, self.json)?;
        if let Some(path) = &self.csv {
            write_csv(path, &csv())?;
        }
        Ok(())
    }
}

/// Prints a report: its JSON with `--json`, else its table.
pub fn print_report(report: &impl Report, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        println!("{}", report.json()?);
    } else {
        print!("{report}");
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct MovegenBenchArgs {
    #[arg(long, default_value = "arimaa")]
    game: plies::games::GameKind,
    /// Position lines `<side> <board>` (as `plies rules moves` reads).
    file: PathBuf,
    /// Times each position is generated; the best round counts.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Print one line per position too.
    #[arg(long)]
    per_position: bool,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct TdBenchArgs {
    #[arg(long, default_value_t = 80)]
    hidden: usize,
    /// Games per timing (each of 5 to 9 positions).
    #[arg(long, default_value_t = 2000)]
    games: usize,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct MlpBenchArgs {
    /// An Amazons encoder.
    #[arg(long, default_value = "amazons-territory")]
    encoder: String,
    #[arg(long, default_value_t = 80)]
    hidden: usize,
    /// Positions from random games of 0 to 60 plies.
    #[arg(long, default_value_t = 2000)]
    positions: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    json: bool,
}

fn bench_mlp(a: MlpBenchArgs) -> anyhow::Result<ExitCode> {
    let report = mlp_eval::run(&MlpEvalOptions {
        encoder: a.encoder,
        hidden: a.hidden,
        positions: a.positions,
        seed: a.seed,
    })?;
    print_report(&report, a.json)
}

pub fn run(cmd: BenchCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCmd::Td(a) => bench_td(a),
        BenchCmd::Mlp(a) => bench_mlp(a),
        BenchCmd::Mcts(a) => super::bench_mcts::run(a),
        BenchCmd::VsSpiel(a) => super::bench_vs_spiel::run(a),
        BenchCmd::Movegen(a) => bench_movegen(a),
        BenchCmd::Playouts(a) => super::bench_playouts::run(a),
        BenchCmd::Loader(a) => super::bench_loader::run(a),
        BenchCmd::Train(a) => super::bench_models::run_train(a),
        BenchCmd::Infer(a) => super::bench_models::run_infer(a),
        BenchCmd::Evaluator(a) => super::bench_evaluator::run(a),
        BenchCmd::Conv(a) => super::bench_conv::run(a),
        BenchCmd::Policy(a) => bench_policy(a),
        BenchCmd::Device(a) => super::bench_device::run(a),
        BenchCmd::Steps(a) => bench_steps(a),
    }
}

fn bench_movegen(a: MovegenBenchArgs) -> anyhow::Result<ExitCode> {
    let report = movegen::run(&MovegenOptions {
        game: a.game,
        file: a.file,
        rounds: a.rounds,
    })?;
    if a.per_position && !a.json {
        print!("{}", report.per_position());
    }
    print_report(&report, a.json)
}

fn bench_td(a: TdBenchArgs) -> anyhow::Result<ExitCode> {
    let report = td::run(&TdOptions {
        hidden: a.hidden,
        games: a.games,
    })?;
    print_report(&report, a.json)
}
