//! `plies bench device`: the GPU check's benchmarks, on any device. For
//! every network of the [`plan`]: inference positions/s at every batch
//! size (f32, and bf16 where the model runs in it, with the bf16 outputs'
//! distance from f32's), training positions/s, and PyTorch on the same
//! device in the same run, eager and under torch.compile, with the same
//! weights (a plies checkpoint that `scripts/torch_models.py` loads) and
//! the same input planes; then MCTS with the batched evaluator against
//! unbatched at the plan's thread counts ([`super::mcts`]). The report
//! marks the targets met, unmet or unmeasured.
//!
//! `--quick` runs the same kinds of rows at tiny sizes, so that a CPU
//! checks the whole path (a test does) without claiming any figure.

pub mod measure;
pub mod plan;
pub mod report;
pub mod torch;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};

use super::mcts::{self, MctsOptions};
use super::peer::PeerError;
use super::{BenchError, Notes, Result, StepContext};
use crate::checkpoint::{self, CheckpointConfig, TrainingInfo};
use crate::encode::{EncoderSpec, Perspective};
use crate::games::GameKind;
use crate::infer::backend::Backend;
use crate::infer::plan::Precision;
use crate::model::ModelConfig;
use crate::train::mixed_precision::bf16_refusal;
use crate::util::atomic::write_atomic_with;
use crate::util::parse_device;
use measure::{
    abs_diff, backend_rate, build_seeded, infer_rate, on_device, train_rate, values, with_weights,
    Timing,
};
use plan::{BenchNet, Plan};
use report::{DeviceReport, InferRow, NetInfo, TrainRow};
use torch::{PeerNet, PeerPlan, PeerResult};

pub struct DeviceBenchOptions {
    /// `cpu`, `cuda`, `cuda:N` or `metal`.
    pub device: String,
    /// Tiny sizes (see [`plan::plan`]).
    pub quick: bool,
    /// Where the checkpoints and inputs the PyTorch peer reads go.
    pub work: PathBuf,
    /// Python with torch and safetensors (`None`: $PLIES_TORCH_PYTHON,
    /// then .venv-torch/bin/python, then python3).
    pub python: Option<PathBuf>,
    /// Skip PyTorch.
    pub no_torch: bool,
    /// Only these networks (by name; all when empty).
    pub nets: Vec<String>,
    /// Skip the MCTS rows.
    pub no_mcts: bool,
    pub seed: u64,
}

/// plies' figures and checks for one network, before PyTorch's are added.
struct Measured {
    info: NetInfo,
    infer: Vec<InferRow>,
    train: Vec<TrainRow>,
    peer: PeerNet,
}

/// Runs the plan (or the part `opts` asks for) on `opts.device`; progress
/// goes to `notes`.
pub fn run(opts: &DeviceBenchOptions, notes: Notes) -> Result<DeviceReport> {
    let device = parse_device(&opts.device)?;
    let plan = plan::plan(opts.quick).only(&opts.nets, !opts.no_mcts)?;
    let mut measured = Vec::new();
    for net in &plan.nets {
        let seed = opts.seed + net.seed_offset;
        measured.push(
            measure_net(net, &plan, seed, &device, &opts.work, notes)
                .step(|| format!("plies, {}", net.name))?,
        );
    }
    // What cuDNN chose for the training convolutions, measured above on
    // this thread.
    let cudnn = crate::model::device_kernels::conv::cudnn_choices();
    let torch = if opts.no_torch {
        Err(PeerError::NotRun("--no-torch".into()))
    } else {
        notes("PyTorch on the same device: eager, then torch.compile");
        let peer_plan = PeerPlan {
            device: opts.device.clone(),
            seconds: plan.seconds,
            rounds: plan.rounds,
            seed: opts.seed,
            nets: measured
                .iter_mut()
                .map(|m| std::mem::take(&mut m.peer))
                .collect(),
        };
        torch::run(&peer_plan, &opts.work, opts.python.clone())?
    };
    let mcts = if plan.mcts_threads.is_empty() {
        Vec::new()
    } else {
        notes(&format!(
            "MCTS on Arimaa, {} simulations, threads {:?}",
            plan.mcts_sims, plan.mcts_threads
        ));
        mcts_rows(opts, &plan, notes)?
    };
    let mut report = assemble(opts, &plan, &device, measured, torch, mcts);
    report.cudnn = cudnn;
    Ok(report)
}

