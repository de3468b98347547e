//! The step-level Arimaa alpha-beta against the full-move alpha-beta on
//! the same positions at the same depth (4 steps = 1 turn, 8 steps = 2
//! turns), both with material: nodes per second of each (steps for the
//! step search, whole turns for the full-move search), time per position,
//! the ratios, and how many positions both scored alike. Goal threats are
//! off in the step search here, so both look at the same positions.

use std::fmt;
use std::time::Instant;

use super::report::Report;
use super::{BenchError, Result};
use crate::game::arimaa::Arimaa;
use crate::game::Game;
use crate::games::GameSupport;
use crate::infer::hand::arimaa_material::evaluate as material;
use crate::search::alphabeta::{search, SearchLimits};
use crate::search::steps::{step_search, PieceSquareEval, StepLimits, StepScorer};
use crate::util::seeded_rng;
use rand::RngExt;

pub struct StepBenchOptions {
    /// Positions searched, from random-step games of 2 to 40 turns.
    pub positions: usize,
    /// Depth in turns (1 or 2): the step search goes 4 steps a turn.
    pub turns: u32,
    pub seed: u64,
}

/// One search's totals over all positions.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct SearchTotals {
    pub nodes: u64,
    pub seconds: f64,
}

impl SearchTotals {
    pub fn nodes_per_s(&self) -> f64 {
        self.nodes as f64 / self.seconds.max(1e-9)
    }
}

#[derive(Debug, serde::Serialize)]
pub struct StepBenchReport {
    pub positions: usize,
    pub turns: u32,
    pub seed: u64,
    pub steps: SearchTotals,
    pub full_move: SearchTotals,
    /// Positions where both searches found the same score.
    pub same_score: usize,
}

/// Unfinished positions from seeded random-step games (the same list for
/// a seed).
pub fn bench_positions(n: usize, seed: u64) -> Vec<Arimaa> {
    let mut rng = seeded_rng(seed, 0);
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    while out.len() < n {
        let mut g = Arimaa::new();
        for _ in 0..rng.random_range(2..40) {
            match g.random_steps_move(0.1, &mut rng, &mut scratch) {
                Some(mv) if g.outcome().is_none() => g.play(mv),
                _ => break,
            }
        }
        if g.outcome().is_none() {
            out.push(g);
        }
    }
    out
}

pub fn run(opts: &StepBenchOptions) -> Result<StepBenchReport> {
    if opts.positions == 0 {
        return Err(BenchError::bad_option("--positions", "must be at least 1"));
    }
    if !(1..=2).contains(&opts.turns) {
        return Err(BenchError::bad_option(
            "--turns",
            format!("{} is not 1 or 2", opts.turns),
        ));
    }
    let positions = bench_positions(opts.positions, opts.seed);
    let scorer = StepScorer::Incremental(PieceSquareEval::material());
    let limits = StepLimits {
        goal_threats: false,
        ..StepLimits::steps(4 * opts.turns)
    };
    let mut report = StepBenchReport {
        positions: positions.len(),
        turns: opts.turns,
        seed: opts.seed,
        steps: SearchTotals::default(),
        full_move: SearchTotals::default(),
        same_score: 0,
    };
    for g in &positions {
        let t = Instant::now();
        let s = step_search(g, &scorer, &limits, |_| {});
        report.steps.seconds += t.elapsed().as_secs_f64();
        report.steps.nodes += s.nodes;
        let t = Instant::now();
        let f = search(g, None, &material, &SearchLimits::depth(opts.turns));
        report.full_move.seconds += t.elapsed().as_secs_f64();
        report.full_move.nodes += f.nodes;
        report.same_score += usize::from(s.score == f.score);
    }
    Ok(report)
}

impl fmt::Display for StepBenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.positions as f64;
        writeln!(
            f,
            "arimaa: {} positions from random-step games (seed {}), depth {} turn(s) = {} steps, material, 1 thread",
            self.positions,
            self.seed,
            self.turns,
            4 * self.turns
        )?;
        writeln!(
            f,
            "{:<22} {:>14} {:>14} {:>16}",
            "search", "nodes", "nodes/s", "ms/position"
        )?;
        for (name, t) in [
            ("steps (nodes: steps)", self.steps),
            ("full-move (nodes: turns)", self.full_move),
        ] {
            writeln!(
                f,
                "{name:<22} {:>14} {:>14.0} {:>16.2}",
                t.nodes,
                t.nodes_per_s(),
                1000.0 * t.seconds / n
            )?;
        }
        writeln!(
            f,
            "ratio steps/full-move: nodes/s {:.2}x, time per position {:.2}x",
            self.steps.nodes_per_s() / self.full_move.nodes_per_s().max(1e-9),
            self.steps.seconds / self.full_move.seconds.max(1e-9)
        )?;
        writeln!(
            f,
            "same minimax score: {} of {} positions",
            self.same_score, self.positions
        )
    }
}

impl Report for StepBenchReport {
    fn json(&self) -> serde_json::Result<String> {
        serde_json::to_string(self)
    }
}
