//! The MDRNN as a player: milliseconds per policy move on 5x5, 9x9 and
//! 19x19 Atari-Go, the plain-Rust network against the candle model (the
//! reference, timed in the same run) and beside Schaul & Schmidhuber's
//! published 2 ms (5x5) and 20 ms (9x9) on a 2008 desktop; and the games
//! per second of a fitness evaluation (a network against NAIVE, all
//! threads), the cost that bounds evolution.

use std::fmt;
use std::time::Instant;

use super::Result;
use crate::encode::Encoder;
use crate::evolve::fitness::scores_against;
use crate::game::{AtariGo, Game};
use crate::games::GameSupport;
use crate::infer::plan::Precision;
use crate::infer::{weights_evaluator, weights_evaluator_on, BackendChoice};
use crate::model::{seeded_tensors, MdrnnConfig, ModelConfig};
use crate::search::{NaivePlayer, Player, PolicyPlayer};
use crate::util::seeded_rng;
use candle_core::Device;
use std::sync::Arc;

pub struct PolicyBenchOptions {
    pub sizes: Vec<usize>,
    /// Hidden units per swiping unit (10: the paper's network).
    pub hidden: usize,
    /// Moves timed per board size and network.
    pub moves: usize,
    /// Fitness games timed per training size (5x5 and 7x7).
    pub fitness_games: usize,
}

pub struct PolicyMoveRow {
    pub size: usize,
    pub plain_ms: f64,
    pub candle_ms: f64,
    /// The paper's figure for this size, where it gives one.
    pub paper_ms: Option<f64>,
}

pub struct FitnessRow {
    pub size: usize,
    pub games: usize,
    pub games_per_s: f64,
}

pub struct PolicyBenchReport {
    pub hidden: usize,
    pub moves: Vec<PolicyMoveRow>,
    pub fitness: Vec<FitnessRow>,
    pub threads: usize,
}

/// The paper's milliseconds per move.
fn paper_ms(size: usize) -> Option<f64> {
    match size {
        5 => Some(2.0),
        9 => Some(20.0),
        _ => None,
    }
}

/// Positions `size` random moves into seeded random games.
fn positions(size: usize, n: usize) -> Vec<AtariGo> {
    let mut rng = seeded_rng(21, size as u64);
    let mut out = Vec::new();
    while out.len() < n {
        let mut g = AtariGo::with_size(size).expect("a board size of 5..=19");
        let mut scratch = Vec::new();
        for _ in 0..size {
            if g.outcome().is_some() {
                break;
            }
            let mv = g.random_move(&mut rng, &mut scratch).expect("a move");
            g.play(mv);
        }
        if g.outcome().is_none() {
            out.push(g);
        }
    }
    out
}

fn ms_per_move(player: &dyn Player<AtariGo>, states: &[AtariGo]) -> Result<f64> {
    let mut rng = seeded_rng(22, 0);
    let t = Instant::now();
    for s in states {
        player.choose(s, &mut rng)?;
    }
    Ok(t.elapsed().as_secs_f64() * 1e3 / states.len() as f64)
}

