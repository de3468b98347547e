//! The ranked rows as the grid writes them: figure 4's table, the CSV and
//! the Markdown page.

use super::GridRow;
use crate::report::Table;

fn pm(m: Option<f64>, s: Option<f64>) -> String {
    match (m, s) {
        (Some(m), Some(s)) => format!("{m:.4} ± {s:.4}"),
        _ => "-".into(),
    }
}

/// Figure 4's table: rank, MSE, MAE, R^2, Acc (each ± std), then the
/// configuration.
pub fn table(rows: &[GridRow]) -> Table {
    let mut t = Table::with_headers([
        "rank",
        "MSE",
        "MAE",
        "R^2",
        "Acc",
        "Dropout",
        "Regularizer",
        "Learning Rule",
        "Kernel Shape",
        "config",
    ]);
    for r in rows {
        t.push_row([
            r.rank.to_string(),
            pm(Some(r.mse), Some(r.mse_std)),
            pm(Some(r.mae), Some(r.mae_std)),
            pm(r.r2, r.r2_std),
            pm(r.accuracy, r.accuracy_std),
            r.config.dropout_label(),
            r.config.regularizer.as_str().to_string(),
            r.config.optimizer.as_str().to_string(),
            format!("{}x{}", r.config.kernel[0], r.config.kernel[1]),
            r.id.clone(),
        ]);
    }
    t
}

/// The CSV: one number per column.
pub fn csv(rows: &[GridRow]) -> String {
    let mut t = Table::with_headers([
        "rank",
        "config",
        "dropout",
        "regularizer",
        "optimizer",
        "kernel",
        "mse",
        "mse_std",
        "mae",
        "mae_std",
        "r2",
        "r2_std",
        "accuracy",
        "accuracy_std",
        "folds",
        "positions",
    ]);
    let o = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for r in rows {
        t.push_row([
            r.rank.to_string(),
            r.id.clone(),
            r.config.dropout.to_string(),
            r.config.regularizer.as_str().to_string(),
            r.config.optimizer.as_str().to_string(),
            format!("{}x{}", r.config.kernel[0], r.config.kernel[1]),
            r.mse.to_string(),
            r.mse_std.to_string(),
            r.mae.to_string(),
            r.mae_std.to_string(),
            o(r.r2),
            o(r.r2_std),
            o(r.accuracy),
            o(r.accuracy_std),
            r.folds.to_string(),
            r.positions.to_string(),
        ]);
    }
    t.to_csv()
}

/// The table as Markdown.
pub fn markdown(rows: &[GridRow], title: &str) -> String {
    let t = table(rows);
    let mut s = format!("# {title}\n\n");
    s += &format!("| {} |\n", t.headers.join(" | "));
    s += &format!("|{}\n", " --- |".repeat(t.headers.len()));
    for r in &t.rows {
        s += &format!("| {} |\n", r.join(" | "));
    }
    s
}
