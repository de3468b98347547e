//! What a loop's generations measured: the gate's decision, the ratings
//! against the anchors, the time of each stage, and the reports made of
//! them (`generations.csv`, `elo.csv`, `elo.png`).

use super::super::LoopError;
use crate::arena::{EloEstimate, MatchResult};
use crate::report::{LineChart, Table};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Elo values shown for a perfect or null score in the plot.
const ELO_PLOT_LIMIT: f64 = 800.0;

/// The gate's decision.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateResult {
    pub generation: u32,
    /// What the new network played against (a player spec).
    pub opponent: String,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub score: f64,
    /// `score - z * se`, the lower confidence bound the gate uses.
    pub lower_bound: f64,
    pub promoted: bool,
}

/// One generation's network against one anchor.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AnchorResult {
    pub generation: u32,
    pub anchor: String,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub score: f64,
}

impl AnchorResult {
    /// The network's Elo over the anchor with its 95% interval (infinite
    /// for a perfect or null score, which is why it is not stored in JSON).
    pub fn elo(&self) -> EloEstimate {
        EloEstimate::from_wdl(self.wins, self.draws, self.losses).unwrap_or(EloEstimate {
            elo: 0.0,
            lo: 0.0,
            hi: 0.0,
        })
    }
}

/// Wall and CPU seconds of one generation's stages.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StageTimes {
    pub selfplay_wall: f64,
    pub selfplay_cpu: f64,
    pub train_wall: f64,
    pub train_cpu: f64,
    pub matches_wall: f64,
    pub matches_cpu: f64,
}

impl StageTimes {
    /// Self-play's share of the CPU time of self-play and training.
    pub fn selfplay_share(&self) -> f64 {
        let total = self.selfplay_cpu + self.train_cpu;
        if total > 0.0 {
            self.selfplay_cpu / total
        } else {
            0.0
        }
    }
}

/// What a finished loop did.
#[derive(Clone, Debug, Serialize)]
pub struct LoopSummary {
    pub gates: Vec<GateResult>,
    pub anchors: Vec<AnchorResult>,
    pub times: Vec<StageTimes>,
    /// The last promoted network (`None`: no network passed a gate).
    pub best: Option<PathBuf>,
}

impl LoopSummary {
    /// One row per generation: the gate and the CPU share.
    pub fn table(&self) -> Table {
        let mut t = Table::with_headers([
            "generation",
            "gate W-D-L",
            "gate score",
            "lower bound",
            "promoted",
            "self-play CPU s",
            "training CPU s",
            "self-play share",
        ]);
        for (gate, time) in self.gates.iter().zip(&self.times) {
            t.push_row([
                gate.generation.to_string(),
                format!("{}-{}-{}", gate.wins, gate.draws, gate.losses),
                format!("{:.3}", gate.score),
                format!("{:.3}", gate.lower_bound),
                gate.promoted.to_string(),
                format!("{:.1}", time.selfplay_cpu),
                format!("{:.1}", time.train_cpu),
                format!("{:.1}%", 100.0 * time.selfplay_share()),
            ]);
        }
        t
    }

    /// Elo against each anchor by generation.
    pub fn elo_table(&self) -> Table {
        let mut t = Table::with_headers([
            "generation",
            "anchor",
            "W-D-L",
            "score",
            "elo",
            "elo 95% low",
            "elo 95% high",
        ]);
        for a in &self.anchors {
            let e = a.elo();
            t.push_row([
                a.generation.to_string(),
                a.anchor.clone(),
                format!("{}-{}-{}", a.wins, a.draws, a.losses),
                format!("{:.3}", a.score),
                format!("{:.0}", e.elo),
                format!("{:.0}", e.lo),
                format!("{:.0}", e.hi),
            ]);
        }
        t
    }
}

/// The gate's decision on match `r` (the new network as A).
pub fn decide(g: u32, opponent: String, r: &MatchResult, margin: f64, z: f64) -> GateResult {
    let w = &r.total;
    let n = w.games().max(1) as f64;
    let s = w.score();
    let var = (w.wins as f64 * (1.0 - s).powi(2)
        + w.draws as f64 * (0.5 - s).powi(2)
        + w.losses as f64 * s.powi(2))
        / n;
    let lower_bound = s - z * (var / n).sqrt();
    GateResult {
        generation: g,
        opponent,
        wins: w.wins,
        draws: w.draws,
        losses: w.losses,
        score: s,
        lower_bound,
        promoted: s >= 0.5 + margin && lower_bound > 0.5,
    }
}

pub(super) fn anchor_result(g: u32, anchor: &str, r: &MatchResult) -> AnchorResult {
    let w = &r.total;
    AnchorResult {
        generation: g,
        anchor: anchor.to_string(),
        wins: w.wins,
        draws: w.draws,
        losses: w.losses,
        score: w.score(),
    }
}

/// `generations.csv`, `elo.csv` and the Elo chart `elo.png`.
pub(super) fn write_reports(dir: &Path, s: &LoopSummary) -> Result<(), LoopError> {
    s.table().write_csv(dir.join("generations.csv"))?;
    s.elo_table().write_csv(dir.join("elo.csv"))?;
    let mut chart = LineChart::new(
        "Elo of each generation's network against fixed anchors",
        "generation",
        "Elo over the anchor (clamped to +-800)",
    )
    .with_reference_line("even", 0.0);
    let mut names: Vec<&str> = s.anchors.iter().map(|a| a.anchor.as_str()).collect();
    names.dedup();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let points = s.anchors.iter().filter(|a| a.anchor == name).map(|a| {
            (
                a.generation as f64,
                a.elo().elo.clamp(-ELO_PLOT_LIMIT, ELO_PLOT_LIMIT),
            )
        });
        chart = chart.with_series(name, points);
    }
    chart.write_png(dir.join("elo.png"))?;
    Ok(())
}
