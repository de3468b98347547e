//! Figures 16 and 17 as PNG and SVG: every evaluator's 0/1 error by ply on
//! the test set (`error_by_ply`), and the network of highest test error on
//! its train and test positions (`train_vs_test`), the thesis' sign of
//! overfitting.

use super::error::Result;
use super::prediction_errors::ErrorRow;
use super::thesis::THESIS_ERRORS;
use crate::eval::GroupedMetrics;
use crate::report::LineChart;
use std::path::Path;

/// Plies with fewer positions are left out of the plots (not the CSV).
pub(super) const MIN_PLY_POSITIONS: u64 = 5;

/// `(ply, 0/1 error)` of every ply with at least [`MIN_PLY_POSITIONS`]
/// positions and an error.
pub(super) fn ply_points(m: &GroupedMetrics) -> Vec<(f64, f64)> {
    m.by_ply
        .iter()
        .filter(|(_, a)| a.count >= MIN_PLY_POSITIONS)
        .filter_map(|(k, a)| a.summary().error01.map(|e| (*k as f64, e)))
        .collect()
}

/// Figure 17's subject: the learned evaluator (not one of the thesis' hand
/// ones) of highest test error.
pub(super) fn highest_test_error(rows: &[ErrorRow]) -> Option<&ErrorRow> {
    rows.iter()
        .filter(|r| r.split == "test" && !THESIS_ERRORS.iter().any(|(n, _)| *n == r.evaluator))
        .max_by(|a, b| a.error.total_cmp(&b.error))
}

/// Writes figures 16 and 17 to `out`; a figure with no series is skipped.
pub(super) fn write_error_plots(
    out: &Path,
    rows: &[ErrorRow],
    by_ply: &[(String, String, GroupedMetrics)],
) -> Result<()> {
    // Figure 16: every evaluator by ply on the test set.
    let mut fig16 = LineChart::new(
        "Amazons: 0/1 error of the predicted winner by ply (test set)",
        "plies played",
        "0/1 error",
    )
    .with_y_range(0.0, 1.0);
    for (name, split, m) in by_ply {
        let p = ply_points(m);
        if split == "test" && !p.is_empty() {
            fig16 = fig16.with_series(name.clone(), p);
        }
    }
    if !fig16.series.is_empty() {
        fig16.write_png(out.join("error_by_ply.png"))?;
        fig16.write_svg(out.join("error_by_ply.svg"))?;
    }
    // Figure 17: the network with the highest test error, train vs test.
    if let Some(w) = highest_test_error(rows) {
        let mut fig17 = LineChart::new(
            format!(
                "Amazons: {} (highest test error), train vs test",
                w.evaluator
            ),
            "plies played",
            "0/1 error",
        )
        .with_y_range(0.0, 1.0);
        for (name, split, m) in by_ply {
            let p = ply_points(m);
            if *name == w.evaluator && !p.is_empty() {
                fig17 = fig17.with_series(split.clone(), p);
            }
        }
        if !fig17.series.is_empty() {
            fig17.write_png(out.join("train_vs_test.png"))?;
            fig17.write_svg(out.join("train_vs_test.svg"))?;
        }
    }
    Ok(())
}
