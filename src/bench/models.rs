//! Positions per second of a value network's training step and forward
//! pass on the CPU, for plies' fused kernels, for the same model through
//! candle's stock ops, and for PyTorch (`scripts/bench_torch_models.py`) on
//! the same architecture, batch and thread count in the same run, with the
//! ratios plies/PyTorch.

use std::fmt;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};

use super::peer::{self, peer_head, PeerError, PeerRun};
use super::report::{num, ratio};
use super::{mse_step, nesterov_sgd, BenchError, Result, StepContext};
use crate::model::{
    trainable_vars, Cnn3, Cnn3Config, Cnn3NetConfig, InputShape, ModelConfig, ResNet, ResNetConfig,
    ValueNet,
};

/// The benchmarked networks, value head only, on Arimaa's 6x8x8 planes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchModel {
    /// 6x8x8 planes -> 48 filters 4x4 (valid) -> tanh -> 384 tanh -> 1 sigmoid.
    Cnn3,
    /// The residual net's `tiny` preset: 2 blocks of 32 channels, value
    /// head 64.
    ResnetTiny,
    /// The `small` preset: 6 blocks of 64 channels, value head 128.
    ResnetSmall,
}

/// The input planes of every benchmarked network.
pub const INPUT: [usize; 3] = [6, 8, 8];

impl BenchModel {
    pub fn name(self) -> &'static str {
        match self {
            BenchModel::Cnn3 => "cnn3",
            BenchModel::ResnetTiny => "resnet-tiny",
            BenchModel::ResnetSmall => "resnet-small",
        }
    }

    fn resnet(self) -> Option<ResNetConfig> {
        let input = InputShape::new(INPUT, 0);
        match self {
            BenchModel::Cnn3 => None,
            BenchModel::ResnetTiny => Some(ResNetConfig::tiny(input)),
            BenchModel::ResnetSmall => Some(ResNetConfig::small(input)),
        }
    }

    /// The model as a checkpoint's configuration names it.
    pub fn config(self) -> ModelConfig {
        match self.resnet() {
            None => ModelConfig::Cnn3(Cnn3NetConfig::new(
                InputShape::new(INPUT, 0),
                Cnn3Config::default(),
            )),
            Some(r) => ModelConfig::Resnet(r),
        }
    }

    /// The architecture, layer by layer, for report headers.
    pub fn describe(self) -> String {
        match self.resnet() {
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
                self.name(),
                INPUT[0],
                INPUT[1],
                INPUT[2],
                r.channels,
                r.blocks,
                r.value_hidden
            ),
        }
    }
}

/// What `bench train` and `bench infer` share.
pub struct ModelBenchOptions {
    pub model: BenchModel,
    /// Threads on both sides (RAYON_NUM_THREADS for plies,
    /// torch.set_num_threads for PyTorch); `None`: the pool as it is.
    pub threads: Option<usize>,
    /// Seconds per timed round (at least 3 iterations); the best of the
    /// rounds counts.
    pub seconds: f64,
    pub rounds: usize,
    /// Python with torch (`None`: $PLIES_TORCH_PYTHON, then
    /// .venv-torch/bin/python, then python3).
    pub python: Option<PathBuf>,
    /// Skip the PyTorch column.
    pub no_torch: bool,
    /// Skip the candle stock-ops column.
    pub no_stock: bool,
}

pub struct TrainOptions {
    pub common: ModelBenchOptions,
    pub batch: usize,
    /// Minimum training steps per timed round.
    pub steps: usize,
}

pub struct InferOptions {
    pub common: ModelBenchOptions,
    pub batches: Vec<usize>,
}

/// Positions/s at one batch size.
pub struct ModelRow {
    pub batch: usize,
    pub plies: f64,
    pub stock: Option<f64>,
    pub torch: Option<f64>,
}

pub struct ModelReport {
    pub model: BenchModel,
    /// `train` or `infer`.
    pub mode: &'static str,
    /// What one iteration does, for the header.
    pub what: &'static str,
    pub threads: usize,
    pub rounds: usize,
    pub seconds: f64,
    pub rows: Vec<ModelRow>,
    /// PyTorch's version, or why it did not run.
    pub torch: PeerRun,
}

