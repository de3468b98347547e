//! A tuning run's state, saved atomically after every iteration
//! (`tune-state.json`), and what it shows people: `weights.json`,
//! `progress.csv`, `progress.png|svg`.

use super::{TuneConfig, TuneError};
use crate::games::GameSupport;
use crate::infer::hand::{FeatureSet, WeightsFile};
use crate::report::{LineChart, Series, Table};
use crate::util::run_dir::{first_difference, Depth};
use crate::util::write_atomic;
use serde::{Deserialize, Serialize};
use std::path::Path;

const STATE_FILE: &str = "tune-state.json";

/// One measurement: the current weights against the starting ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgressRow {
    pub iteration: usize,
    /// Tuning games played so far.
    pub games: u64,
    /// Perturbations taken (the paper's method) or SPSA steps.
    pub accepted: u64,
    /// The distance the weights travelled, in weight scales.
    pub path_length: f64,
    pub score_vs_start: f64,
    pub score_lo: f64,
    pub score_hi: f64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

/// Everything a run needs to go on from where it stopped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneState {
    pub game: String,
    pub config: TuneConfig,
    pub start_weights: Vec<f32>,
    /// Iterations done.
    pub iteration: usize,
    pub weights: Vec<f32>,
    pub games: u64,
    pub accepted: u64,
    pub moved: f64,
    pub progress: Vec<ProgressRow>,
}

impl TuneState {
    /// The saved state in `out` when there is one (refused when it was
    /// made with other settings, naming the first that differs), else a
    /// fresh one at `start`.
    pub fn resume_or_new(
        out: &Path,
        cfg: &TuneConfig,
        game: &str,
        start: &[f32],
    ) -> Result<TuneState, TuneError> {
        let path = out.join(STATE_FILE);
        if !path.exists() {
            return Ok(TuneState {
                game: game.into(),
                config: cfg.clone(),
                start_weights: start.to_vec(),
                iteration: 0,
                weights: start.to_vec(),
                games: 0,
                accepted: 0,
                moved: 0.0,
                progress: Vec::new(),
            });
        }
        let bad = |why: String| TuneError::State {
            path: path.clone(),
            why,
        };
        let text =
            crate::util::text::read_text(&path).map_err(|e| bad(format!("cannot read: {e}")))?;
        let mut state: TuneState = serde_json::from_str(&text)
            .map_err(|e| bad(format!("line {}, column {}: {e}", e.line(), e.column())))?;
        let resume = |field: &str, found: String, expected: String| TuneError::Resume {
            path: path.clone(),
            field: field.into(),
            found,
            expected,
        };
        if state.game != game {
            return Err(resume("game", state.game.clone(), game.into()));
        }
        // `iterations` may differ: a run goes on to more.
        let saved = TuneConfig {
            iterations: cfg.iterations,
            ..state.config.clone()
        };
        let saved = serde_json::to_value(&saved).map_err(|e| bad(e.to_string()))?;
        let asked = serde_json::to_value(cfg).map_err(|e| bad(e.to_string()))?;
        if let Some(d) = first_difference(&saved, &asked, Depth::TopLevel) {
            return Err(resume(&d.field, d.saved_text(), d.given_text()));
        }
        if state.start_weights != start {
            return Err(resume(
                "start weights",
                "other weights".into(),
                "these".into(),
            ));
        }
        state.config.iterations = cfg.iterations;
        Ok(state)
    }

    /// Saves the state atomically.
    pub fn save(&self, out: &Path) -> Result<(), TuneError> {
        let text = serde_json::to_string(self).map_err(|e| TuneError::State {
            path: out.join(STATE_FILE),
            why: e.to_string(),
        })?;
        write_atomic(out.join(STATE_FILE), text.as_bytes())
            .map_err(crate::report::ReportError::from)?;
        Ok(())
    }

    /// `weights.json`, `progress.csv` and the progress chart.
    pub fn write_outputs<G: GameSupport>(
        &self,
        out: &Path,
        cfg: &TuneConfig,
        set: FeatureSet<G>,
    ) -> Result<(), TuneError> {
        let training = serde_json::json!({
            "made_by": "plies tune",
            "method": cfg.method,
            "iterations": self.iteration,
            "games": self.games,
            "seed": cfg.seed,
            "config": cfg,
            "score_vs_start": self.progress.last().map(|r| r.score_vs_start),
        });
        WeightsFile::new(G::NAME, &set, &self.weights, training).save(&out.join("weights.json"))?;
        let mut t = Table::with_headers([
            "iteration",
            "games",
            "accepted",
            "path_length",
            "score_vs_start",
            "score_lo",
            "score_hi",
            "wins",
            "draws",
            "losses",
        ]);
        for r in &self.progress {
            t.push_row([
                r.iteration.to_string(),
                r.games.to_string(),
                r.accepted.to_string(),
                format!("{:.4}", r.path_length),
                format!("{:.4}", r.score_vs_start),
                format!("{:.4}", r.score_lo),
                format!("{:.4}", r.score_hi),
                r.wins.to_string(),
                r.draws.to_string(),
                r.losses.to_string(),
            ]);
        }
        t.write_csv(out.join("progress.csv"))?;
        let line = |name: &str, f: fn(&ProgressRow) -> f64| {
            Series::new(
                name,
                self.progress.iter().map(|r| (r.iteration as f64, f(r))),
            )
        };
        let chart = LineChart::new(
            format!(
                "{} {}: tuned weights vs the starting ones ({} games each)",
                G::NAME,
                cfg.method,
                cfg.eval_games
            ),
            "iteration",
            "score (draw = 1/2)",
        )
        .with_reference_line("even", 0.5)
        .with_y_range(0.0, 1.0);
        let mut chart = chart;
        chart.series = vec![
            line("score", |r| r.score_vs_start),
            line("95% low", |r| r.score_lo),
            line("95% high", |r| r.score_hi),
        ];
        chart.write_png(out.join("progress.png"))?;
        chart.write_svg(out.join("progress.svg"))?;
        Ok(())
    }
}
