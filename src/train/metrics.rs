//! Per-epoch training metrics: `metrics.csv` and `metrics.jsonl` (one line
//! per epoch, appended), validation statistics, and the final table.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::report::Table;

pub const METRICS_CSV: &str = "metrics.csv";
pub const METRICS_JSONL: &str = "metrics.jsonl";
const CSV_HEADER: &str =
    "epoch,step,lr,train_loss,valid_loss,valid_mse,valid_mae,valid_acc,seconds,positions_per_s,valid_top1";

/// One epoch's line. The validation figures are on the label scale
/// (`[0, 1]`, whatever the model's output scale): `valid_mse` and
/// `valid_mae` compare the predicted win probability with the label;
/// `valid_acc` is the share of decisive positions (label 0 or 1) whose
/// prediction is on the label's side of 0.5 (the Arimaa study's "Acc").
/// `valid_loss` is the training loss on the validation split (no penalty).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochMetrics {
    /// From 1.
    pub epoch: usize,
    /// Optimizer steps so far.
    pub step: u64,
    /// Learning rate of the epoch's last step.
    pub lr: f64,
    /// Mean loss of the epoch's batches (penalties included).
    pub train_loss: f64,
    pub valid_loss: Option<f64>,
    pub valid_mse: Option<f64>,
    pub valid_mae: Option<f64>,
    pub valid_acc: Option<f64>,
    /// Comparison training: the share of validation positions whose played
    /// move the model ranks first among the legal moves (ties shared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_top1: Option<f64>,
    /// Wall time of the epoch (training and validation).
    pub seconds: f64,
    /// Training positions per second.
    pub positions_per_s: f64,
}

/// Sums over validation batches, each row counted by its weight (1 unless
/// the run weighs sources, [`crate::dataset::SourceWeights`]).
#[derive(Clone, Debug, Default)]
pub struct ValidStats {
    pub loss_sum: f64,
    pub se_sum: f64,
    pub ae_sum: f64,
    /// The weight of the decisive rows predicted right, of all decisive rows.
    pub correct: f64,
    pub decisive: f64,
    /// The weight of all rows.
    pub total: f64,
}

impl ValidStats {
    /// Adds a batch: its (weighted) mean loss, the predicted probabilities
    /// and the labels, both on `[0, 1]`, and the rows' weights (`None`: 1
    /// each).
    pub fn add(&mut self, mean_loss: f64, probs: &[f32], labels: &[f32], weights: Option<&[f32]>) {
        let weight = |i: usize| weights.map_or(1.0, |w| f64::from(w[i]));
        let mut batch_weight = 0.0;
        for (i, (&p, &y)) in probs.iter().zip(labels).enumerate() {
            let w = weight(i);
            batch_weight += w;
            let d = (p - y) as f64;
            self.se_sum += w * d * d;
            self.ae_sum += w * d.abs();
            if y != 0.5 {
                self.decisive += w;
                if (p > 0.5) == (y > 0.5) {
                    self.correct += w;
                }
            }
        }
        self.loss_sum += mean_loss * batch_weight;
        self.total += batch_weight;
    }

    /// `(loss, mse, mae, acc)`; `None` without rows (acc: without
    /// decisive rows).
    pub fn summary(&self) -> (Option<f64>, Option<f64>, Option<f64>, Option<f64>) {
        if self.total <= 0.0 {
            return (None, None, None, None);
        }
        let n = self.total;
        let acc = (self.decisive > 0.0).then(|| self.correct / self.decisive);
        (
            Some(self.loss_sum / n),
            Some(self.se_sum / n),
            Some(self.ae_sum / n),
            acc,
        )
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x}")).unwrap_or_default()
}

/// Appends `m` to `dir/metrics.csv` (header first when new) and
/// `dir/metrics.jsonl`.
pub fn append(dir: &Path, m: &EpochMetrics) -> std::io::Result<()> {
    let csv = dir.join(METRICS_CSV);
    let new = !csv.exists() || std::fs::metadata(&csv)?.len() == 0;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&csv)?;
    let mut text = String::new();
    if new {
        text += CSV_HEADER;
        text += "\n";
    }
    text += &format!(
        "{},{},{},{},{},{},{},{},{:.3},{:.1},{}\n",
        m.epoch,
        m.step,
        m.lr,
        m.train_loss,
        opt(m.valid_loss),
        opt(m.valid_mse),
        opt(m.valid_mae),
        opt(m.valid_acc),
        m.seconds,
        m.positions_per_s,
        opt(m.valid_top1)
    );
    f.write_all(text.as_bytes())?;
    f.sync_data()?;
    let mut j = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(METRICS_JSONL))?;
    let line = serde_json::to_string(m).map_err(std::io::Error::other)? + "\n";
    j.write_all(line.as_bytes())?;
    j.sync_data()
}

