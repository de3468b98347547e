//! Metrics of value predictions against game results, overall and by
//! plies to the end of the game (the "height plot" of Zaffetti's Arimaa
//! study) and by ply number.
//!
//! Predictions and labels are on the label scale: 1 win, 0.5 draw, 0 loss
//! for the side to move.
//!
//! - MSE and MAE: over every row.
//! - R^2: `1 - SSE/SST`, `SST` the labels' sum of squares about their mean
//!   (`None` when every label is the same).
//! - Accuracy: over decisive labels only (draws, label 0.5, are left out and
//!   counted in `draws`); a prediction above 0.5 calls a win, below 0.5 a
//!   loss, and a prediction of exactly 0.5 counts as half right (a coin flip).
//!   The 0/1 error is `1 - accuracy`.
//!
//! ```
//! use plies::eval::MetricsAcc;
//! let mut m = MetricsAcc::default();
//! m.push(0.8, 1.0);
//! m.push(0.4, 0.0);
//! let s = m.summary();
//! assert_eq!(s.count, 2);
//! assert!((s.mse - 0.1).abs() < 1e-12);
//! assert_eq!(s.accuracy, Some(1.0));
//! ```

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Width in plies of the height buckets (0-9, 10-19, ...).
pub const HEIGHT_BUCKET_PLIES: u32 = 10;

/// Running sums for one group of rows; [`MetricsAcc::merge`] combines two.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MetricsAcc {
    pub count: u64,
    pub sum_sq_err: f64,
    pub sum_abs_err: f64,
    pub sum_label: f64,
    pub sum_label_sq: f64,
    pub sum_pred: f64,
    /// Rows with a label other than 0.5.
    pub decisive: u64,
    /// Right calls among the decisive rows (ties count 0.5).
    pub correct: f64,
}

/// The figures of one group of rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub count: u64,
    pub mse: f64,
    pub mae: f64,
    /// `None` when the labels have no spread.
    pub r2: Option<f64>,
    /// Over decisive labels; `None` when there is none.
    pub accuracy: Option<f64>,
    /// `1 - accuracy`.
    pub error01: Option<f64>,
    pub decisive: u64,
    /// Rows labelled 0.5, left out of the accuracy.
    pub draws: u64,
    pub mean_prediction: f64,
    pub mean_label: f64,
}

impl MetricsAcc {
    /// Adds one prediction and its label (both on the `[0, 1]` scale).
    pub fn push(&mut self, prediction: f32, label: f32) {
        let (p, y) = (prediction as f64, label as f64);
        let e = p - y;
        self.count += 1;
        self.sum_sq_err += e * e;
        self.sum_abs_err += e.abs();
        self.sum_label += y;
        self.sum_label_sq += y * y;
        self.sum_pred += p;
        if label != 0.5 {
            self.decisive += 1;
            let win = label > 0.5;
            self.correct += if p == 0.5 {
                0.5
            } else if (p > 0.5) == win {
                1.0
            } else {
                0.0
            };
        }
    }

    /// Adds the sums of `other`.
    pub fn merge(&mut self, other: &MetricsAcc) {
        self.count += other.count;
        self.sum_sq_err += other.sum_sq_err;
        self.sum_abs_err += other.sum_abs_err;
        self.sum_label += other.sum_label;
        self.sum_label_sq += other.sum_label_sq;
        self.sum_pred += other.sum_pred;
        self.decisive += other.decisive;
        self.correct += other.correct;
    }

    /// The figures (zeros and `None`s for an empty group).
    pub fn summary(&self) -> Metrics {
        let n = self.count as f64;
        let per_row = |x: f64| if self.count == 0 { 0.0 } else { x / n };
        let mean_label = per_row(self.sum_label);
        let sst = self.sum_label_sq - n * mean_label * mean_label;
        let r2 = (self.count > 0 && sst > 1e-12).then(|| 1.0 - self.sum_sq_err / sst);
        let accuracy = (self.decisive > 0).then(|| self.correct / self.decisive as f64);
        Metrics {
            count: self.count,
            mse: per_row(self.sum_sq_err),
            mae: per_row(self.sum_abs_err),
            r2,
            accuracy,
            error01: accuracy.map(|a| 1.0 - a),
            decisive: self.decisive,
            draws: self.count - self.decisive,
            mean_prediction: per_row(self.sum_pred),
            mean_label,
        }
    }
}

/// Metrics overall, by exact plies to the end, and by ply number.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupedMetrics {
    pub overall: MetricsAcc,
    pub by_height: BTreeMap<u32, MetricsAcc>,
    pub by_ply: BTreeMap<u32, MetricsAcc>,
    /// By game id, for intervals that resample whole games
    /// ([`super::paired_by_game`]); only rows pushed with their game
    /// ([`GroupedMetrics::push_in_game`]).
    pub by_game: BTreeMap<String, MetricsAcc>,
}

impl GroupedMetrics {
    /// Adds one row: its prediction, label, ply and plies to the end.
    pub fn push(&mut self, prediction: f32, label: f32, ply: u32, plies_to_end: u32) {
        self.overall.push(prediction, label);
        self.by_height
            .entry(plies_to_end)
            .or_default()
            .push(prediction, label);
        self.by_ply.entry(ply).or_default().push(prediction, label);
    }

