//! `plies bench train` and `plies bench infer`: positions per second of a
//! value network's training step and forward pass on the CPU, for plies'
//! fused kernels, for the same model through candle's stock ops, and for
//! PyTorch (`scripts/bench_torch_models.py`) on the same architecture,
//! batch and thread count in the same run, with the ratios plies/PyTorch.

use anyhow::{bail, Context};
use candle_core::{DType, Device, Tensor};
use candle_nn::{Optimizer, VarBuilder, VarMap};
use clap::{Args, ValueEnum};
use plies::bench::peer::{self, PeerError};
use plies::model::{trainable_vars, Cnn3, Cnn3Config, InputShape, ResNet, ResNetConfig, ValueNet};
use plies::optim::{Momentum, MomentumConfig};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchModel {
    /// 6x8x8 planes -> 48 filters 4x4 (valid) -> tanh -> 384 tanh -> 1 sigmoid.
    Cnn3,
    /// The residual net's `tiny` preset on 6x8x8 planes, value head only:
    /// conv3x3 stem, 2 blocks of 32 channels (conv3x3-BN-relu-conv3x3-BN +
    /// skip), value head conv1x1-BN-relu-FC 64-relu-FC 1-sigmoid.
    ResnetTiny,
    /// The `small` preset: 6 blocks of 64 channels, value head 128.
    ResnetSmall,
}

#[derive(Args)]
pub struct ModelBenchCommon {
    #[arg(long, value_enum, default_value = "cnn3")]
    model: BenchModel,
    /// Threads on both sides (RAYON_NUM_THREADS for plies,
    /// torch.set_num_threads for PyTorch); default: RAYON_NUM_THREADS, else
    /// the cores.
    #[arg(long)]
    threads: Option<usize>,
    /// Seconds per timed round (at least 3 iterations); the best of the
    /// rounds counts.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Python with torch (default: $PLIES_TORCH_PYTHON, then
    /// .venv-torch/bin/python, then python3).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the PyTorch column.
    #[arg(long)]
    no_torch: bool,
    /// Skip the candle stock-ops column.
    #[arg(long)]
    no_stock: bool,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct TrainBenchArgs {
    #[command(flatten)]
    common: ModelBenchCommon,
    #[arg(long, default_value_t = 1024)]
    batch: usize,
    /// Minimum training steps per timed round.
    #[arg(long, default_value_t = 10)]
    steps: usize,
}

#[derive(Args)]
pub struct InferBenchArgs {
    #[command(flatten)]
    common: ModelBenchCommon,
    /// Batch sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,64,1024")]
    batch: Vec<usize>,
}

const INPUT: [usize; 3] = [6, 8, 8];

fn resnet_config(m: BenchModel) -> Option<ResNetConfig> {
    let input = InputShape::new(INPUT, 0);
    match m {
        BenchModel::Cnn3 => None,
        BenchModel::ResnetTiny => Some(ResNetConfig::tiny(input)),
        BenchModel::ResnetSmall => Some(ResNetConfig::small(input)),
    }
}

fn model_name(m: BenchModel) -> &'static str {
    match m {
        BenchModel::Cnn3 => "cnn3",
        BenchModel::ResnetTiny => "resnet-tiny",
        BenchModel::ResnetSmall => "resnet-small",
    }
}

fn describe(m: BenchModel) -> String {
    match resnet_config(m) {
        None => {
            let c = Cnn3Config::default();
            format!(
                "cnn3: {}x{}x{} -> {} filters {}x{} -> tanh -> {} tanh -> 1 sigmoid",
                INPUT[0], INPUT[1], INPUT[2], c.filters, c.kernel[0], c.kernel[1], c.hidden
            )
        }
        Some(r) => format!(
            "{}: {}x{}x{} -> conv3x3 {} -> BN -> relu -> {} x [conv3x3-BN-relu-conv3x3-BN + skip -> relu] \
             -> conv1x1 1-BN-relu -> {} relu -> 1 sigmoid (BN train mode when training, eval mode \
             when inferring)",
            model_name(m),
            INPUT[0],
            INPUT[1],
            INPUT[2],
            r.channels,
            r.blocks,
            r.value_hidden
        ),
    }
}

/// Makes rayon's pool (and candle's matrix products) use `threads`.
fn set_threads(threads: Option<usize>) -> anyhow::Result<usize> {
    if let Some(n) = threads {
        if n == 0 {
            bail!("--threads must be at least 1");
        }
        std::env::set_var("RAYON_NUM_THREADS", n.to_string());
        // Fails only when the pool already runs; checked just below.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global();
        if rayon::current_num_threads() != n {
            bail!(
                "--threads {n}: the thread pool already runs {} threads",
                rayon::current_num_threads()
            );
        }
    }
    Ok(rayon::current_num_threads())
}

/// Best rate (iterations per second) of `rounds` rounds, each running at
/// least `min_seconds` and `min_iters` iterations.
fn timed(
    mut f: impl FnMut() -> anyhow::Result<()>,
    min_seconds: f64,
    min_iters: usize,
    rounds: usize,
) -> anyhow::Result<f64> {
    let mut best = 0f64;
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        let mut n = 0usize;
        loop {
            f()?;
            n += 1;
            let dt = t.elapsed().as_secs_f64();
            if n >= min_iters.max(1) && dt >= min_seconds {
                best = best.max(n as f64 / dt);
                break;
            }
        }
    }
    Ok(best)
}

