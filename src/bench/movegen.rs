//! Arimaa distinct full moves per second (and single steps per second) for
//! each position of a file, one thread. `scripts/bench_arimaa_movegen.sh`
//! times pyrimaa on the same file in the same run and prints the ratio.

use std::fmt;
use std::path::PathBuf;
use std::time::Instant;

use super::{BenchError, Result};
use crate::game::arimaa::{notation::parse_position_line, MoveGen};
use crate::games::GameKind;

pub struct MovegenOptions {
    pub game: GameKind,
    /// Position lines `<side> <board>` (as `plies rules moves` reads).
    pub file: PathBuf,
    /// Times each position is generated; the best round counts.
    pub rounds: usize,
}

/// One position: distinct moves, steps generated, best seconds.
pub struct PositionTiming {
    pub moves: usize,
    pub steps: u64,
    pub seconds: f64,
}

pub struct MovegenReport {
    pub rounds: usize,
    pub positions: Vec<PositionTiming>,
}

pub fn run(opts: &MovegenOptions) -> Result<MovegenReport> {
    opts.game.require(GameKind::Arimaa, "bench movegen")?;
    let text = std::fs::read_to_string(&opts.file).map_err(|source| BenchError::Read {
        path: opts.file.clone(),
        source,
    })?;
    let mut positions = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let (pos, _) = parse_position_line(t).map_err(|source| BenchError::Line {
            path: opts.file.clone(),
            line: i + 1,
            source,
        })?;
        positions.push(pos);
    }
    if positions.is_empty() {
        return Err(BenchError::NoPositions {
            path: opts.file.clone(),
        });
    }
    let rounds = opts.rounds.max(1);
    let mut gen = MoveGen::new();
    let mut rows = Vec::new();
    for pos in &positions {
        let mut best = f64::INFINITY;
        let (mut n, mut s) = (0, 0);
        for _ in 0..rounds {
            gen.reset_counters();
            let t = Instant::now();
            n = gen.count(pos);
            best = best.min(t.elapsed().as_secs_f64());
            s = gen.steps_generated;
        }
        rows.push(PositionTiming {
            moves: n,
            steps: s,
            seconds: best,
        });
    }
    Ok(MovegenReport {
        rounds,
        positions: rows,
    })
}

impl MovegenReport {
    pub fn moves(&self) -> usize {
        self.positions.iter().map(|p| p.moves).sum()
    }

    pub fn steps(&self) -> u64 {
        self.positions.iter().map(|p| p.steps).sum()
    }

    pub fn seconds(&self) -> f64 {
        self.positions.iter().map(|p| p.seconds).sum()
    }

    pub fn to_json(&self) -> serde_json::Value {
        let (moves, steps, seconds) = (self.moves(), self.steps(), self.seconds());
        serde_json::json!({
            "engine": "plies", "positions": self.positions.len(), "moves": moves, "steps": steps,
            "seconds": seconds, "positions_per_s": self.positions.len() as f64 / seconds,
            "moves_per_s": moves as f64 / seconds, "steps_per_s": steps as f64 / seconds,
        })
    }

    /// One line per position.
    pub fn per_position(&self) -> String {
        let mut out = format!("{:>4} {:>8} {:>10} {:>10}\n", "#", "moves", "steps", "ms");
        for (i, p) in self.positions.iter().enumerate() {
            out += &format!(
                "{:>4} {:>8} {:>10} {:>10.3}\n",
                i + 1,
                p.moves,
                p.steps,
                p.seconds * 1e3
            );
        }
        out
    }
}

impl fmt::Display for MovegenReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (moves, steps, seconds) = (self.moves(), self.steps(), self.seconds());
        writeln!(
            f,
            "{} positions, {moves} distinct moves, {steps} steps generated in {seconds:.3} s (best of {} rounds, 1 thread)",
            self.positions.len(),
            self.rounds
        )?;
        for (label, rate, prec) in [
            ("positions/s", self.positions.len() as f64 / seconds, 1),
            ("distinct moves/s", moves as f64 / seconds, 0),
            ("steps/s", steps as f64 / seconds, 0),
        ] {
            writeln!(f, "{label:<22} {:>14}", format!("{rate:.prec$}"))?;
        }
        Ok(())
    }
}

impl super::report::Report for MovegenReport {
    fn json(&self) -> serde_json::Result<String> {
        Ok(self.to_json().to_string())
    }
}