/// Makes rayon's pool (and candle's matrix products) use `threads`.
fn set_threads(threads: Option<usize>) -> Result<usize> {
    if let Some(n) = threads {
        if n == 0 {
            return Err(BenchError::bad_option("--threads", "must be at least 1"));
        }
        std::env::set_var("RAYON_NUM_THREADS", n.to_string());
        // Fails only when the pool already runs; checked just below.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global();
        if rayon::current_num_threads() != n {
            return Err(BenchError::bad_option(
                format!("--threads {n}"),
                format!(
                    "the thread pool already runs {} threads",
                    rayon::current_num_threads()
                ),
            ));
        }
    }
    Ok(rayon::current_num_threads())
}

/// Best rate (iterations per second) of `rounds` rounds, each running at
/// least `min_seconds` and `min_iters` iterations.
pub(crate) fn timed(
    mut f: impl FnMut() -> Result<()>,
    min_seconds: f64,
    min_iters: usize,
    rounds: usize,
) -> Result<f64> {
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

fn planes(batch: usize) -> Result<Tensor> {
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
    /// Values `[B]`; `train`: a training step's forward (batch norm's mode,
    /// cnn3's training op).
    fn forward(&self, x: &Tensor, train: bool, stock: bool) -> Result<Tensor> {
        Ok(match self {
            Net::Cnn3(n) if stock => n.forward_stock(x)?.flatten_all()?,
            Net::Cnn3(n) => n.forward_t(x, train)?.flatten_all()?,
            Net::ResNet(n) if stock => n.forward_stock(x, None, train)?.value,
            Net::ResNet(n) => ValueNet::forward(n.as_ref(), x, None, train)?.value,
        })
    }
}

fn new_net(model: BenchModel) -> Result<(VarMap, Net)> {
    let vm = VarMap::new();
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
    let net = match model.resnet() {
        None => Net::Cnn3(Cnn3::new(&Cnn3Config::default(), INPUT, vb)?),
        Some(cfg) => Net::ResNet(Box::new(ResNet::new(&cfg, vb)?)),
    };
    Ok((vm, net))
}

/// Training steps per second (forward + MSE + backward + Nesterov SGD).
fn train_rate(o: &TrainOptions, stock: bool) -> Result<f64> {
    let c = &o.common;
    let (vm, net) = new_net(c.model)?;
    let mut opt = nesterov_sgd(trainable_vars(&vm))?;
    let x = planes(o.batch)?;
    let t = Tensor::rand(0f32, 1.0, o.batch, &Device::Cpu)?;
    let mut step = || -> Result<()> {
        mse_step(&mut opt, net.forward(&x, true, stock)?, &t)?;
        Ok(())
    };
    // As `plies train` runs its steps: on the pool's own threads.
    crate::model::kernels::on_compute_pool(|| {
        for _ in 0..3 {
            step()?;
        }
        timed(step, c.seconds, o.steps, c.rounds)
    })
}

fn infer_rate(c: &ModelBenchOptions, batch: usize, stock: bool) -> Result<f64> {
    let (_vm, net) = new_net(c.model)?;
    if let Net::ResNet(n) = &net {
        // As an evaluator serves it: batch norms folded once.
        n.freeze()?;
    }
    let x = planes(batch)?;
    let fwd = || -> Result<()> {
        drop(net.forward(&x, false, stock)?);
        Ok(())
    };
    for _ in 0..3 {
        fwd()?;
    }
    timed(fwd, c.seconds, 3, c.rounds)
}

/// PyTorch's positions/s per batch, and its version.
fn run_torch(
    c: &ModelBenchOptions,
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
    match c.model.resnet() {
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

/// The PyTorch column: its version (or why not) and a rate per batch.
fn torch_column(
    c: &ModelBenchOptions,
    mode: &str,
    batches: &[usize],
    threads: usize,
) -> (PeerRun, Vec<Option<f64>>) {
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

/// plies' and (unless `no_stock`) candle's stock rate, positions/s.
fn plies_and_stock(
    c: &ModelBenchOptions,
    batch: usize,
    what: &str,
    rate: impl Fn(bool) -> Result<f64>,
) -> Result<(f64, Option<f64>)> {
    let b = batch as f64;
    let plies = rate(false).step(|| format!("plies {what}"))? * b;
    let stock = if c.no_stock {
        None
    } else {
        Some(rate(true).step(|| format!("candle stock {what}"))? * b)
    };
    Ok((plies, stock))
}

/// Training steps at `opts.batch`, plies against PyTorch.
pub fn train(opts: &TrainOptions) -> Result<ModelReport> {
    if opts.batch == 0 {
        return Err(BenchError::bad_option("--batch", "must be at least 1"));
    }
    let c = &opts.common;
    let threads = set_threads(c.threads)?;
    let (plies, stock) =
        plies_and_stock(c, opts.batch, "training", |stock| train_rate(opts, stock))?;
    let (torch, tr) = torch_column(c, "train", &[opts.batch], threads);
    let rows = vec![ModelRow {
        batch: opts.batch,
        plies,
        stock,
        torch: tr[0],
    }];
    Ok(report(
        c,
        "train",
        "training step (forward + MSE + backward + SGD Nesterov)",
        threads,
        rows,
        torch,
    ))
}

/// Forward passes at every batch size of `opts`, plies against PyTorch.
pub fn infer(opts: &InferOptions) -> Result<ModelReport> {
    if opts.batches.is_empty() || opts.batches.contains(&0) {
        return Err(BenchError::bad_option(
            "--batch",
            "sizes must be at least 1",
        ));
    }
    let c = &opts.common;
    let threads = set_threads(c.threads)?;
    let mut rows = Vec::new();
    for &batch in &opts.batches {
        let (plies, stock) =
            plies_and_stock(c, batch, "inference", |stock| infer_rate(c, batch, stock))?;
        rows.push(ModelRow {
            batch,
            plies,
            stock,
            torch: None,
        });
    }
    let (torch, tr) = torch_column(c, "infer", &opts.batches, threads);
    for (r, t) in rows.iter_mut().zip(tr) {
        r.torch = t;
    }
    Ok(report(
        c,
        "infer",
        "inference (forward only)",
        threads,
        rows,
        torch,
    ))
}

fn report(
    c: &ModelBenchOptions,
    mode: &'static str,
    what: &'static str,
    threads: usize,
    rows: Vec<ModelRow>,
    torch: PeerRun,
) -> ModelReport {
    ModelReport {
        model: c.model,
        mode,
        what,
        threads,
        rounds: c.rounds.max(1),
        seconds: c.seconds,
        rows,
        torch,
    }
}

impl ModelReport {
    pub fn to_json(&self) -> serde_json::Value {
        let rows: Vec<_> = self
            .rows
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
        serde_json::json!({
            "model": self.model.name(), "mode": self.mode,
            "threads": self.threads, "torch": self.torch.as_ref().ok(),
            "processor": crate::model::kernels::processor_name(),
            "instruction_sets": crate::model::kernels::kernel_instruction_sets(),
            "torch_note": self.torch.as_ref().err().map(|e| e.to_string()), "rows": rows,
        })
    }
}

impl fmt::Display for ModelReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.model.describe())?;
        writeln!(
            f,
            "{}, CPU, {} threads, positions/s (best of {} rounds of >= {} s)",
            self.what, self.threads, self.rounds, self.seconds
        )?;
        writeln!(
            f,
            "{}; {}",
            crate::model::kernels::processor_name(),
            crate::model::kernels::kernel_instruction_sets()
        )?;
        writeln!(
            f,
            "{:>6} {:>14} {:>14} {:>18} {:>14} {:>14}",
            "batch",
            "plies",
            "candle stock",
            peer_head("PyTorch", &self.torch),
            "plies/PyTorch",
            "stock/PyTorch"
        )?;
        for r in &self.rows {
            writeln!(
                f,
                "{:>6} {:>14} {:>14} {:>18} {:>14} {:>14}",
                r.batch,
                num(Some(r.plies), 0),
                num(r.stock, 0),
                num(r.torch, 0),
                num(ratio(Some(r.plies), r.torch), 2),
                num(ratio(r.stock, r.torch), 2),
            )?;
        }
        if let Err(note) = &self.torch {
            writeln!(f, "note: PyTorch skipped: {note}")?;
        }
        Ok(())
    }
}

impl super::report::Report for ModelReport {
    fn json(&self) -> serde_json::Result<String> {
        Ok(self.to_json().to_string())
    }
}
