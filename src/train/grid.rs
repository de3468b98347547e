//! `plies grid`: a k-fold cross-validated grid search over dropout,
//! regulariser, learning rule and kernel shape (Zaffetti's figure 3), scored
//! and ranked as in his figure 4.
//!
//! Each configuration is trained `k` times: cross-validation fold `f` (the
//! dataset folds `d` with `d mod k == f`) of the train and valid splits is
//! held out for validation, the other folds are trained on; the test split
//! is never read. A configuration's score is the mean over its folds of the
//! held-out MSE, MAE, R^2 and accuracy ([`crate::eval::MetricsAcc`]), with
//! their standard deviations (n - 1). Rows are ranked by mean MSE.
//!
//! Layout of `OUT`:
//!
//! ```text
//! OUT/grid-args.json                     the arguments (a rerun must match)
//! OUT/runs/<config-id>/fold-<f>/         the training run (plies train's files)
//! OUT/runs/<config-id>/fold-<f>/result.json   its held-out metrics, written last
//! OUT/grid.csv, grid.md, grid.json       the ranked table
//! ```
//!
//! Resumable: a (configuration, fold) whose `result.json` exists is not
//! trained again; an interrupted run continues from its run state.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use candle_core::Device;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use super::loss::LossKind;
use super::trainer::{fit_cv, CvFolds, FitConfig, FitError, ScheduleSpec};
use crate::checkpoint;
use crate::dataset::{Dataset, Split, StreamConfig};
use crate::eval::{predict_rows, EvalError, MetricsAcc};
use crate::model::{Cnn3NetConfig, ModelConfig};
use crate::optim::{MomentumConfig, OptimizerConfig, RmsPropConfig};
use crate::report::Table;
use crate::util::{seeded_rng, write_atomic, AtomicWriteError};

/// Errors of the grid search; each names the flag or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum GridError {
    #[error("invalid --{flag} value {value:?}: {why}")]
    Axis {
        flag: &'static str,
        value: String,
        why: String,
    },
    #[error("invalid --{flag}: {why}")]
    Invalid { flag: &'static str, why: String },
    #[error(
        "{dir} holds a grid started with other arguments (`{field}` was {saved}, now {given}); \
         rerun with the same arguments or use another --out"
    )]
    ArgsMismatch {
        dir: PathBuf,
        field: String,
        saved: String,
        given: String,
    },
    #[error("{path}: {why}")]
    File { path: PathBuf, why: String },
    #[error("configuration {id}, fold {fold}: {source}")]
    Run {
        id: String,
        fold: u8,
        source: Box<FitError>,
    },
    #[error("configuration {id}, fold {fold}: evaluating the held-out fold: {source}")]
    Eval {
        id: String,
        fold: u8,
        source: Box<EvalError>,
    },
    #[error(transparent)]
    Dataset(Box<crate::dataset::DatasetError>),
    #[error(transparent)]
    Write(#[from] AtomicWriteError),
}

impl From<crate::dataset::DatasetError> for GridError {
    fn from(e: crate::dataset::DatasetError) -> Self {
        GridError::Dataset(Box::new(e))
    }
}

/// A weight penalty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Regularizer {
    L1,
    L2,
    None,
}

/// A learning rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rule {
    Sgd,
    Rmsprop,
    Momentum,
    Nesterov,
}

impl Regularizer {
    /// Every penalty, in the order the grid lists them.
    pub const ALL: [Regularizer; 3] = [Regularizer::L1, Regularizer::L2, Regularizer::None];

    pub fn as_str(self) -> &'static str {
        match self {
            Regularizer::L1 => "l1",
            Regularizer::L2 => "l2",
            Regularizer::None => "none",
        }
    }
}

impl Rule {
    /// Every rule, in the order the grid lists them.
    pub const ALL: [Rule; 4] = [Rule::Sgd, Rule::Rmsprop, Rule::Momentum, Rule::Nesterov];