fn planes(batch: usize) -> anyhow::Result<Tensor> {
    let dev = Device::Cpu;
    Ok(
        Tensor::rand(0f32, 1.0, (batch, INPUT[0], INPUT[1], INPUT[2]), &dev)?
            .lt(0.15)?
            .to_dtype(DType::F32)?,
    )
}

enum Net {
    Cnn3(Cnn3),
    ResNet(Box<ResNet>),
}

impl Net {
    /// Values `[B]`; `train` is batch norm's mode.
    fn forward(&self, x: &Tensor, train: bool, stock: bool) -> anyhow::Result<Tensor> {
        Ok(match self {
            Net::Cnn3(n) if stock => n.forward_stock(x)?.flatten_all()?,
            Net::Cnn3(n) => n.forward(x)?.flatten_all()?,
            Net::ResNet(n) if stock => n.forward_stock(x, None, train)?.value,
            Net::ResNet(n) => ValueNet::forward(n.as_ref(), x, None, train)?.value,
        })
    }
}

fn new_net(model: BenchModel) -> anyhow::Result<(VarMap, Net)> {
    let vm = VarMap::new();
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
    let net = match resnet_config(model) {
        None => Net::Cnn3(Cnn3::new(&Cnn3Config::default(), INPUT, vb)?),
        Some(cfg) => Net::ResNet(Box::new(ResNet::new(&cfg, vb)?)),
    };
    Ok((vm, net))
}

/// Training steps per second (forward + MSE + backward + Nesterov SGD).
fn train_rate(a: &TrainBenchArgs, stock: bool) -> anyhow::Result<f64> {
    let c = &a.common;
    let (vm, net) = new_net(c.model)?;
    let mut opt = Momentum::new(
        trainable_vars(&vm),
        MomentumConfig {
            lr: 0.01,
            momentum: 0.9,
            nesterov: true,
            ..Default::default()
        },
    )?;
    let x = planes(a.batch)?;
    let t = Tensor::rand(0f32, 1.0, a.batch, &Device::Cpu)?;
    let mut step = || -> anyhow::Result<()> {
        let y = net.forward(&x, true, stock)?;
        let loss = (y - &t)?.sqr()?.mean_all()?;
        opt.backward_step(&loss)?;
        Ok(())
    };
    for _ in 0..3 {
        step()?;
    }
    timed(step, c.seconds, a.steps, c.rounds)
}

fn infer_rate(c: &ModelBenchCommon, batch: usize, stock: bool) -> anyhow::Result<f64> {
    let (_vm, net) = new_net(c.model)?;
    if let Net::ResNet(n) = &net {
        // As an evaluator serves it: batch norms folded once.
        n.freeze()?;
    }
    let x = planes(batch)?;
    let fwd = || -> anyhow::Result<()> {
        drop(net.forward(&x, false, stock)?);
        Ok(())
    };
    for _ in 0..3 {
        fwd()?;
    }
    timed(fwd, c.seconds, 3, c.rounds)
}

/// PyTorch's positions/s per batch, and its version; `Err` is the note to
/// print when it cannot run.
fn run_torch(
    c: &ModelBenchCommon,
    mode: &str,
    batches: &[usize],
    threads: usize,
) -> Result<(String, Vec<f64>), PeerError> {
    let python = peer::find_python(c.python.clone(), "PLIES_TORCH_PYTHON", ".venv-torch");
    peer::require_modules(
        &python,
        "torch",
        "set --python or PLIES_TORCH_PYTHON, or \
         `python3 -m venv .venv-torch && .venv-torch/bin/pip install torch`",
    )?;
    let mut cmd = Command::new(&python);
    cmd.arg(peer::script_path("bench_torch_models.py"))
        .args(["--mode", mode, "--threads", &threads.to_string()])
        .arg("--batch")
        .args(batches.iter().map(usize::to_string))
        .arg("--input")
        .args(INPUT.iter().map(usize::to_string));
    match resnet_config(c.model) {
        None => {
            let cfg = Cnn3Config::default();
            cmd.args(["--arch", "cnn3", "--filters", &cfg.filters.to_string()])
                .arg("--kernel")
                .args(cfg.kernel.iter().map(usize::to_string))
                .args(["--hidden", &cfg.hidden.to_string()]);
        }
        Some(r) => {
            cmd.args(["--arch", "resnet"])
                .args(["--blocks", &r.blocks.to_string()])
                .args(["--channels", &r.channels.to_string()])
                .args(["--hidden", &r.value_hidden.to_string()]);
        }
    }
    cmd.args(["--seconds", &c.seconds.to_string()])
        .args(["--rounds", &c.rounds.max(1).to_string()])
        .env("OMP_NUM_THREADS", threads.to_string());
    let out = peer::run_peer(&mut cmd, "the PyTorch benchmark")?;
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| PeerError::Output {
            what: "the PyTorch benchmark",
            why: e.to_string(),
        })?;
    let version = v["torch"].as_str().unwrap_or("?").to_string();
    let rates: Option<Vec<f64>> = v["results"].as_array().map(|r| {
        r.iter()
            .filter_map(|r| r["positions_per_s"].as_f64())
            .collect()
    });
    match rates {
        Some(r) if r.len() == batches.len() => Ok((version, r)),
        _ => Err(PeerError::Output {
            what: "the PyTorch benchmark",
            why: v.to_string(),
        }),
    }
}

