//! `plies train --data DIR --model CONFIG --out CKPT ...` (also spelled
//! `plies train fit ...`): the training engine of `plies::train::fit`.

use super::train::TrainCmd;
use candle_core::Device;
use clap::{Args, ValueEnum};
use plies::dataset::Dataset;
use plies::infer::plan::Precision;
use plies::optim::{AdamWConfig, MomentumConfig, OptimizerConfig, RmsPropConfig};
use plies::train::{
    fit, resolve_model, ComparisonConfig, ComparisonLoss, FitConfig, Reduce, ScheduleSpec,
};
use std::path::PathBuf;
use std::process::ExitCode;

/// `plies train`: either a subcommand (`td`, `supervised`, `fit`) or the
/// training engine's options directly.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct TrainArgs {
    #[command(subcommand)]
    cmd: Option<TrainCmd>,
    #[command(flatten)]
    fit: Box<FitArgs>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum OptName {
    Sgd,
    Momentum,
    Nesterov,
    Rmsprop,
    Adamw,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LossName {
    Mse,
    Bce,
}

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
enum ObjectiveName {
    /// Regression on the game results (the labels).
    Value,
    /// Rank the move played above the other legal moves.
    Comparison,
    /// Comparison with Thitipong et al.'s settings: sigmoid of the margin in
    /// material units summed over all moves, SGD with h = 10, one position
    /// per step (with the `linear` Bonanza start,
    /// data/arimaa/models/linear-material.json).
    Bonanza,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ComparisonLossName {
    Sigmoid,
    Softmax,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ReduceName {
    Sum,
    Mean,
}

/// Train any model on any dataset: streamed batches, validation each
/// epoch, metrics files, the best checkpoint, early stopping, exact resume.
#[derive(Args, Clone, Debug)]
pub struct FitArgs {
    /// Dataset directory (manifest.json + shards), e.g. from `plies dataset
    /// build` or `plies selfplay --dataset`.
    #[arg(long)]
    data: Option<PathBuf>,
    /// Model: a preset (linear, mlp, cnn3, resnet-tiny, resnet-small,
    /// mdrnn; the input shape comes from the dataset), a JSON file of a
    /// model config, or a checkpoint to continue training from or fine-tune
    /// (a directory or ckpt:hf:ORG/NAME[@REV]).
    #[arg(long)]
    model: Option<String>,
    /// Output directory: the last epoch's model, best/, metrics.csv,
    /// metrics.jsonl, run-state/.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Optimizer (default adamw; sgd with --objective bonanza).
    #[arg(long, value_enum)]
    optimizer: Option<OptName>,
    /// Learning rate (default: 0.001 for adamw, 0.01 otherwise; the
    /// paper's h = 10 in logit units, 4e-7, with --objective bonanza).
    #[arg(long)]
    lr: Option<f64>,
    /// Momentum (momentum, nesterov; rmsprop's momentum buffer too).
    #[arg(long)]
    momentum: Option<f64>,
    /// Optimizer weight decay (L2 through the optimizer; AdamW's is
    /// decoupled). Default: the optimizer's (adamw 0.01, others 0).
    #[arg(long)]
    weight_decay: Option<f64>,
    /// AdamW betas.
    #[arg(long)]
    beta1: Option<f64>,
    #[arg(long)]
    beta2: Option<f64>,
    /// RMSProp smoothing constant.
    #[arg(long)]
    alpha: Option<f64>,
    /// Epsilon of adamw and rmsprop.
    #[arg(long)]
    eps: Option<f64>,
    #[arg(long, default_value_t = 10)]
    epochs: usize,
    /// Positions per step (default 256; 1 with --objective bonanza).
    #[arg(long)]
    batch: Option<usize>,
    /// Seed of the initial weights and of the batch order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// cpu, cuda, cuda:N or metal.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// What the training steps compute in: f32; tf32 (CUDA tensor cores);
    /// bf16 (mixed precision: bf16 copies of f32 master weights). Weights,
    /// optimizer state, validation and checkpoints stay f32.
    #[arg(long, default_value = "f32")]
    precision: Precision,
    #[arg(long, value_enum, default_value = "mse")]
    loss: LossName,
    /// L1 penalty on weight matrices and kernels (not biases).
    #[arg(long, default_value_t = 0.0)]
    l1: f64,
    /// L2 penalty on weight matrices and kernels (not biases).
    #[arg(long, default_value_t = 0.0)]
    l2: f64,
    /// Clip the global gradient norm to this.
    #[arg(long)]
    clip: Option<f64>,
    /// constant, step:EPOCHS[:GAMMA] or cosine[:ETA_MIN].
    #[arg(long, default_value = "constant")]
    schedule: String,
    /// Linear warmup over this many steps (from a third of the rate).
    #[arg(long, default_value_t = 0)]
    warmup: usize,
    /// Stop after this many epochs without a better validation loss.
    #[arg(long)]
    patience: Option<usize>,
    /// Shuffle buffer of the streaming loader, in rows.
    #[arg(long, default_value_t = 65_536)]
    buffer_rows: usize,
    /// Save the run state every this many steps (0: at epoch ends only).
    #[arg(long, default_value_t = 200)]
    save_every: u64,
    /// Continue the run saved in OUT/run-state, or an interrupted
    /// --overwrite of OUT with the same arguments (a fresh start if none).
    #[arg(long)]
    resume: bool,
    /// Start over even if OUT holds a run: the new run trains beside OUT and
    /// replaces it only when finished. With --resume, a run in OUT with other
    /// arguments is replaced instead of refused.
    #[arg(long)]
    overwrite: bool,
    #[arg(long)]
    quiet: bool,
    /// What the model learns: value (game results), comparison (rank the
    /// move played first among the legal moves) or bonanza (comparison
    /// with the Arimaa paper's settings).
    #[arg(long, value_enum, default_value = "value")]
    objective: ObjectiveName,
    /// Comparison loss: sigmoid of each other move's margin (the paper's)
    /// or softmax log-likelihood of the move played. Default sigmoid.
    #[arg(long, value_enum)]
    comparison_loss: Option<ComparisonLossName>,
    /// Comparison: margins are divided by this, in the model's logit units
    /// (default 1; 0.0002 with bonanza: the paper's material units).
    #[arg(long)]
    temperature: Option<f64>,
    /// Comparison (sigmoid): sum or mean over a position's other moves
    /// (default mean; sum with bonanza).
    #[arg(long, value_enum)]
    reduce: Option<ReduceName>,
    /// Comparison: draw K other moves per position (seeded) instead of
    /// all of them.
    #[arg(long)]
    sample: Option<usize>,
    /// Comparison: children per forward pass (bounds memory; default 4096).
    #[arg(long)]
    chunk: Option<usize>,
    /// Comparison: weight of the value loss added to the comparison loss
    /// (default 0).
    #[arg(long)]
    value_weight: Option<f64>,
    /// Value+policy training: weight of the policy head's cross-entropy
    /// against the dataset's policy targets (search visit shares), added to
    /// the value loss; needs a model with a policy head (0: value only).
    #[arg(long, default_value_t = 0.0)]
    policy_weight: f64,
    /// Map each training example by a random board symmetry its encoder
    /// declares (the Amazons encoders: the 8 of the square board); value
    /// training only.
    #[arg(long)]
    augment: bool,
    /// Weigh the rows whose source (the game's file or self-play players)
    /// starts with PREFIX by W in the losses, e.g. `allgames2002.txt=20`
    /// to count each expert position as twenty self-play ones; repeatable,
    /// the longest matching prefix decides, other rows weigh 1. Value and
    /// policy training.
    #[arg(long = "source-weight", value_name = "PREFIX=W")]
    source_weights: Vec<plies::dataset::SourceWeight>,
}

/// Parses `--device` (see [`plies::util::parse_device`]).
pub fn parse_device(s: &str) -> anyhow::Result<Device> {
    Ok(plies::util::parse_device(s)?)
}

fn optimizer(a: &FitArgs) -> OptimizerConfig {
    let bonanza = a.objective == ObjectiveName::Bonanza;
    let default = if bonanza {
        OptName::Sgd
    } else {
        OptName::Adamw
    };
    match a.optimizer.unwrap_or(default) {
        OptName::Sgd => OptimizerConfig::Sgd {
            lr: a.lr.unwrap_or(if bonanza {
                plies::train::comparison::BONANZA_LR
            } else {
                0.01
            }),
        },
        OptName::Momentum | OptName::Nesterov => {
            let d = MomentumConfig::default();
            OptimizerConfig::Momentum(MomentumConfig {
                lr: a.lr.unwrap_or(d.lr),
                momentum: a.momentum.unwrap_or(d.momentum),
                dampening: 0.0,
                weight_decay: a.weight_decay.unwrap_or(d.weight_decay),
                nesterov: matches!(a.optimizer, Some(OptName::Nesterov)),
            })
        }
        OptName::Rmsprop => {
            let d = RmsPropConfig::default();
            OptimizerConfig::RmsProp(RmsPropConfig {
                lr: a.lr.unwrap_or(d.lr),
                alpha: a.alpha.unwrap_or(d.alpha),
                eps: a.eps.unwrap_or(d.eps),
                weight_decay: a.weight_decay.unwrap_or(d.weight_decay),
                momentum: a.momentum.unwrap_or(d.momentum),
                centered: false,
            })
        }
        OptName::Adamw => {
            let d = AdamWConfig::default();
            OptimizerConfig::AdamW(AdamWConfig {
                lr: a.lr.unwrap_or(d.lr),
                beta1: a.beta1.unwrap_or(d.beta1),
                beta2: a.beta2.unwrap_or(d.beta2),
                eps: a.eps.unwrap_or(d.eps),
                weight_decay: a.weight_decay.unwrap_or(d.weight_decay),
            })
        }
    }
}

/// The comparison objective the flags ask for (`None`: value regression).
fn comparison(a: &FitArgs) -> Option<ComparisonConfig> {
    let mut c = match a.objective {
        ObjectiveName::Value => return None,
        ObjectiveName::Comparison => ComparisonConfig::default(),
        ObjectiveName::Bonanza => ComparisonConfig::bonanza(),
    };
    if let Some(l) = a.comparison_loss {
        c.loss = match l {
            ComparisonLossName::Sigmoid => ComparisonLoss::Sigmoid,
            ComparisonLossName::Softmax => ComparisonLoss::Softmax,
        };
    }
    if let Some(r) = a.reduce {
        c.reduce = match r {
            ReduceName::Sum => Reduce::Sum,
            ReduceName::Mean => Reduce::Mean,
        };
    }
    c.temperature = a.temperature.unwrap_or(c.temperature);
    c.sample = a.sample.or(c.sample);
    c.chunk = a.chunk.unwrap_or(c.chunk);
    c.value_weight = a.value_weight.unwrap_or(c.value_weight);
    Some(c)
}

/// `plies train ...`: a subcommand, or the engine.
pub fn run(a: TrainArgs) -> anyhow::Result<ExitCode> {
    match a.cmd {
        Some(cmd) => super::train::run(cmd),
        None => run_fit(*a.fit),
    }
}

/// Runs the training engine.
pub fn run_fit(a: FitArgs) -> anyhow::Result<ExitCode> {
    let need = |name: &str| {
        anyhow::anyhow!("plies train: --{name} is required (or a subcommand: td, supervised, fit); see plies train --help")
    };
    let data = a.data.clone().ok_or_else(|| need("data"))?;
    let model_spec = a.model.clone().ok_or_else(|| need("model"))?;
    let out = a.out.clone().ok_or_else(|| need("out"))?;
    let device = parse_device(&a.device)?;
    let dataset = Dataset::open(&data)?;
    let (model, init_weights) = resolve_model(&model_spec, &dataset)?;
    let schedule = ScheduleSpec::parse(&a.schedule)?;
    let comparison = comparison(&a);
    let comparison_only = [
        (a.comparison_loss.is_some(), "comparison-loss"),
        (a.temperature.is_some(), "temperature"),
        (a.reduce.is_some(), "reduce"),
        (a.sample.is_some(), "sample"),
        (a.chunk.is_some(), "chunk"),
        (a.value_weight.is_some(), "value-weight"),
    ];
    if comparison.is_none() {
        if let Some((_, flag)) = comparison_only.iter().find(|(given, _)| *given) {
            anyhow::bail!("--{flag} applies to --objective comparison or bonanza only");
        }
    }
    let cfg = FitConfig {
        data: data.clone(),
        out: out.clone(),
        model,
        model_source: model_spec,
        init_weights,
        optimizer: optimizer(&a),
        loss: match a.loss {
            LossName::Mse => plies::train::loss::LossKind::Mse,
            LossName::Bce => plies::train::loss::LossKind::Bce,
        },
        l1: a.l1,
        l2: a.l2,
        clip: a.clip,
        schedule,
        warmup_steps: a.warmup,
        epochs: a.epochs,
        batch_size: a.batch.unwrap_or(if a.objective == ObjectiveName::Bonanza {
            1
        } else {
            256
        }),
        buffer_rows: a.buffer_rows,
        seed: a.seed,
        patience: a.patience,
        save_every: a.save_every,
        device_name: a.device.clone(),
        precision: a.precision,
        resume: a.resume,
        overwrite: a.overwrite,
        quiet: a.quiet,
        comparison,
        policy_weight: a.policy_weight,
        augment: a.augment,
        source_weights: plies::dataset::SourceWeights::new(a.source_weights.clone())
            .map_err(|why| anyhow::anyhow!("--source-weight: {why}"))?,
    };
    if !a.quiet {
        eprintln!(
            "training {} {}on {} ({} train / {} valid positions) with {} on {} in {}",
            cfg.model.describe(),
            match &cfg.comparison {
                Some(c) => format!("by comparison ({c:?}) "),
                None => String::new(),
            },
            data.display(),
            dataset.num_rows(Some(plies::dataset::Split::Train)),
            dataset.num_rows(Some(plies::dataset::Split::Valid)),
            cfg.optimizer.kind(),
            a.device,
            cfg.precision
        );
    }
    let report = fit(&cfg, &device)?;
    if report.already_finished && !a.quiet {
        eprintln!("{}: the run had already finished", out.display());
    }
    println!("{}", report.table());
    if report.stopped_early {
        println!(
            "stopped early: no better validation loss for {} epochs",
            a.patience.unwrap_or(0)
        );
    }
    if let (Some(e), Some(l)) = (report.best_epoch, report.best_valid_loss) {
        println!(
            "best epoch {e} (loss {l:.5}) in {}",
            out.join("best").display()
        );
    }
    println!(
        "last model in {}; metrics in {}",
        out.display(),
        out.join("metrics.csv").display()
    );
    Ok(ExitCode::SUCCESS)
}