    /// The optimizer of this rule; `momentum` and `weight_decay` are those
    /// of the rules that take them.
    pub fn optimizer(self, lr: f64, momentum: f64, weight_decay: f64) -> OptimizerConfig {
        match self {
            Rule::Sgd => OptimizerConfig::Sgd { lr },
            Rule::Momentum | Rule::Nesterov => OptimizerConfig::Momentum(MomentumConfig {
                lr,
                momentum,
                dampening: 0.0,
                weight_decay,
                nesterov: self == Rule::Nesterov,
            }),
            Rule::Rmsprop => OptimizerConfig::RmsProp(RmsPropConfig {
                lr,
                momentum,
                weight_decay,
                ..RmsPropConfig::default()
            }),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Sgd => "sgd",
            Rule::Rmsprop => "rmsprop",
            Rule::Momentum => "momentum",
            Rule::Nesterov => "nesterov",
        }
    }
}

/// The axes of the grid; the defaults are Zaffetti's figure 3.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridAxes {
    pub dropout: Vec<f64>,
    pub regularizer: Vec<Regularizer>,
    pub optimizer: Vec<Rule>,
    pub kernel: Vec<[usize; 2]>,
}

/// Figure 3's dropout rates (0: none).
pub const PAPER_DROPOUT: &str = "0.5,0.25,0.1,0.05,0.01,0.005,0";
pub const PAPER_REGULARIZER: &str = "l1,l2,none";
pub const PAPER_OPTIMIZER: &str = "sgd,rmsprop,momentum,nesterov";
pub const PAPER_KERNEL: &str = "2x2,3x3,4x4,5x5,6x6,1x4,1x8,3x1,6x1";

/// The values of an axis of keywords: each item of `s` must be one of the
/// names in `choices`.
fn keywords<T: Copy>(
    flag: &'static str,
    s: &str,
    choices: &[T],
    name: fn(T) -> &'static str,
) -> Result<Vec<T>, GridError> {
    items(flag, s)?
        .into_iter()
        .map(|t| {
            choices
                .iter()
                .copied()
                .find(|&v| name(v) == t)
                .ok_or_else(|| {
                    let names: Vec<&str> = choices.iter().map(|&v| name(v)).collect();
                    let (last, rest) = names.split_last().expect("choices");
                    GridError::Axis {
                        flag,
                        value: t.clone(),
                        why: format!("expected {} or {last}", rest.join(", ")),
                    }
                })
        })
        .collect()
}

fn items(flag: &'static str, s: &str) -> Result<Vec<String>, GridError> {
    let v: Vec<String> = s
        .split(',')
        .map(|t| t.trim().to_ascii_lowercase())
        .collect();
    if v.iter().any(String::is_empty) {
        return Err(GridError::Axis {
            flag,
            value: s.to_string(),
            why: "an empty item; expected a comma-separated list".into(),
        });
    }
    Ok(v)
}

impl GridAxes {
    /// Parses the four comma-separated lists.
    pub fn parse(
        dropout: &str,
        regularizer: &str,
        optimizer: &str,
        kernel: &str,
    ) -> Result<Self, GridError> {
        let dropout = items("dropout", dropout)?
            .into_iter()
            .map(|t| match t.as_str() {
                "none" => Ok(0.0),
                _ => match t.parse::<f64>() {
                    Ok(p) if (0.0..1.0).contains(&p) => Ok(p),
                    _ => Err(GridError::Axis {
                        flag: "dropout",
                        value: t.clone(),
                        why: "expected a rate in [0, 1) (0 or none: no dropout)".into(),
                    }),
                },
            })
            .collect::<Result<_, _>>()?;
        let regularizer = keywords(
            "regularizer",
            regularizer,
            &Regularizer::ALL,
            Regularizer::as_str,
        )?;
        let optimizer = keywords("optimizer", optimizer, &Rule::ALL, Rule::as_str)?;
        let kernel = items("kernel", kernel)?
            .into_iter()
            .map(|t| {
                let bad = || GridError::Axis {
                    flag: "kernel",
                    value: t.clone(),
                    why: "expected HxW with H, W >= 1 (e.g. 4x4, 1x8)".into(),
                };
                let (h, w) = t.split_once('x').ok_or_else(bad)?;
                match (h.parse::<usize>(), w.parse::<usize>()) {
                    (Ok(h), Ok(w)) if h > 0 && w > 0 => Ok([h, w]),
                    _ => Err(bad()),
                }
            })
            .collect::<Result<_, _>>()?;
        let mut axes = GridAxes {
            dropout,
            regularizer,
            optimizer,
            kernel,
        };
        // Repeated values would train the same configuration twice.
        dedup(&mut axes.dropout);
        dedup(&mut axes.regularizer);
        dedup(&mut axes.optimizer);
        dedup(&mut axes.kernel);
        Ok(axes)
    }