/// MCTS with the batched evaluator against unbatched ([`mcts::run`]).
fn mcts_rows(opts: &DeviceBenchOptions, plan: &Plan, notes: Notes) -> Result<Vec<mcts::MctsRow>> {
    let report = mcts::run(
        &MctsOptions {
            game: GameKind::Arimaa,
            model: plan.mcts_model.into(),
            threads: plan.mcts_threads.clone(),
            sims: plan.mcts_sims,
            positions: plan.mcts_positions,
            max_wait_us: 500,
            max_batch: None,
            rounds: plan.rounds,
            device: opts.device.clone(),
            seed: opts.seed,
        },
        notes,
    )
    .step(|| "MCTS".into())?;
    Ok(report.rows)
}

/// The report: plies' rows with PyTorch's figures beside them.
fn assemble(
    opts: &DeviceBenchOptions,
    plan: &Plan,
    device: &Device,
    measured: Vec<Measured>,
    torch: std::result::Result<PeerResult, PeerError>,
    mcts: Vec<mcts::MctsRow>,
) -> DeviceReport {
    let (version, gpu, peer) = match torch {
        Ok(p) => (Ok(p.torch), p.device_name, p.nets),
        Err(e) => (Err(e), None, Vec::new()),
    };
    let (mut nets, mut infer, mut train) = (Vec::new(), Vec::new(), Vec::new());
    for m in measured {
        let theirs = peer.iter().find(|p| p.name == m.info.net);
        let mut info = m.info;
        if let Some(t) = theirs {
            info.torch_max_abs_diff = t.max_abs_diff;
            info.compile_note = t.compile_note.clone();
            info.tuned_note = t.tuned_note.clone();
        }
        for mut row in m.infer {
            if let Some(&(_, eager, compiled)) =
                theirs.and_then(|t| t.infer.iter().find(|r| r.0 == row.batch))
            {
                (row.torch_eager, row.torch_compile) = (eager, compiled);
            }
            if let Some(&(_, tuned)) =
                theirs.and_then(|t| t.tuned.iter().find(|r| r.0 == row.batch))
            {
                row.torch_tuned = tuned;
            }
            infer.push(row);
        }
        for mut row in m.train {
            if let Some(&(_, eager, compiled, bf16)) =
                theirs.and_then(|t| t.train.iter().find(|r| r.0 == row.batch))
            {
                (row.torch_eager, row.torch_compile, row.torch_bf16) = (eager, compiled, bf16);
            }
            train.push(row);
        }
        nets.push(info);
    }
    DeviceReport {
        device: opts.device.clone(),
        // Only a GPU's name, and only on a GPU.
        gpu: gpu.filter(|_| !device.is_cpu()),
        quick: opts.quick,
        seconds: plan.seconds,
        rounds: plan.rounds,
        torch: version,
        nets,
        infer,
        train,
        mcts_model: plan.mcts_model.into(),
        mcts_sims: plan.mcts_sims,
        mcts_positions: plan.mcts_positions,
        mcts,
        cudnn: None,
    }
}