pub fn run(opts: &PolicyBenchOptions) -> Result<PolicyBenchReport> {
    if let Some(bad) = opts.sizes.iter().find(|s| !(5..=19).contains(*s)) {
        return Err(super::BenchError::bad_option(
            "--sizes",
            format!("{bad}: Atari-Go is played on 5x5 to 19x19"),
        ));
    }
    if opts.moves == 0 || opts.fitness_games == 0 {
        return Err(super::BenchError::bad_option(
            "--moves/--fitness-games",
            "must be at least 1",
        ));
    }
    let device = Device::Cpu;
    let mut moves = Vec::new();
    for &size in &opts.sizes {
        let model = ModelConfig::Mdrnn(MdrnnConfig::stones(size, opts.hidden));
        let tensors = seeded_tensors(&model, &mut seeded_rng(23, 0), &device)?;
        let encoder =
            |size| -> Result<Box<dyn Encoder<AtariGo>>> { Ok(AtariGo::encoder("stones-2", size)?) };
        let plain = weights_evaluator(encoder(size)?, &model, &tensors, &device, "plain")?;
        let candle = weights_evaluator_on(
            encoder(size)?,
            &model,
            &tensors,
            &device,
            BackendChoice::Candle,
            Precision::F32,
            "candle",
        )?;
        let states = positions(size, opts.moves);
        let plain = PolicyPlayer::new(plain, 0.0, "plain")?;
        let candle = PolicyPlayer::new(candle, 0.0, "candle")?;
        moves.push(PolicyMoveRow {
            size,
            plain_ms: ms_per_move(&plain, &states)?,
            candle_ms: ms_per_move(&candle, &states)?,
            paper_ms: paper_ms(size),
        });
    }
    let mut fitness = Vec::new();
    for size in [5, 7] {
        let model = ModelConfig::Mdrnn(MdrnnConfig::stones(size, opts.hidden));
        let tensors = seeded_tensors(&model, &mut seeded_rng(24, 0), &device)?;
        let eval = weights_evaluator(
            AtariGo::encoder("stones-2", size)?,
            &model,
            &tensors,
            &device,
            "net",
        )?;
        let players: Vec<Arc<dyn Player<AtariGo>>> =
            vec![Arc::new(PolicyPlayer::new(eval, 0.0, "net")?)];
        let naive: Arc<dyn Player<AtariGo>> = Arc::new(NaivePlayer);
        let t = Instant::now();
        scores_against(&players, &naive, opts.fitness_games, size, 25, &[0])
            .map_err(|e| super::BenchError::Unsupported(e.to_string()))?;
        fitness.push(FitnessRow {
            size,
            games: opts.fitness_games,
            games_per_s: opts.fitness_games as f64 / t.elapsed().as_secs_f64(),
        });
    }
    Ok(PolicyBenchReport {
        hidden: opts.hidden,
        moves,
        fitness,
        threads: rayon::current_num_threads(),
    })
}

impl fmt::Display for PolicyBenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "MDRNN policy move, k = {} ({} weights), Atari-Go, 1 thread",
            self.hidden,
            self.hidden * self.hidden + 4 * self.hidden
        )?;
        writeln!(
            f,
            "{:<7} {:>14} {:>14} {:>10} {:>12} {:>14}",
            "board", "plain ms", "candle ms", "ratio", "paper ms", "paper/plain"
        )?;
        for r in &self.moves {
            let paper = r.paper_ms.map_or("-".into(), |p| format!("{p:.1}"));
            let vs_paper = r
                .paper_ms
                .map_or("-".into(), |p| format!("{:.0}x", p / r.plain_ms));
            writeln!(
                f,
                "{:<7} {:>14.4} {:>14.4} {:>9.1}x {:>12} {:>14}",
                format!("{0}x{0}", r.size),
                r.plain_ms,
                r.candle_ms,
                r.candle_ms / r.plain_ms,
                paper,
                vs_paper
            )?;
        }
        writeln!(f, "fitness games against naive ({} threads):", self.threads)?;
        for r in &self.fitness {
            writeln!(
                f,
                "  {0}x{0}: {1} games, {2:.0} games/s",
                r.size, r.games, r.games_per_s
            )?;
        }
        Ok(())
    }
}

impl super::report::Report for PolicyBenchReport {
    fn json(&self) -> serde_json::Result<String> {
        let moves: Vec<_> = self
            .moves
            .iter()
            .map(|r| {
                serde_json::json!({"size": r.size, "plain_ms": r.plain_ms,
                    "candle_ms": r.candle_ms, "paper_ms": r.paper_ms})
            })
            .collect();
        let fitness: Vec<_> = self
            .fitness
            .iter()
            .map(|r| serde_json::json!({"size": r.size, "games": r.games, "games_per_s": r.games_per_s}))
            .collect();
        Ok(serde_json::json!({"hidden": self.hidden, "moves": moves,
            "fitness": fitness, "threads": self.threads})
        .to_string())
    }
}
