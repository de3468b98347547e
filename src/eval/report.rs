//! Writing an evaluation: a text table, `metrics.json`, `by_height.csv`,
//! `by_height_buckets.csv`, `by_ply.csv`, the height plot
//! (`height.png`, `height.svg`) and the error by ply (`ply.png`, `ply.svg`).

use super::{EvalError, GroupedMetrics, Metrics, MetricsAcc, HEIGHT_BUCKET_PLIES};
use crate::game::{Arimaa, Game};
use crate::report::{write_json, LineChart, Table};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Zaffetti's held-out figures for the Arimaa CNN (accuracy, MSE).
pub const ZAFFETTI_ACCURACY: f64 = 0.735;
pub const ZAFFETTI_MSE: f64 = 0.171;

/// One evaluator's results.
#[derive(Clone, Debug)]
pub struct EvaluatorResult {
    /// A short name for tables and plots (`material`, a checkpoint's folder name).
    pub name: String,
    /// What it is: `checkpoint DIR (cnn3)`, `material k=0.35 (fitted on ...)`.
    pub description: String,
    pub metrics: GroupedMetrics,
}

/// One row of a per-height or per-ply file.
#[derive(Clone, Debug, Serialize)]
pub struct GroupRow {
    pub key: u32,
    #[serde(flatten)]
    pub metrics: Metrics,
}

#[derive(Clone, Debug, Serialize)]
struct EvaluatorJson<'a> {
    name: &'a str,
    description: &'a str,
    overall: Metrics,
    by_height_bucket: Vec<GroupRow>,
}

/// What `metrics.json` holds.
#[derive(Clone, Debug, Serialize)]
struct ReportJson<'a> {
    dataset: String,
    game: String,
    split: String,
    height_bucket_plies: u32,
    draws: &'static str,
    reference: Option<serde_json::Value>,
    evaluators: Vec<EvaluatorJson<'a>>,
}

/// An evaluation of several evaluators on one dataset split.
pub struct EvalReport {
    pub dataset: String,
    pub game: String,
    pub split: String,
    pub results: Vec<EvaluatorResult>,
}

fn rows(map: &BTreeMap<u32, MetricsAcc>) -> Vec<GroupRow> {
    map.iter()
        .map(|(k, m)| GroupRow {
            key: *k,
            metrics: m.summary(),
        })
        .collect()
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.digits$}"))
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{:.1}%", 100.0 * v))
}

impl EvalReport {
    fn is_arimaa(&self) -> bool {
        self.game == Arimaa::NAME
    }