struct Row {
    batch: usize,
    plies: f64,
    stock: Option<f64>,
    torch: Option<f64>,
}

fn report(
    c: &ModelBenchCommon,
    mode: &str,
    what: &str,
    threads: usize,
    rows: &[Row],
    torch: &Result<String, PeerError>,
) {
    let ratio = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a / b);
    if c.json {
        let rows: Vec<_> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "batch": r.batch,
                    "plies_positions_per_s": r.plies,
                    "plies_stock_positions_per_s": r.stock,
                    "torch_positions_per_s": r.torch,
                    "plies_over_torch": ratio(Some(r.plies), r.torch),
                    "stock_over_torch": ratio(r.stock, r.torch),
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "model": model_name(c.model), "mode": mode,
                "threads": threads, "torch": torch.as_ref().ok(),
                "torch_note": torch.as_ref().err().map(|e| e.to_string()), "rows": rows,
            })
        );
        return;
    }
    println!("{}", describe(c.model));
    println!(
        "{what}, CPU, {threads} threads, positions/s (best of {} rounds of >= {} s)",
        c.rounds.max(1),
        c.seconds
    );
    let torch_head = match torch {
        Ok(v) => format!("PyTorch {v}"),
        Err(_) => "PyTorch".to_string(),
    };
    println!(
        "{:>6} {:>14} {:>14} {:>18} {:>14} {:>14}",
        "batch", "plies", "candle stock", torch_head, "plies/PyTorch", "stock/PyTorch"
    );
    let num = |v: Option<f64>, prec: usize| v.map_or("-".to_string(), |v| format!("{v:.prec$}"));
    for r in rows {
        println!(
            "{:>6} {:>14} {:>14} {:>18} {:>14} {:>14}",
            r.batch,
            num(Some(r.plies), 0),
            num(r.stock, 0),
            num(r.torch, 0),
            num(ratio(Some(r.plies), r.torch), 2),
            num(ratio(r.stock, r.torch), 2),
        );
    }
    if let Err(note) = torch {
        println!("note: PyTorch skipped: {note}");
    }
}

fn torch_column(
    c: &ModelBenchCommon,
    mode: &str,
    batches: &[usize],
    threads: usize,
) -> (Result<String, PeerError>, Vec<Option<f64>>) {
    if c.no_torch {
        return (
            Err(PeerError::NotRun("--no-torch".into())),
            vec![None; batches.len()],
        );
    }
    match run_torch(c, mode, batches, threads) {
        Ok((v, r)) => (Ok(v), r.into_iter().map(Some).collect()),
        Err(e) => (Err(e), vec![None; batches.len()]),
    }
}

pub fn bench_train(a: TrainBenchArgs) -> anyhow::Result<ExitCode> {
    if a.batch == 0 {
        bail!("--batch must be at least 1");
    }
    let threads = set_threads(a.common.threads)?;
    let b = a.batch as f64;
    let plies = train_rate(&a, false).context("plies training")? * b;
    let stock = if a.common.no_stock {
        None
    } else {
        Some(train_rate(&a, true).context("candle stock training")? * b)
    };
    let (torch, tr) = torch_column(&a.common, "train", &[a.batch], threads);
    let rows = [Row {
        batch: a.batch,
        plies,
        stock,
        torch: tr[0],
    }];
    report(
        &a.common,
        "train",
        "training step (forward + MSE + backward + SGD Nesterov)",
        threads,
        &rows,
        &torch,
    );
    Ok(ExitCode::SUCCESS)
}

pub fn bench_infer(a: InferBenchArgs) -> anyhow::Result<ExitCode> {
    if a.batch.is_empty() || a.batch.contains(&0) {
        bail!("--batch: sizes must be at least 1");
    }
    let threads = set_threads(a.common.threads)?;
    let mut rows = Vec::new();
    for &batch in &a.batch {
        let b = batch as f64;
        let plies = infer_rate(&a.common, batch, false).context("plies inference")? * b;
        let stock = if a.common.no_stock {
            None
        } else {
            Some(infer_rate(&a.common, batch, true).context("candle stock inference")? * b)
        };
        rows.push(Row {
            batch,
            plies,
            stock,
            torch: None,
        });
    }
    let (torch, tr) = torch_column(&a.common, "infer", &a.batch, threads);
    for (r, t) in rows.iter_mut().zip(tr) {
        r.torch = t;
    }
    report(
        &a.common,
        "infer",
        "inference (forward only)",
        threads,
        &rows,
        &torch,
    );
    Ok(ExitCode::SUCCESS)
}