    /// [`GroupedMetrics::push`], also counted under its game's id.
    pub fn push_in_game(
        &mut self,
        game_id: &str,
        prediction: f32,
        label: f32,
        ply: u32,
        plies_to_end: u32,
    ) {
        self.push(prediction, label, ply, plies_to_end);
        match self.by_game.get_mut(game_id) {
            Some(game) => game.push(prediction, label),
            None => {
                let mut game = MetricsAcc::default();
                game.push(prediction, label);
                self.by_game.insert(game_id.to_string(), game);
            }
        }
    }

    /// Adds the rows of `other`.
    pub fn merge(&mut self, other: &GroupedMetrics) {
        self.overall.merge(&other.overall);
        for (k, v) in &other.by_height {
            self.by_height.entry(*k).or_default().merge(v);
        }
        for (k, v) in &other.by_ply {
            self.by_ply.entry(*k).or_default().merge(v);
        }
        for (k, v) in &other.by_game {
            self.by_game.entry(k.clone()).or_default().merge(v);
        }
    }

    /// Heights grouped in buckets of `width` plies, keyed by the bucket's
    /// first height (0, width, 2*width, ...).
    pub fn by_height_bucket(&self, width: u32) -> BTreeMap<u32, MetricsAcc> {
        let width = width.max(1);
        let mut out: BTreeMap<u32, MetricsAcc> = BTreeMap::new();
        for (h, m) in &self.by_height {
            out.entry(h / width * width).or_default().merge(m);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn hand_computed_figures() {
        // predictions 0.9 0.2 0.5 0.6 0.3 for labels 1 0 1 0.5 0
        let mut m = MetricsAcc::default();
        for (p, y) in [(0.9, 1.0), (0.2, 0.0), (0.5, 1.0), (0.6, 0.5), (0.3, 0.0)] {
            m.push(p, y);
        }
        let s = m.summary();
        assert_eq!(s.count, 5);
        // errors -0.1 0.2 -0.5 0.1 0.3: squares .01 .04 .25 .01 .09 = .40
        assert!(close(s.mse, 0.40 / 5.0), "{}", s.mse);
        assert!(close(s.mae, 1.2 / 5.0), "{}", s.mae);
        // labels mean 0.5; SST = .25+.25+.25+0+.25 = 1.0
        assert!(close(s.r2.unwrap(), 1.0 - 0.40), "{:?}", s.r2);
        // decisive: 4; right: 0.9->1, 0.2->0, 0.3->0, and 0.5 is half
        assert_eq!(s.decisive, 4);
        assert_eq!(s.draws, 1);
        assert!(close(s.accuracy.unwrap(), 3.5 / 4.0));
        assert!(close(s.error01.unwrap(), 0.5 / 4.0));
        assert!(close(s.mean_prediction, 2.5 / 5.0));
        assert!(close(s.mean_label, 0.5));
    }

    #[test]
    fn wrong_side_and_constant_labels() {
        let mut m = MetricsAcc::default();
        m.push(0.4, 1.0);
        m.push(0.7, 1.0);
        let s = m.summary();
        assert_eq!(s.accuracy, Some(0.5));
        assert_eq!(s.r2, None, "labels without spread have no R^2");
        let empty = MetricsAcc::default().summary();
        assert_eq!(empty.count, 0);
        assert_eq!(empty.accuracy, None);
        assert_eq!(empty.mse, 0.0);
        let mut draws = MetricsAcc::default();
        draws.push(0.9, 0.5);
        assert_eq!(draws.summary().accuracy, None);
        assert_eq!(draws.summary().draws, 1);
    }

    #[test]
    fn groups_merge_and_bucket() {
        let rows = [
            (0.9, 1.0, 10, 0),
            (0.1, 1.0, 9, 1),
            (0.6, 0.0, 8, 2),
            (0.2, 0.0, 0, 12),
            (0.5, 0.5, 1, 25),
        ];
        let mut all = GroupedMetrics::default();
        let (mut a, mut b) = (GroupedMetrics::default(), GroupedMetrics::default());
        for (i, &(p, y, ply, h)) in rows.iter().enumerate() {
            all.push(p, y, ply, h);
            if i % 2 == 0 { &mut a } else { &mut b }.push(p, y, ply, h);
        }
        a.merge(&b);
        assert_eq!(a.overall.count, all.overall.count);
        assert!(close(a.overall.sum_sq_err, all.overall.sum_sq_err));
        assert_eq!(a.by_height.len(), 5);
        let buckets = all.by_height_bucket(10);
        assert_eq!(buckets.keys().copied().collect::<Vec<_>>(), vec![0, 10, 20]);
        let first = buckets[&0].summary();
        assert_eq!(first.count, 3);
        // 0.9 right, 0.1 wrong, 0.6 wrong
        assert!(close(first.accuracy.unwrap(), 1.0 / 3.0));
        assert!(close(first.mse, (0.01 + 0.81 + 0.36) / 3.0));
        let total: u64 = buckets.values().map(|m| m.count).sum();
        assert_eq!(total, 5);
        assert_eq!(all.by_ply[&10].count, 1);
    }
}