    /// The overall figures, one line per evaluator (and Zaffetti's for Arimaa).
    pub fn table(&self) -> Table {
        let mut t = Table::with_headers([
            "evaluator",
            "rows",
            "Acc",
            "MSE",
            "MAE",
            "R^2",
            "decisive",
            "draws",
        ]);
        for r in &self.results {
            let m = r.metrics.overall.summary();
            t.push_row([
                r.name.clone(),
                m.count.to_string(),
                pct(m.accuracy),
                format!("{:.4}", m.mse),
                format!("{:.4}", m.mae),
                opt(m.r2, 4),
                m.decisive.to_string(),
                m.draws.to_string(),
            ]);
        }
        if self.is_arimaa() {
            t.push_row([
                "Zaffetti 2017 CNN (paper, held out)".to_string(),
                "-".into(),
                pct(Some(ZAFFETTI_ACCURACY)),
                format!("{ZAFFETTI_MSE:.4}"),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
        }
        t
    }

    /// A table of `which` ("height", "height_bucket" or "ply") rows of every evaluator.
    pub fn group_table(&self, which: &str) -> Table {
        let key = match which {
            "ply" => "ply",
            "height_bucket" => "plies_to_end_from",
            _ => "plies_to_end",
        };
        let mut t = Table::with_headers([
            "evaluator",
            key,
            "count",
            "mse",
            "mae",
            "error01",
            "accuracy",
            "decisive",
            "draws",
        ]);
        for r in &self.results {
            let map = match which {
                "ply" => r.metrics.by_ply.clone(),
                "height_bucket" => r.metrics.by_height_bucket(HEIGHT_BUCKET_PLIES),
                _ => r.metrics.by_height.clone(),
            };
            for row in rows(&map) {
                let m = row.metrics;
                t.push_row([
                    r.name.clone(),
                    row.key.to_string(),
                    m.count.to_string(),
                    format!("{:.6}", m.mse),
                    format!("{:.6}", m.mae),
                    opt(m.error01, 6),
                    opt(m.accuracy, 6),
                    m.decisive.to_string(),
                    m.draws.to_string(),
                ]);
            }
        }
        t
    }

    /// MSE and 0/1 error by plies to the end (buckets of
    /// [`HEIGHT_BUCKET_PLIES`], plotted at the bucket's first height).
    pub fn height_chart(&self) -> LineChart {
        let mut chart = LineChart::new(
            format!(
                "Error by plies to the end ({}, {})",
                self.dataset, self.split
            ),
            format!("plies to the end (buckets of {HEIGHT_BUCKET_PLIES})"),
            "MSE / 0-1 error",
        )
        .with_y_range(0.0, 1.0);
        for r in &self.results {
            let b = r.metrics.by_height_bucket(HEIGHT_BUCKET_PLIES);
            let mse: Vec<(f64, f64)> = b
                .iter()
                .map(|(k, m)| (*k as f64, m.summary().mse))
                .collect();
            let err: Vec<(f64, f64)> = b
                .iter()
                .filter_map(|(k, m)| m.summary().error01.map(|e| (*k as f64, e)))
                .collect();
            chart = chart
                .with_series(format!("{} MSE", r.name), mse)
                .with_series(format!("{} 0/1 error", r.name), err);
        }
        if self.is_arimaa() {
            chart = chart
                .with_reference_line("paper MSE 0.171", ZAFFETTI_MSE)
                .with_reference_line("paper error 0.265", 1.0 - ZAFFETTI_ACCURACY);
        }
        chart
    }

    /// The 0/1 error of the predicted winner by ply number, one line per
    /// evaluator (Fugers 2017, figures 16 and 17).
    pub fn ply_chart(&self) -> LineChart {
        let mut chart = LineChart::new(
            format!("0/1 error by ply ({}, {})", self.dataset, self.split),
            "plies played",
            "0/1 error of the predicted winner",
        )
        .with_y_range(0.0, 1.0);
        for r in &self.results {
            let err: Vec<(f64, f64)> = r
                .metrics
                .by_ply
                .iter()
                .filter_map(|(k, m)| m.summary().error01.map(|e| (*k as f64, e)))
                .collect();
            chart = chart.with_series(r.name.clone(), err);
        }
        chart
    }

    /// `metrics.json` as a value.
    pub fn to_json(&self) -> serde_json::Value {
        let doc = ReportJson {
            dataset: self.dataset.clone(),
            game: self.game.clone(),
            split: self.split.clone(),
            height_bucket_plies: HEIGHT_BUCKET_PLIES,
            draws: "accuracy counts decisive labels only (draws, label 0.5, left out); a \
                    prediction of exactly 0.5 counts as half right",
            reference: self.is_arimaa().then(|| {
                serde_json::json!({
                    "source": "Zaffetti, Learning to evaluate Arimaa positions (held-out test set)",
                    "accuracy": ZAFFETTI_ACCURACY,
                    "mse": ZAFFETTI_MSE,
                })
            }),
            evaluators: self
                .results
                .iter()
                .map(|r| EvaluatorJson {
                    name: &r.name,
                    description: &r.description,
                    overall: r.metrics.overall.summary(),
                    by_height_bucket: rows(&r.metrics.by_height_bucket(HEIGHT_BUCKET_PLIES)),
                })
                .collect(),
        };
        serde_json::to_value(doc).unwrap_or(serde_json::Value::Null)
    }

    /// Writes every file into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), EvalError> {
        write_json(dir.join("metrics.json"), &self.to_json())?;
        self.group_table("height")
            .write_csv(dir.join("by_height.csv"))?;
        self.group_table("height_bucket")
            .write_csv(dir.join("by_height_buckets.csv"))?;
        self.group_table("ply").write_csv(dir.join("by_ply.csv"))?;
        let chart = self.height_chart();
        chart.write_png(dir.join("height.png"))?;
        chart.write_svg(dir.join("height.svg"))?;
        let ply = self.ply_chart();
        ply.write_png(dir.join("ply.png"))?;
        ply.write_svg(dir.join("ply.svg"))?;
        Ok(())
    }
}