/// Rewrites the metrics files to hold exactly `rows` (after a resume, lines
/// written after the run state was saved are dropped and written again).
pub fn rewrite(dir: &Path, rows: &[EpochMetrics]) -> std::io::Result<()> {
    for name in [METRICS_CSV, METRICS_JSONL] {
        let p: PathBuf = dir.join(name);
        if p.exists() {
            std::fs::remove_file(&p)?;
        }
    }
    for m in rows {
        append(dir, m)?;
    }
    Ok(())
}

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

/// The epochs as a table; `best` marks the best epoch.
pub fn table(rows: &[EpochMetrics], best: Option<usize>) -> Table {
    let top1 = rows.iter().any(|m| m.valid_top1.is_some());
    let mut headers = vec![
        "epoch",
        "steps",
        "lr",
        "train loss",
        "valid loss",
        "valid mse",
        "valid mae",
        "valid acc",
        "pos/s",
        "s",
    ];
    if top1 {
        headers.push("valid top-1");
    }
    let mut t = Table::with_headers(headers);
    let percent = |v: Option<f64>| {
        v.map(|a| format!("{:.2}%", 100.0 * a))
            .unwrap_or_else(|| "-".into())
    };
    for m in rows {
        let mark = if Some(m.epoch) == best { " *" } else { "" };
        let mut row = vec![
            format!("{}{mark}", m.epoch),
            m.step.to_string(),
            format!("{:.3e}", m.lr),
            format!("{:.5}", m.train_loss),
            cell(m.valid_loss, 5),
            cell(m.valid_mse, 5),
            cell(m.valid_mae, 4),
            percent(m.valid_acc),
            format!("{:.0}", m.positions_per_s),
            format!("{:.1}", m.seconds),
        ];
        if top1 {
            row.push(percent(m.valid_top1));
        }
        t.push_row(row);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_stats_by_hand() {
        let mut s = ValidStats::default();
        s.add(0.2, &[0.9, 0.4, 0.6], &[1.0, 1.0, 0.5], None);
        s.add(0.5, &[0.3], &[0.0], None);
        let (loss, mse, mae, acc) = s.summary();
        assert!((loss.unwrap() - (0.6 + 0.5) / 4.0).abs() < 1e-12);
        let se = 0.01 + 0.36 + 0.01 + 0.09;
        assert!((mse.unwrap() - se / 4.0).abs() < 1e-6);
        assert!((mae.unwrap() - (0.1 + 0.6 + 0.1 + 0.3) / 4.0).abs() < 1e-6);
        // decisive: 0.9 vs 1 right, 0.4 vs 1 wrong, 0.3 vs 0 right
        assert!((acc.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(ValidStats::default().summary(), (None, None, None, None));
        // Weighted: the row 0.4 vs 1 counts three times.
        let mut w = ValidStats::default();
        w.add(0.3, &[0.9, 0.4], &[1.0, 1.0], Some(&[1.0, 3.0]));
        let (loss, mse, _, acc) = w.summary();
        assert!((loss.unwrap() - 0.3).abs() < 1e-12);
        assert!((mse.unwrap() - (0.01 + 3.0 * 0.36) / 4.0).abs() < 1e-6);
        assert!((acc.unwrap() - 0.25).abs() < 1e-12);
    }

    #[test]
    fn files_append_and_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let m = |e| EpochMetrics {
            epoch: e,
            step: 10 * e as u64,
            lr: 0.1,
            train_loss: 0.25,
            valid_loss: Some(0.2),
            valid_mse: Some(0.1),
            valid_mae: None,
            valid_acc: Some(0.5),
            valid_top1: None,
            seconds: 1.0,
            positions_per_s: 100.0,
        };
        append(dir.path(), &m(1)).unwrap();
        append(dir.path(), &m(2)).unwrap();
        let csv = std::fs::read_to_string(dir.path().join(METRICS_CSV)).unwrap();
        assert_eq!(csv.lines().count(), 3);
        assert!(csv.starts_with("epoch,step,lr"));
        rewrite(dir.path(), &[m(1)]).unwrap();
        let j = std::fs::read_to_string(dir.path().join(METRICS_JSONL)).unwrap();
        assert_eq!(j.lines().count(), 1);
        let back: EpochMetrics = serde_json::from_str(j.lines().next().unwrap()).unwrap();
        assert_eq!(back, m(1));
        assert!(table(&[m(1)], Some(1)).to_string().contains("1 *"));
    }
}
