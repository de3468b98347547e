//! Running the grid: its folder checked against the stored arguments, the
//! (configuration, fold) runs trained in parallel (or read back where
//! their result exists), then ranked and written.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use candle_core::Device;
use serde::{Deserialize, Serialize};

use super::error::file_err;
use super::{csv, markdown, rank, GridConfig, GridError, GridPoint, GridRow};
use crate::checkpoint;
use crate::dataset::{Dataset, Split, StreamConfig};
use crate::eval::{predict_rows, EvalError, MetricsAcc};
use crate::train::trainer::{fit_cv, CvFolds};
use crate::util::run_dir::{check_fingerprint, Depth, JsonLayout, RunDir, RunDirError};
use crate::util::write_atomic;

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

/// Runs the grid (see the module docs). `progress` is told of every
/// finished run: (done, total, this run's id and fold, trained or skipped).
pub fn run_grid(
    cfg: &GridConfig,
    device: &Device,
    progress: &(dyn Fn(usize, usize, &str, bool) + Sync),
) -> Result<GridReport, GridError> {
    let ds = Dataset::open(&cfg.data)?;
    cfg.check(&ds)?;
    // One grid per output folder; each fold's run claims its own inside it.
    let _claim = RunDir::claim(&cfg.out)?;
    let k = ds.spec().folds;
    let args = cfg.fingerprint(ds.manifest_sha256());
    std::fs::create_dir_all(&cfg.out).map_err(|e| file_err(&cfg.out, e))?;
    let args_path = cfg.out.join(ARGS_FILE);
    check_fingerprint(&args_path, &args, Depth::TopLevel, JsonLayout::Pretty).map_err(
        |e| match e {
            RunDirError::Mismatch { difference, .. } => GridError::ArgsMismatch {
                dir: cfg.out.clone(),
                saved: difference.saved_text(),
                given: difference.given_text(),
                field: difference.field,
            },
            e => e.into(),
        },
    )?;

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