/// plies' inference (f32 and bf16) and training figures for one network,
/// and the files its PyTorch peer reads.
fn measure_net(
    bench: &BenchNet,
    plan: &Plan,
    seed: u64,
    device: &Device,
    work: &Path,
    notes: Notes,
) -> Result<Measured> {
    let cfg = &bench.config;
    let shape = cfg
        .input()
        .ok_or_else(|| BenchError::Unsupported(format!("{}: no fixed input", bench.name)))?
        .planes;
    let most = plan
        .batches
        .iter()
        .copied()
        .chain(plan.train_batches.iter().copied())
        .max()
        .unwrap_or(1);
    let check = plan.check_rows.min(most);
    let built = build_seeded(cfg, seed, device)?;
    let weights = built.weights;
    let timing = Timing {
        seconds: plan.seconds,
        rounds: plan.rounds,
    };
    let planes = measure::planes(shape, most, seed)?;
    let net = built.net;
    let expected = values(
        net.as_ref(),
        &on_device(&planes, check, DType::F32, device)?,
    )?;

    // bf16 where the model runs in it: its outputs against f32's.
    let mut bf16_note = None;
    let bf16 = with_weights(cfg, &weights, DType::BF16, device).and_then(|n| {
        let v = values(n.as_ref(), &on_device(&planes, check, DType::BF16, device)?)?;
        Ok((n, abs_diff(&v, &expected)))
    });
    let (bf16, bf16_diff) = match bf16 {
        Ok((n, d)) => (Some(n), Some(d)),
        Err(e) => {
            bf16_note = Some(first_line(&e));
            (None, None)
        }
    };

    // The native backend (its plan on cuDNN, CUDA only), f32 and bf16,
    // each checked against candle's f32 values first.
    let globals = cfg.input().map_or(0, |i| i.globals);
    let mut native_note = None;
    let mut native_diff = [None, None];
    let mut native_name = None;
    let mut natives: Vec<(Precision, Box<dyn Backend>)> = Vec::new();
    if device.is_cuda() {
        let probe = measure::encoded(&planes, check, globals)?;
        for (k, precision) in [Precision::F32, Precision::Bf16].into_iter().enumerate() {
            let built =
                measure::native_backend(cfg, &weights, shape, device, precision).and_then(|b| {
                    let v = b.run(&probe, false)?.values;
                    Ok((b, v))
                });
            match built {
                Ok((b, v)) => {
                    native_diff[k] = Some(abs_diff(&v, &expected).0);
                    native_name.get_or_insert_with(|| b.name());
                    natives.push((precision, b));
                }
                Err(e) => {
                    native_note.get_or_insert(format!("{precision}: {}", first_line(&e)));
                }
            }
        }
    }

    let mut infer = Vec::new();
    for &batch in &plan.batches {
        let x = on_device(&planes, batch, DType::F32, device)?;
        let plies =
            infer_rate(net.as_ref(), &x, timing).step(|| format!("inference at {batch}"))?;
        let plies_bf16 = match &bf16 {
            Some(n) => match infer_rate(n.as_ref(), &x.to_dtype(DType::BF16)?, timing) {
                Ok(r) => Some(r),
                Err(e) => {
                    bf16_note.get_or_insert(format!("batch {batch}: {}", first_line(&e)));
                    None
                }
            },
            None => None,
        };
        let mut native = [None, None];
        if !natives.is_empty() {
            let enc = measure::encoded(&planes, batch, globals)?;
            for (precision, backend) in &natives {
                let k = usize::from(*precision == Precision::Bf16);
                match backend_rate(backend.as_ref(), &enc, timing) {
                    Ok(r) => native[k] = Some(r),
                    Err(e) => {
                        native_note.get_or_insert(format!(
                            "{precision} at batch {batch}: {}",
                            first_line(&e)
                        ));
                    }
                }
            }
        }
        notes(&format!(
            "{} batch {batch}: {plies:.0} positions/s{}{}",
            bench.name,
            plies_bf16.map_or(String::new(), |b| format!(", bf16 {b:.0}")),
            native[0].map_or(String::new(), |n| format!(", native {n:.0}"))
        ));
        infer.push(InferRow {
            net: bench.name.clone(),
            batch,
            plies,
            plies_bf16,
            native: native[0],
            native_bf16: native[1],
            torch_eager: None,
            torch_compile: None,
            torch_tuned: Default::default(),
        });
    }
    drop((net, bf16, natives));
    let mut train = Vec::new();
    for &batch in &plan.train_batches {
        let x = on_device(&planes, batch, DType::F32, device)?;
        let plies = train_rate(cfg, seed, &x, timing, Precision::F32)
            .step(|| format!("training at {batch}"))?;
        let (plies_bf16, bf16_note) = match bf16_refusal(cfg) {
            Some(why) => (None, Some(why.to_string())),
            None => match train_rate(cfg, seed, &x, timing, Precision::Bf16) {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(first_line(&e))),
            },
        };
        notes(&format!(
            "{} training at {batch}: {plies:.0} positions/s{}",
            bench.name,
            plies_bf16.map_or(String::new(), |b| format!(", bf16 {b:.0}"))
        ));
        train.push(TrainRow {
            net: bench.name.clone(),
            batch,
            plies,
            plies_bf16,
            torch_eager: None,
            torch_compile: None,
            torch_bf16: None,
            bf16_note,
        });
    }
    let peer = write_peer_files(bench, plan, seed, work, &weights, &planes, &expected)?;
    Ok(Measured {
        info: NetInfo {
            net: bench.name.clone(),
            architecture: cfg.describe(),
            parameters: cfg.num_params(),
            bf16_max_abs_diff: bf16_diff.map(|d| d.0),
            bf16_mean_abs_diff: bf16_diff.map(|d| d.1),
            bf16_note,
            native_backend: native_name,
            native_max_abs_diff: native_diff[0],
            native_bf16_max_abs_diff: native_diff[1],
            native_note,
            torch_max_abs_diff: None,
            compile_note: None,
            tuned_note: None,
        },
        infer,
        train,
        peer,
    })
}

