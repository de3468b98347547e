//! TD(lambda) updates per second: the plain-Rust learner against the same
//! update through candle's autograd, on the same network and games.

use std::fmt;
use std::time::Instant;

use rand::RngExt;

use super::Result;
use crate::model::{Activation, MlpConfig, NativeMlp, WeightInit};
use crate::train::{CandleTdLearner, TdConfig, TdGame, TdLearner};
use crate::util::seeded_rng;

pub struct TdOptions {
    /// Hidden units of the 9-H-1 network.
    pub hidden: usize,
    /// Games per timing (each of 5 to 9 positions).
    pub games: usize,
}

pub struct TdReport {
    pub hidden: usize,
    pub positions: usize,
    pub candle_positions_per_s: f64,
    pub plain_positions_per_s: f64,
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

pub fn run(opts: &TdOptions) -> Result<TdReport> {
    let cfg = MlpConfig {
        inputs: 9,
        hidden: vec![opts.hidden],
        activation: Activation::Elliott { beta: 5.0 },
        init: WeightInit::Uniform { a: 0.2 },
    };
    let games = random_games(opts.games);
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
    Ok(TdReport {
        hidden: opts.hidden,
        positions,
        candle_positions_per_s: positions as f64 / candle_s,
        plain_positions_per_s: positions as f64 / native_s,
    })
}

impl TdReport {
    /// Plain Rust over the candle reference.
    pub fn ratio(&self) -> f64 {
        self.plain_positions_per_s / self.candle_positions_per_s
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"network": format!("9-{}-1", self.hidden), "positions": self.positions,
            "candle_autograd_positions_per_s": self.candle_positions_per_s,
            "plain_rust_positions_per_s": self.plain_positions_per_s,
            "ratio": self.ratio()})
    }
}

impl fmt::Display for TdReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "TD(lambda) updates, 9-{}-1 Elliott MLP, {} positions, 1 thread",
            self.hidden, self.positions
        )?;
        writeln!(f, "{:<34} {:>14}", "learner", "positions/s")?;
        writeln!(
            f,
            "{:<34} {:>14.0}",
            "candle autograd (reference)", self.candle_positions_per_s
        )?;
        writeln!(
            f,
            "{:<34} {:>14.0}",
            "plain Rust (plies train td)", self.plain_positions_per_s
        )?;
        writeln!(f, "ratio: {:.1}x", self.ratio())
    }
}

impl super::report::Report for TdReport {
    fn json(&self) -> serde_json::Result<String> {
        Ok(self.to_json().to_string())
    }
}
