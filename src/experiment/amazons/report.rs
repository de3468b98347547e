//! What the study hands back and writes: [`AmazonsExperimentReport`], the
//! tables of figure 15 and tables 4 and 5 as the CLI prints them, and the
//! files `summary.json`, `errors.csv`, `error_by_ply.csv` and
//! `equities.csv`.

use super::config::AmazonsExperimentConfig;
use super::database::DbStats;
use super::equity::EquityRow;
use super::error::Result;
use super::networks::NetResult;
use super::plots::write_error_plots;
use super::prediction_errors::ErrorRow;
use super::thesis::{is_thesis_net, SEARCHES, THESIS_NET_ERRORS};
use crate::eval::GroupedMetrics;
use crate::report::{write_json, Table};
use serde::Serialize;
use std::path::Path;

/// Everything the study measured, with the settings it ran with.
#[derive(Clone, Debug, Serialize)]
pub struct AmazonsExperimentReport {
    pub config: AmazonsExperimentConfig,
    pub database: DbStats,
    pub train_games: usize,
    pub test_games: usize,
    pub test_positions: u64,
    pub nets: Vec<NetResult>,
    /// The value networks' names (`plies train` presets).
    pub value_nets: Vec<String>,
    pub errors: Vec<ErrorRow>,
    pub equities: Vec<EquityRow>,
    pub seconds: f64,
}

/// Figure 15 as a table: test and train error of every evaluator.
pub fn error_table(report: &AmazonsExperimentReport) -> Table {
    let mut t = Table::with_headers(["evaluator", "test error", "train error", "thesis (test)"]);
    let names: Vec<&str> = report
        .errors
        .iter()
        .filter(|r| r.split == "test")
        .map(|r| r.evaluator.as_str())
        .collect();
    for name in names {
        let get = |split: &str| {
            report
                .errors
                .iter()
                .find(|r| r.evaluator == name && r.split == split)
        };
        let thesis = match get("test").and_then(|r| r.thesis) {
            Some(v) => format!("{v:.2}"),
            None if is_thesis_net(name) => {
                format!("{:.2}-{:.2}", THESIS_NET_ERRORS.0, THESIS_NET_ERRORS.1)
            }
            None => "-".into(),
        };
        t.push_row([
            name.to_string(),
            get("test").map_or("-".into(), |r| format!("{:.3}", r.error)),
            get("train").map_or("-".into(), |r| format!("{:.3}", r.error)),
            thesis,
        ]);
    }
    t
}

/// Table 4 (`opponent` "good") or 5 ("simple"): equity and its 95%
/// interval, the thesis' figure in brackets.
pub fn equity_table(report: &AmazonsExperimentReport, opponent: &str) -> Table {
    let mut headers = vec!["evaluator".to_string()];
    headers.extend(SEARCHES.iter().map(|s| format!("{s} (thesis)")));
    let mut t = Table::with_headers(headers);
    let mut names: Vec<&str> = Vec::new();
    for r in report.equities.iter().filter(|r| r.opponent == opponent) {
        if !names.contains(&r.evaluator.as_str()) {
            names.push(&r.evaluator);
        }
    }
    for name in names {
        let mut row = vec![name.to_string()];
        for s in SEARCHES {
            let cell = report
                .equities
                .iter()
                .find(|r| r.evaluator == name && r.search == s && r.opponent == opponent);
            row.push(match cell {
                Some(r) => format!(
                    "{:+.2} [{:+.2}, {:+.2}] ({})",
                    r.equity,
                    r.equity_lo,
                    r.equity_hi,
                    r.thesis.map_or("-".into(), |v| format!("{v:+.2}"))
                ),
                None => "-".into(),
            });
        }
        t.push_row(row);
    }
    t
}

/// Figures 15-17 as soon as they are measured: `errors.csv`,
/// `error_by_ply.csv` and the plots.
pub(super) fn write_error_outputs(
    out: &Path,
    rows: &[ErrorRow],
    by_ply: &[(String, String, GroupedMetrics)],
) -> Result<()> {
    let mut errors = Table::with_headers(["evaluator", "split", "positions", "error", "thesis"]);
    for r in rows {
        errors.push_row([
            r.evaluator.clone(),
            r.split.clone(),
            r.positions.to_string(),
            format!("{:.4}", r.error),
            r.thesis.map_or(String::new(), |v| format!("{v:.2}")),
        ]);
    }
    errors.write_csv(out.join("errors.csv"))?;
    let mut ply = Table::with_headers(["evaluator", "split", "ply", "positions", "error"]);
    for (name, split, m) in by_ply {
        for (k, acc) in &m.by_ply {
            let s = acc.summary();
            ply.push_row([
                name.clone(),
                split.clone(),
                k.to_string(),
                s.count.to_string(),
                s.error01.map_or(String::new(), |e| format!("{e:.4}")),
            ]);
        }
    }
    ply.write_csv(out.join("error_by_ply.csv"))?;
    write_error_plots(out, rows, by_ply)
}

/// `summary.json` and `equities.csv`: the whole report, once every cell is
/// played.
pub(super) fn write_outputs(report: &AmazonsExperimentReport) -> Result<()> {
    let out = &report.config.out;
    write_json(out.join("summary.json"), report)?;
    let mut eq = Table::with_headers([
        "evaluator",
        "search",
        "opponent",
        "spec",
        "games",
        "wins",
        "draws",
        "losses",
        "equity",
        "equity_lo",
        "equity_hi",
        "thesis",
    ]);
    for r in &report.equities {
        eq.push_row([
            r.evaluator.clone(),
            r.search.clone(),
            r.opponent.clone(),
            r.spec.clone(),
            r.games.to_string(),
            r.wins.to_string(),
            r.draws.to_string(),
            r.losses.to_string(),
            format!("{:.4}", r.equity),
            format!("{:.4}", r.equity_lo),
            format!("{:.4}", r.equity_hi),
            r.thesis.map_or(String::new(), |v| format!("{v:.2}")),
        ]);
    }
    eq.write_csv(out.join("equities.csv"))?;
    Ok(())
}
