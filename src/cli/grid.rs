//! `plies grid`: k-fold cross-validated grid search over dropout,
//! regulariser, learning rule and cnn3 kernel shape (`plies::train::grid`).

use anyhow::Context;
use clap::Args;
use plies::dataset::Dataset;
use plies::model::ModelConfig;
use plies::train::grid::{
    run_grid, table, GridAxes, GridConfig, PAPER_DROPOUT, PAPER_KERNEL, PAPER_OPTIMIZER,
    PAPER_REGULARIZER,
};
use plies::train::resolve_model;
use std::path::PathBuf;
use std::process::ExitCode;

/// Cross-validated grid search (Zaffetti's figures 3 and 4): every
/// configuration of the axes (or --sample of them) trained K times, fold f
/// of the train+valid splits held out; ranked by mean held-out MSE.
#[derive(Args, Clone, Debug)]
pub struct GridArgs {
    /// Dataset directory (with a `fold` column).
    #[arg(long)]
    data: PathBuf,
    /// Cross-validation folds (2 to the dataset's k; the dataset's folds d
    /// with d mod K == f form fold f).
    #[arg(long, default_value_t = 2)]
    folds: u8,
    /// Draw this many configurations from the product (seeded); default all.
    #[arg(long)]
    sample: Option<usize>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value_t = 1)]
    epochs: usize,
    #[arg(long, default_value_t = 1000)]
    batch: usize,
    /// Shuffle buffer of the streaming loader, in rows.
    #[arg(long, default_value_t = 65_536)]
    buffer_rows: usize,
    /// Output directory: grid.csv, grid.md, grid.json, runs/<config>/fold-<f>/.
    #[arg(long, default_value = "grid")]
    out: PathBuf,
    /// Runs trained at the same time; each gets cores/jobs threads.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Dropout rates on cnn3's hidden layer (0 or none: no dropout).
    #[arg(long, default_value = PAPER_DROPOUT)]
    dropout: String,
    /// Weight penalties: l1, l2, none (strength --penalty).
    #[arg(long, default_value = PAPER_REGULARIZER)]
    regularizer: String,
    /// Learning rules: sgd, rmsprop, momentum, nesterov.
    #[arg(long, default_value = PAPER_OPTIMIZER)]
    optimizer: String,
    /// cnn3 kernel shapes HxW.
    #[arg(long, default_value = PAPER_KERNEL)]
    kernel: String,
    /// Strength of the l1 / l2 penalty.
    #[arg(long, default_value_t = 1e-4)]
    penalty: f64,
    /// Learning rate of every rule.
    #[arg(long, default_value_t = 0.01)]
    lr: f64,
    /// Momentum of momentum and nesterov.
    #[arg(long, default_value_t = 0.9)]
    momentum: f64,
    /// Base model: cnn3 (preset) or a JSON file of a cnn3 config; its
    /// kernel and dropout are set by the grid.
    #[arg(long, default_value = "cnn3")]
    model: String,
    /// Override the base model's convolution filters.
    #[arg(long)]
    filters: Option<usize>,
    /// Override the base model's hidden units.
    #[arg(long)]
    hidden: Option<usize>,
    /// cpu, cuda, cuda:N or metal.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// What the training steps compute in: f32, tf32 (CUDA) or bf16
    /// (mixed precision); as `plies train --precision`.
    #[arg(long, default_value = "f32")]
    precision: plies::infer::plan::Precision,
    /// Also print the table as JSON.
    #[arg(long)]
    json: bool,
    #[arg(long)]
    quiet: bool,
}

/// Gives each of `jobs` runs its share of the cores (unless
/// RAYON_NUM_THREADS is set): J jobs x T threads <= cores.
fn set_threads(jobs: usize) {
    if std::env::var_os("RAYON_NUM_THREADS").is_some() {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t = (cores / jobs.max(1)).max(1);
    // Candle's CPU matrix products read RAYON_NUM_THREADS; nothing else
    // runs yet, so setting it here races with no other thread.
    std::env::set_var("RAYON_NUM_THREADS", t.to_string());
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(t)
        .build_global();
}

pub fn run(a: GridArgs) -> anyhow::Result<ExitCode> {
    set_threads(a.jobs);
    let device = super::train_model::parse_device(&a.device)?;
    let dataset = Dataset::open(&a.data)?;
    let (model, _) = resolve_model(&a.model, &dataset)?;
    let described = model.describe();
    let ModelConfig::Cnn3(mut base) = model else {
        anyhow::bail!(
            "--model {}: the grid varies cnn3 kernels and dropout; expected cnn3 or a cnn3 JSON config, got {described}",
            a.model,
        );
    };
    if let Some(f) = a.filters {
        base.net.filters = f;
    }
    if let Some(h) = a.hidden {
        base.net.hidden = h;
    }
    let axes = GridAxes::parse(&a.dropout, &a.regularizer, &a.optimizer, &a.kernel)?;
    let cfg = GridConfig {
        data: a.data.clone(),
        out: a.out.clone(),
        folds: a.folds,
        sample: a.sample,
        seed: a.seed,
        epochs: a.epochs,
        batch_size: a.batch,
        buffer_rows: a.buffer_rows,
        jobs: a.jobs,
        axes,
        base,
        model_source: a.model.clone(),
        penalty: a.penalty,
        lr: a.lr,
        momentum: a.momentum,
        device_name: a.device.clone(),
        precision: a.precision,
        quiet: a.quiet,
    };
    let points = cfg.points().len();
    let total = points * a.folds as usize;
    if !a.quiet {
        eprintln!(
            "grid: {points} configurations x {} folds = {total} runs on {} ({} jobs)",
            a.folds,
            a.data.display(),
            a.jobs
        );
    }
    let pb = super::progress(total as u64, "runs", a.quiet);
    let report = run_grid(&cfg, &device, &|done, _total, what, trained| {
        pb.set_position(done as u64);
        if !trained {
            tracing::info!("skipped {what}: finished before");
        }
        pb.set_message(if trained { "trained" } else { "skipped" });
    })
    .with_context(|| format!("plies grid --out {}", a.out.display()))?;
    pb.finish_and_clear();
    println!("{}", table(&report.rows));
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report.rows)?);
    }
    println!(
        "{} runs trained, {} finished before; table in {}",
        report.trained,
        report.skipped,
        a.out.join("grid.md").display()
    );
    Ok(ExitCode::SUCCESS)
}