    /// The paper's axes.
    pub fn paper() -> Self {
        Self::parse(
            PAPER_DROPOUT,
            PAPER_REGULARIZER,
            PAPER_OPTIMIZER,
            PAPER_KERNEL,
        )
        .unwrap_or_else(|_| unreachable!("the paper's axes parse"))
    }

    /// Number of configurations in the product.
    pub fn len(&self) -> usize {
        self.dropout.len() * self.regularizer.len() * self.optimizer.len() * self.kernel.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The product, kernel slowest, dropout fastest.
    pub fn product(&self) -> Vec<GridPoint> {
        let mut out = Vec::with_capacity(self.len());
        for &kernel in &self.kernel {
            for &optimizer in &self.optimizer {
                for &regularizer in &self.regularizer {
                    for &dropout in &self.dropout {
                        out.push(GridPoint {
                            dropout,
                            regularizer,
                            optimizer,
                            kernel,
                        });
                    }
                }
            }
        }
        out
    }
}

fn dedup<T: PartialEq + Clone>(v: &mut Vec<T>) {
    let mut seen: Vec<T> = Vec::with_capacity(v.len());
    v.retain(|x| {
        if seen.contains(x) {
            false
        } else {
            seen.push(x.clone());
            true
        }
    });
}

/// One configuration of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridPoint {
    pub dropout: f64,
    pub regularizer: Regularizer,
    pub optimizer: Rule,
    pub kernel: [usize; 2],
}

impl GridPoint {
    /// A name usable as a directory: `k4x4-nesterov-l1-d0.01`.
    pub fn id(&self) -> String {
        format!(
            "k{}x{}-{}-{}-d{}",
            self.kernel[0],
            self.kernel[1],
            self.optimizer.as_str(),
            self.regularizer.as_str(),
            self.dropout
        )
    }

    /// Dropout as the paper writes it (`None` for 0).
    pub fn dropout_label(&self) -> String {
        if self.dropout == 0.0 {
            "none".into()
        } else {
            self.dropout.to_string()
        }
    }
}

/// Everything a grid search depends on.
#[derive(Clone, Debug)]
pub struct GridConfig {
    pub data: PathBuf,
    pub out: PathBuf,
    /// Cross-validation folds (2 to the dataset's k).
    pub folds: u8,
    /// Draw this many configurations from the product (seeded); `None`: all.
    pub sample: Option<usize>,
    pub seed: u64,
    pub epochs: usize,
    pub batch_size: usize,
    pub buffer_rows: usize,
    /// Runs trained at the same time.
    pub jobs: usize,
    pub axes: GridAxes,
    /// The cnn3 model every configuration starts from (kernel and dropout
    /// are replaced).
    pub base: Cnn3NetConfig,
    pub model_source: String,
    /// Strength of the l1 or l2 penalty.
    pub penalty: f64,
    /// Learning rate (default 0.01).
    pub lr: f64,
    pub momentum: f64,
    pub device_name: String,
    pub quiet: bool,
}

/// The score of one configuration: mean and std over folds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridRow {
    pub rank: usize,
    pub id: String,
    pub config: GridPoint,
    pub mse: f64,
    pub mse_std: f64,
    pub mae: f64,
    pub mae_std: f64,
    pub r2: Option<f64>,
    pub r2_std: Option<f64>,
    pub accuracy: Option<f64>,
    pub accuracy_std: Option<f64>,
    pub folds: usize,
    /// Held-out positions over all folds.
    pub positions: u64,
}

