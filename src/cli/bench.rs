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
    let BenchCmd::Td(a) = cmd;
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