/// An error's first line (candle appends a backtrace when RUST_BACKTRACE
/// is set).
fn first_line(e: &BenchError) -> String {
    e.to_string().lines().next().unwrap_or_default().to_string()
}

/// The checkpoint and the inputs (planes, plies' values of the first rows)
/// of one network, under `work`.
fn write_peer_files(
    bench: &BenchNet,
    plan: &Plan,
    seed: u64,
    work: &Path,
    weights: &HashMap<String, Tensor>,
    planes: &Tensor,
    expected: &[f32],
) -> Result<PeerNet> {
    let cfg: &ModelConfig = &bench.config;
    let checkpoint_dir = work.join("nets").join(&bench.name);
    let (_, c, h, w) = planes.dims4()?;
    let encoder = EncoderSpec {
        name: "bench-random-planes".into(),
        version: 1,
        shape: [c, h, w],
        globals: 0,
        perspective: Perspective::SideToMove,
    };
    let training = TrainingInfo {
        method: "none (fresh seeded weights for plies bench device)".into(),
        seed: Some(seed),
        ..Default::default()
    };
    checkpoint::save(
        &checkpoint_dir,
        &CheckpointConfig::new("bench", encoder, cfg.clone(), training),
        weights,
    )?;
    let inputs = work
        .join("inputs")
        .join(format!("{}.safetensors", bench.name));
    let tensors = HashMap::from([
        ("planes".to_string(), planes.clone()),
        (
            "expected".to_string(),
            Tensor::from_slice(expected, expected.len(), &Device::Cpu)?,
        ),
    ]);
    write_atomic_with(&inputs, |tmp| -> Result<()> {
        Ok(candle_core::safetensors::save(&tensors, tmp)?)
    })?;
    Ok(PeerNet {
        name: bench.name.clone(),
        checkpoint: checkpoint_dir,
        inputs,
        batches: plan.batches.clone(),
        train_batches: plan.train_batches.clone(),
        compile: plan.compile_all || std::ptr::eq(bench, &plan.nets[0]),
    })
}