/// What one (configuration, fold) run measured on its held-out fold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub id: String,
    pub fold: u8,
    pub config: GridPoint,
    pub train_folds: Vec<u8>,
    pub valid_folds: Vec<u8>,
    pub metrics: crate::eval::Metrics,
    pub epochs: usize,
    pub steps: u64,
    pub seconds: f64,
}

/// What a grid search did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GridReport {
    pub args: serde_json::Value,
    pub rows: Vec<GridRow>,
    /// Runs trained now.
    pub trained: usize,
    /// Runs whose result was already there.
    pub skipped: usize,
}

/// The result file of a run.
pub const RESULT_FILE: &str = "result.json";
/// The grid's arguments.
pub const ARGS_FILE: &str = "grid-args.json";

impl GridConfig {
    /// The arguments a rerun must share.
    pub fn fingerprint(&self, manifest_sha256: &str) -> serde_json::Value {
        serde_json::json!({
            "dataset_manifest_sha256": manifest_sha256,
            "folds": self.folds,
            "sample": self.sample,
            "seed": self.seed,
            "epochs": self.epochs,
            "batch": self.batch_size,
            "buffer_rows": self.buffer_rows,
            "axes": self.axes,
            "base": self.base,
            "penalty": self.penalty,
            "lr": self.lr,
            "momentum": self.momentum,
            "device": self.device_name,
        })
    }

    /// The configurations to train, in product order.
    pub fn points(&self) -> Vec<GridPoint> {
        let all = self.axes.product();
        match self.sample {
            Some(n) if n < all.len() => {
                let mut idx: Vec<usize> = (0..all.len()).collect();
                idx.shuffle(&mut seeded_rng(self.seed, 0x6772_6964));
                let mut idx = idx[..n].to_vec();
                idx.sort_unstable();
                idx.into_iter().map(|i| all[i]).collect()
            }
            _ => all,
        }
    }

    /// Dataset folds of cross-validation fold `f` and of the others.
    pub fn cv_folds(&self, k: u8, f: u8) -> CvFolds {
        let (valid, train): (Vec<u8>, Vec<u8>) = (0..k).partition(|d| d % self.folds == f);
        CvFolds {
            train_folds: train,
            valid_folds: valid,
        }
    }

    fn check(&self, ds: &Dataset) -> Result<(), GridError> {
        let k = ds.spec().folds;
        if self.folds < 2 || self.folds > k {
            return Err(GridError::Invalid {
                flag: "folds",
                why: format!(
                    "{}, expected 2 to {k} (the dataset {} has {k} folds)",
                    self.folds,
                    ds.dir().display()
                ),
            });
        }
        if self.axes.is_empty() {
            return Err(GridError::Invalid {
                flag: "dropout/regularizer/optimizer/kernel",
                why: "an empty axis".into(),
            });
        }
        if self.sample == Some(0) {
            return Err(GridError::Invalid {
                flag: "sample",
                why: "0, expected at least 1".into(),
            });
        }
        for (flag, v) in [("penalty", self.penalty), ("lr", self.lr)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(GridError::Invalid {
                    flag,
                    why: format!("{v}, expected a finite number >= 0"),
                });
            }
        }
        if self.jobs == 0 {
            return Err(GridError::Invalid {
                flag: "jobs",
                why: "0, expected at least 1".into(),
            });
        }
        let [_, h, w] = self.base.input.planes;
        for &[kh, kw] in &self.axes.kernel {
            if kh > h || kw > w {
                return Err(GridError::Axis {
                    flag: "kernel",
                    value: format!("{kh}x{kw}"),
                    why: format!(
                        "does not fit the {h}x{w} board of the dataset {} (encoder {}); \
                         a kernel is at most {h}x{w}",
                        ds.dir().display(),
                        ds.spec().encoder.name
                    ),
                });
            }
        }
        Ok(())
    }

    fn fit_config(&self, p: &GridPoint, out: PathBuf) -> FitConfig {
        let mut net = self.base.net.clone();
        net.kernel = p.kernel;
        net.dropout = p.dropout;
        // The grid's RMSprop is the plain one: no momentum.
        let momentum = if p.optimizer == Rule::Rmsprop {
            0.0
        } else {
            self.momentum
        };
        let optimizer = p.optimizer.optimizer(self.lr, momentum, 0.0);
        FitConfig {
            data: self.data.clone(),
            out,
            model: ModelConfig::Cnn3(Cnn3NetConfig::new(self.base.input, net)),
            model_source: self.model_source.clone(),
            init_weights: None,
            optimizer,
            loss: LossKind::Mse,
            l1: if p.regularizer == Regularizer::L1 {
                self.penalty
            } else {
                0.0
            },
            l2: if p.regularizer == Regularizer::L2 {
                self.penalty
            } else {
                0.0
            },
            clip: None,
            schedule: ScheduleSpec::Constant,
            warmup_steps: 0,
            epochs: self.epochs,
            batch_size: self.batch_size,
            buffer_rows: self.buffer_rows,
            seed: self.seed,
            patience: None,
            save_every: 200,
            device_name: self.device_name.clone(),
            resume: true,
            overwrite: false,
            quiet: true,
            comparison: None,
            policy_weight: 0.0,
            augment: false,
        }
    }
}

