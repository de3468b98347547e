use super::bench_evaluator::{self, EvaluatorBenchArgs};
use super::bench_loader::{self, LoaderBenchArgs};
use super::bench_models::{self, InferBenchArgs, TrainBenchArgs};
use super::bench_playouts::{self, PlayoutsArgs};
use clap::{Args, Subcommand};
use plies::model::{Activation, MlpConfig, NativeMlp, WeightInit};
use plies::train::{CandleTdLearner, TdConfig, TdGame, TdLearner};
use plies::util::seeded_rng;
use rand::RngExt;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Subcommand)]
pub enum BenchCmd {
    /// TD(lambda) updates per second: the plain-Rust learner against the
    /// same update through candle's autograd, on the same network and games.
    Td(TdBenchArgs),
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
}

#[derive(Args)]
pub struct MovegenBenchArgs {
    #[arg(long, default_value = "arimaa")]
    game: plies::games::GameKind,
    /// Position lines `<side> <board>` (as `plies rules moves` reads).
    file: std::path::PathBuf,
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

fn random_games(n: usize) -> Vec<TdGame> {
    let mut rng = seeded_rng(11, 0);
    (0..n)
        .map(|_| {
            let len = rng.random_range(5..=9);
            TdGame {
                inputs: (0..len)
                    .map(|_| (0..9).map(|_| rng.random_range(-1..=1) as f32).collect())
                    .collect(),
                signs: vec![1.0; len],
                result: rng.random_range(-1..=1) as f32,
            }
        })
        .collect()
}

pub fn run(cmd: BenchCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCmd::Td(a) => bench_td(a),
        BenchCmd::Mcts(a) => super::bench_mcts::bench_mcts(a),
        BenchCmd::VsSpiel(a) => super::bench_vs_spiel::bench_vs_spiel(a),
        BenchCmd::Movegen(a) => bench_movegen(a),
        BenchCmd::Playouts(a) => bench_playouts::bench_playouts(a),
        BenchCmd::Loader(a) => bench_loader::bench_loader(a),
        BenchCmd::Train(a) => bench_models::bench_train(a),
        BenchCmd::Infer(a) => bench_models::bench_infer(a),
        BenchCmd::Evaluator(a) => bench_evaluator::bench_evaluator(a),
        BenchCmd::Conv(a) => super::bench_conv::run(&a),
    }
}

fn bench_movegen(a: MovegenBenchArgs) -> anyhow::Result<ExitCode> {
    use anyhow::Context;
    use plies::game::arimaa::{notation::parse_position_line, MoveGen};
    a.game
        .require(plies::games::GameKind::Arimaa, "bench movegen")?;
    let text = std::fs::read_to_string(&a.file).with_context(|| a.file.display().to_string())?;
    let mut positions = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let (pos, _) = parse_position_line(t)
            .with_context(|| format!("{}: line {}", a.file.display(), i + 1))?;
        positions.push(pos);
    }
    anyhow::ensure!(!positions.is_empty(), "{}: no positions", a.file.display());
    let mut gen = MoveGen::new();
    let (mut moves, mut steps, mut seconds) = (0usize, 0u64, 0f64);
    let mut rows = Vec::new();
    for pos in &positions {
        let mut best = f64::INFINITY;
        let (mut n, mut s) = (0, 0);
        for _ in 0..a.rounds.max(1) {
            gen.reset_counters();
            let t = Instant::now();
            n = gen.count(pos);
            best = best.min(t.elapsed().as_secs_f64());
            s = gen.steps_generated;
        }
        moves += n;
        steps += s;
        seconds += best;
        rows.push((n, s, best));
    }
    let count = positions.len() as f64;
    let summary = serde_json::json!({
        "engine": "plies", "positions": positions.len(), "moves": moves, "steps": steps,
        "seconds": seconds, "positions_per_s": count / seconds,
        "moves_per_s": moves as f64 / seconds, "steps_per_s": steps as f64 / seconds,
    });
    if a.json {
        println!("{summary}");
        return Ok(ExitCode::SUCCESS);
    }
    if a.per_position {
        println!("{:>4} {:>8} {:>10} {:>10}", "#", "moves", "steps", "ms");
        for (i, (n, s, t)) in rows.iter().enumerate() {
            println!("{:>4} {n:>8} {s:>10} {:>10.3}", i + 1, t * 1e3);
        }
    }
    println!(
        "{} positions, {moves} distinct moves, {steps} steps generated in {:.3} s (best of {} rounds, 1 thread)",
        positions.len(),
        seconds,
        a.rounds.max(1)
    );
    println!(
        "{:<22} {:>14}",
        "positions/s",
        format!("{:.1}", count / seconds)
    );
    println!(
        "{:<22} {:>14}",
        "distinct moves/s",
        format!("{:.0}", moves as f64 / seconds)
    );
    println!(
        "{:<22} {:>14}",
        "steps/s",
        format!("{:.0}", steps as f64 / seconds)
    );
    Ok(ExitCode::SUCCESS)
}

fn bench_td(a: TdBenchArgs) -> anyhow::Result<ExitCode> {
    let cfg = MlpConfig {
        inputs: 9,
        hidden: vec![a.hidden],
        activation: Activation::Elliott { beta: 5.0 },
        init: WeightInit::Uniform { a: 0.2 },
    };
    let games = random_games(a.games);
    let positions: usize = games.iter().map(|g| g.inputs.len()).sum();
    let mut net = NativeMlp::new(&cfg, &mut seeded_rng(1, 0))?;
    let td = TdConfig::default();
    let device = candle_core::Device::Cpu;
    let mut candle = CandleTdLearner::new(td, &cfg, &net.to_tensors(&device)?, &device)?;
    let t = Instant::now();
    for g in &games {
        candle.learn_game(g)?;
    }
    let candle_s = t.elapsed().as_secs_f64();
    let mut learner = TdLearner::new(td, &net);
    let t = Instant::now();
    // Repeat so the faster path runs long enough to time.
    let reps = 20;
    for _ in 0..reps {
        for g in &games {
            learner.learn_game(&mut net, g);
        }
    }
    let native_s = t.elapsed().as_secs_f64() / reps as f64;
    let (c_rate, n_rate) = (positions as f64 / candle_s, positions as f64 / native_s);
    if a.json {
        println!(
            "{}",
            serde_json::json!({"network": format!("9-{}-1", a.hidden), "positions": positions,
                "candle_autograd_positions_per_s": c_rate, "plain_rust_positions_per_s": n_rate,
                "ratio": n_rate / c_rate})
        );
    } else {
        println!(
            "TD(lambda) updates, 9-{}-1 Elliott MLP, {positions} positions, 1 thread",
            a.hidden
        );
        println!("{:<34} {:>14}", "learner", "positions/s");
        println!("{:<34} {:>14.0}", "candle autograd (reference)", c_rate);
        println!("{:<34} {:>14.0}", "plain Rust (plies train td)", n_rate);
        println!("ratio: {:.1}x", n_rate / c_rate);
    }
    Ok(ExitCode::SUCCESS)
}