fn file_err(path: &Path, why: impl ToString) -> GridError {
    GridError::File {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

/// The first top-level field where two argument sets differ.
fn first_difference(
    a: &serde_json::Value,
    b: &serde_json::Value,
) -> Option<(String, String, String)> {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return (a != b).then(|| (String::new(), a.to_string(), b.to_string()));
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter().find_map(|k| {
        let (x, y) = (a.get(k), b.get(k));
        (x != y).then(|| {
            let s = |v: Option<&serde_json::Value>| v.map_or("nothing".into(), |v| v.to_string());
            (k.clone(), s(x), s(y))
        })
    })
}

/// The held-out metrics of the run's final model.
fn evaluate(
    ds: &Dataset,
    run_dir: &Path,
    cv: &CvFolds,
    batch: usize,
    device: &Device,
) -> Result<crate::eval::Metrics, EvalError> {
    let ck = checkpoint::load(run_dir, None, None)?;
    let rows = StreamConfig {
        split: None,
        splits: Some(vec![Split::Train, Split::Valid]),
        folds: Some(cv.valid_folds.clone()),
        batch_size: batch,
        buffer_rows: batch,
        ..StreamConfig::default()
    };
    let mut acc = MetricsAcc::default();
    predict_rows(&ck, ds, rows, device, |r| acc.push(r.prediction, r.label))?;
    Ok(acc.summary())
}

/// Mean and sample standard deviation.
fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n.max(1.0);
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

fn mean_std_opt(v: &[Option<f64>]) -> (Option<f64>, Option<f64>) {
    if v.iter().any(Option::is_none) || v.is_empty() {
        return (None, None);
    }
    let xs: Vec<f64> = v.iter().flatten().copied().collect();
    let (m, s) = mean_std(&xs);
    (Some(m), Some(s))
}

/// Ranks configurations by mean MSE over their folds.
pub fn rank(results: &[(GridPoint, Vec<RunResult>)]) -> Vec<GridRow> {
    let mut rows: Vec<GridRow> = results
        .iter()
        .map(|(p, runs)| {
            let (mse, mse_std) = mean_std(&runs.iter().map(|r| r.metrics.mse).collect::<Vec<_>>());
            let (mae, mae_std) = mean_std(&runs.iter().map(|r| r.metrics.mae).collect::<Vec<_>>());
            let (r2, r2_std) = mean_std_opt(&runs.iter().map(|r| r.metrics.r2).collect::<Vec<_>>());
            let (accuracy, accuracy_std) =
                mean_std_opt(&runs.iter().map(|r| r.metrics.accuracy).collect::<Vec<_>>());
            GridRow {
                rank: 0,
                id: p.id(),
                config: *p,
                mse,
                mse_std,
                mae,
                mae_std,
                r2,
                r2_std,
                accuracy,
                accuracy_std,
                folds: runs.len(),
                positions: runs.iter().map(|r| r.metrics.count).sum(),
            }
        })
        .collect();
    rows.sort_by(|a, b| a.mse.total_cmp(&b.mse).then_with(|| a.id.cmp(&b.id)));
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    rows
}

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

/// Runs the grid (see the module docs). `progress` is told of every
/// finished run: (done, total, this run's id and fold, trained or skipped).
pub fn run_grid(
    cfg: &GridConfig,
    device: &Device,
    progress: &(dyn Fn(usize, usize, &str, bool) + Sync),
) -> Result<GridReport, GridError> {
    let ds = Dataset::open(&cfg.data)?;
    cfg.check(&ds)?;
    let k = ds.spec().folds;
    let args = cfg.fingerprint(ds.manifest_sha256());
    std::fs::create_dir_all(&cfg.out).map_err(|e| file_err(&cfg.out, e))?;
    let args_path = cfg.out.join(ARGS_FILE);
    if args_path.exists() {
        let text = std::fs::read_to_string(&args_path).map_err(|e| file_err(&args_path, e))?;
        let saved: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| file_err(&args_path, e))?;
        if let Some((field, saved, given)) = first_difference(&saved, &args) {
            return Err(GridError::ArgsMismatch {
                dir: cfg.out.clone(),
                field,
                saved,
                given,
            });
        }
    } else {
        let text = serde_json::to_string_pretty(&args).map_err(|e| file_err(&args_path, e))?;
        write_atomic(&args_path, text.as_bytes())?;
    }

    let points = cfg.points();
    let tasks: Vec<(usize, u8)> = (0..points.len())
        .flat_map(|i| (0..cfg.folds).map(move |f| (i, f)))
        .collect();
    let total = tasks.len();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let trained = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<RunResult>>> = Mutex::new(vec![None; total]);
    let first_error: Mutex<Option<GridError>> = Mutex::new(None);

    let work = || loop {
        if first_error.lock().map_or(true, |e| e.is_some()) {
            return;
        }
        let t = next.fetch_add(1, Ordering::SeqCst);
        let Some(&(i, f)) = tasks.get(t) else {
            return;
        };
        let p = &points[i];
        let outcome = run_one(cfg, &ds, k, p, f, device);
        match outcome {
            Ok((r, was_trained)) => {
                if was_trained {
                    trained.fetch_add(1, Ordering::SeqCst);
                }
                let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                progress(n, total, &format!("{} fold {f}", r.id), was_trained);
                if let Ok(mut v) = results.lock() {
                    v[t] = Some(r);
                }
            }
            Err(e) => {
                if let Ok(mut slot) = first_error.lock() {
                    slot.get_or_insert(e);
                }
                return;
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 0..cfg.jobs.min(total).max(1) {
            s.spawn(work);
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    let results = results.into_inner().unwrap_or_default();
    let mut per_point: Vec<(GridPoint, Vec<RunResult>)> =
        points.iter().map(|p| (*p, Vec::new())).collect();
    for (t, r) in results.into_iter().enumerate() {
        if let Some(r) = r {
            per_point[tasks[t].0].1.push(r);
        }
    }
    let rows = rank(&per_point);
    let trained = trained.into_inner();
    let report = GridReport {
        args,
        rows,
        trained,
        skipped: total - trained,
    };
    let title = format!(
        "Grid search: {} configurations x {} folds on {}",
        points.len(),
        cfg.folds,
        cfg.data.display()
    );
    write_atomic(cfg.out.join("grid.csv"), csv(&report.rows).as_bytes())?;
    write_atomic(
        cfg.out.join("grid.md"),
        markdown(&report.rows, &title).as_bytes(),
    )?;
    let json = serde_json::to_string_pretty(&report).map_err(|e| file_err(&cfg.out, e))?;
    write_atomic(cfg.out.join("grid.json"), json.as_bytes())?;
    Ok(report)
}

/// Trains and evaluates one (configuration, fold), or reads its result.
fn run_one(
    cfg: &GridConfig,
    ds: &Dataset,
    k: u8,
    p: &GridPoint,
    f: u8,
    device: &Device,
) -> Result<(RunResult, bool), GridError> {
    let id = p.id();
    let dir = cfg.out.join("runs").join(&id).join(format!("fold-{f}"));
    let result_path = dir.join(RESULT_FILE);
    if result_path.exists() {
        let text = std::fs::read_to_string(&result_path).map_err(|e| file_err(&result_path, e))?;
        let r: RunResult = serde_json::from_str(&text).map_err(|e| file_err(&result_path, e))?;
        return Ok((r, false));
    }
    let cv = cfg.cv_folds(k, f);
    let started = std::time::Instant::now();
    let fit = cfg.fit_config(p, dir.clone());
    let report = fit_cv(&fit, Some(&cv), device).map_err(|e| GridError::Run {
        id: id.clone(),
        fold: f,
        source: Box::new(e),
    })?;
    let metrics = evaluate(ds, &dir, &cv, cfg.batch_size, device).map_err(|e| GridError::Eval {
        id: id.clone(),
        fold: f,
        source: Box::new(e),
    })?;
    let r = RunResult {
        id,
        fold: f,
        config: *p,
        train_folds: cv.train_folds,
        valid_folds: cv.valid_folds,
        metrics,
        epochs: report.history.len(),
        steps: report.steps,
        seconds: started.elapsed().as_secs_f64(),
    };
    let text = serde_json::to_string_pretty(&r).map_err(|e| file_err(&result_path, e))?;
    write_atomic(&result_path, text.as_bytes())?;
    Ok((r, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_axes_and_sampling() {
        let a = GridAxes::paper();
        assert_eq!(a.len(), 7 * 3 * 4 * 9);
        let ids: Vec<String> = a.product().iter().map(GridPoint::id).collect();
        let mut u = ids.clone();
        u.sort();
        u.dedup();
        assert_eq!(u.len(), ids.len());
        assert!(ids.contains(&"k4x4-nesterov-l1-d0".to_string()));
    }

    #[test]
    fn bad_axis_values_name_the_flag() {
        for (args, flag, value) in [
            (["0.7,1.5", "l1", "sgd", "4x4"], "--dropout", "1.5"),
            (["0", "l3", "sgd", "4x4"], "--regularizer", "l3"),
            (["0", "l1", "adam", "4x4"], "--optimizer", "adam"),
            (["0", "l1", "sgd", "4by4"], "--kernel", "4by4"),
            (["0", "l1", "sgd", "0x4"], "--kernel", "0x4"),
        ] {
            let e = GridAxes::parse(args[0], args[1], args[2], args[3])
                .unwrap_err()
                .to_string();
            assert!(e.contains(flag) && e.contains(value), "{e}");
        }
    }

    #[test]
    fn ranking_means_and_stds() {
        let p = |d: f64| GridPoint {
            dropout: d,
            regularizer: Regularizer::None,
            optimizer: Rule::Sgd,
            kernel: [2, 2],
        };
        let m = |mse: f64| crate::eval::Metrics {
            count: 10,
            mse,
            mae: mse,
            r2: Some(1.0 - mse),
            accuracy: Some(0.5),
            error01: Some(0.5),
            decisive: 10,
            draws: 0,
            mean_prediction: 0.5,
            mean_label: 0.5,
        };
        let run = |pt: GridPoint, f: u8, mse: f64| RunResult {
            id: pt.id(),
            fold: f,
            config: pt,
            train_folds: vec![],
            valid_folds: vec![f],
            metrics: m(mse),
            epochs: 1,
            steps: 1,
            seconds: 0.0,
        };
        let rows = rank(&[
            (p(0.5), vec![run(p(0.5), 0, 0.3), run(p(0.5), 1, 0.1)]),
            (p(0.0), vec![run(p(0.0), 0, 0.1), run(p(0.0), 1, 0.1)]),
        ]);
        assert_eq!(rows[0].config.dropout, 0.0);
        assert_eq!(rows[0].rank, 1);
        assert!((rows[1].mse - 0.2).abs() < 1e-12);
        assert!((rows[1].mse_std - 0.02f64.sqrt()).abs() < 1e-12);
        assert_eq!(rows[1].positions, 20);
        let md = markdown(&rows, "t");
        assert_eq!(
            md.lines()
                .filter(|l| l.starts_with("| ") && !l.starts_with("| ---"))
                .count(),
            3
        );
    }
}
