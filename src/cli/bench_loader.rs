//! `plies bench loader`: the streaming loader's throughput against cnn3's
//! training step rate on the same device and batch size, and against a
//! pyarrow + numpy loader (`scripts/bench_loader_pyarrow.py`) doing the same
//! work on the same shards in the same run.

use anyhow::{bail, Context};
use candle_core::{DType, Device, Tensor};
use candle_nn::{Optimizer, VarBuilder, VarMap};
use clap::Args;
use plies::bench::peer::{self, PeerError};
use plies::dataset::{
    Dataset, DatasetSpec, DatasetWriter, EncoderInfo, PositionRow, Split, StreamConfig,
    StreamLoader, MANIFEST_FILE,
};
use plies::model::{Cnn3, Cnn3Config};
use plies::optim::{Momentum, MomentumConfig};
use plies::util::seeded_rng;
use rand::RngExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

#[derive(Args)]
pub struct LoaderBenchArgs {
    /// Dataset directory.
    #[arg(long)]
    data: PathBuf,
    #[arg(long, default_value_t = 1024)]
    batch: usize,
    /// Shuffle buffer capacity in rows.
    #[arg(long, default_value_t = 65_536)]
    buffer_rows: usize,
    #[arg(long, default_value_t = 1)]
    epochs: u64,
    /// cpu, cuda, cuda:N or metal.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// train, valid, test or all.
    #[arg(long, default_value = "train")]
    split: String,
    /// Timed cnn3 training steps (after 3 warm-up steps).
    #[arg(long, default_value_t = 30)]
    train_steps: usize,
    /// Decoder threads of the loader (default: cores, at most 4).
    #[arg(long)]
    threads: Option<usize>,
    /// Check every shard's sha256 while reading.
    #[arg(long)]
    verify_sha256: bool,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Python with pyarrow and numpy (default: $PLIES_DATA_PYTHON, then
    /// .venv-data/bin/python, then python3).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the pyarrow side.
    #[arg(long)]
    no_python: bool,
    #[arg(long)]
    json: bool,
    /// Bench only: when --data holds no dataset, first write a SYNTHETIC
    /// Arimaa-shaped dataset of this many rows there (random sparse 6x8x8
    /// planes, 80-ply games, random results).
    #[arg(long, hide = true)]
    synthetic: Option<usize>,
}

/// Parses `--device` (see [`plies::util::parse_device`]).
pub fn parse_device(s: &str) -> anyhow::Result<Device> {
    Ok(plies::util::parse_device(s)?)
}

/// Peak resident memory of this process in bytes (Linux `VmHWM`).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or("-".into(), |b| {
        format!("{:.0} MiB", b as f64 / (1 << 20) as f64)
    })
}

/// Writes a synthetic Arimaa-shaped dataset (clearly named as such in its
/// encoder and provenance) for volume benchmarks.
fn write_synthetic(dir: &Path, rows: usize, seed: u64) -> anyhow::Result<()> {
    let encoder = EncoderInfo {
        name: "synthetic-6x8x8".into(),
        version: 1,
        shape: [6, 8, 8],
        globals: 0,
    };
    let mut w = DatasetWriter::create(dir, DatasetSpec::new("arimaa", encoder))?;
    let mut rng = seeded_rng(seed, 77);
    const PLIES: usize = 80;
    let mut planes = vec![0i8; 384];
    for r in 0..rows {
        let (game, ply) = (r / PLIES, (r % PLIES) as u32);
        planes.fill(0);
        for _ in 0..24 {
            let i = rng.random_range(0..384);
            planes[i] = if rng.random_bool(0.5) { 1 } else { -1 };
        }
        let last = ((game + 1) * PLIES).min(rows) - 1 - game * PLIES;
        w.push(PositionRow {
            game_id: format!("synthetic-{game}"),
            ply,
            plies_to_end: last as u32 - ply,
            side_to_move: (ply % 2) as u8,
            position: "synthetic".into(),
            planes: planes.clone(),
            globals: vec![],
            label: if (game + ply as usize).is_multiple_of(2) {
                1.0
            } else {
                0.0
            },
            move_played: None,
            source: "synthetic-benchmark".into(),
            termination: None,
            white_rating: None,
            black_rating: None,
        })?;
    }
    w.finish(serde_json::json!({
        "command": "plies bench loader --synthetic",
        "synthetic": true,
        "rows": rows,
        "seed": seed,
    }))?;
    Ok(())
}

/// Runs the pyarrow side; `Err` carries the note to print when it cannot run.
fn run_python(a: &LoaderBenchArgs) -> Result<serde_json::Value, PeerError> {
    let python = peer::find_python(a.python.clone(), "PLIES_DATA_PYTHON", ".venv-data");
    peer::require_modules(
        &python,
        "pyarrow, numpy",
        "set --python or PLIES_DATA_PYTHON, or \
         `python3 -m venv .venv-data && .venv-data/bin/pip install pyarrow numpy`",
    )?;
    let mut cmd = Command::new(&python);
    cmd.arg(peer::script_path("bench_loader_pyarrow.py"))
        .arg("--data")
        .arg(&a.data)
        .args(["--batch", &a.batch.to_string()])
        .args(["--buffer-rows", &a.buffer_rows.to_string()])
        .args(["--epochs", &a.epochs.to_string()])
        .args(["--split", &a.split])
        .args(["--seed", &a.seed.to_string()]);
    let out = peer::run_peer(&mut cmd, "the pyarrow loader")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).map_err(|e| PeerError::Output {
        what: "the pyarrow loader",
        why: e.to_string(),
    })
}

pub fn bench_loader(a: LoaderBenchArgs) -> anyhow::Result<ExitCode> {
    if let Some(rows) = a.synthetic {
        if a.data.join(MANIFEST_FILE).exists() {
            eprintln!(
                "note: {} already holds a dataset; --synthetic ignored",
                a.data.display()
            );
        } else {
            let t = Instant::now();
            write_synthetic(&a.data, rows, a.seed)?;
            eprintln!(
                "wrote a SYNTHETIC {rows}-row Arimaa-shaped dataset to {} in {:.1} s",
                a.data.display(),
                t.elapsed().as_secs_f64()
            );
        }
    }
    let device = parse_device(&a.device)?;
    let split = match a.split.as_str() {
        "all" => None,
        s => Some(
            s.parse::<Split>()
                .map_err(|e| anyhow::anyhow!("--split {s}: {e}"))?,
        ),
    };
    let ds = Dataset::open(&a.data)?;
    let mut cfg = StreamConfig {
        split,
        batch_size: a.batch,
        buffer_rows: a.buffer_rows,
        seed: a.seed,
        verify_sha256: a.verify_sha256,
        ..Default::default()
    };
    if let Some(t) = a.threads {
        cfg.decode_threads = t;
    }
    let threads = cfg.decode_threads;
    let loader = StreamLoader::new(&ds, cfg)?;
    if loader.is_empty() {
        bail!("{}: split {} has no rows", a.data.display(), a.split);
    }

    // (a) the loader, producing f32 tensors on the device.
    let mut positions = 0usize;
    let mut peak_buffer = 0usize;
    let t = Instant::now();
    for epoch in 0..a.epochs {
        let mut batches = loader.epoch_tensors(epoch, &device);
        for b in batches.by_ref() {
            positions += b?.len;
        }
        peak_buffer = peak_buffer.max(batches.peak_buffer_rows());
    }
    device.synchronize()?;
    let loader_s = t.elapsed().as_secs_f64();
    let loader_rate = positions as f64 / loader_s;
    let loader_rss = peak_rss();

    // (b) cnn3 training steps on one batch of the same size.
    let first = loader
        .epoch_tensors(0, &device)
        .next()
        .context("the loader gave no batch")??;
    let shape = loader.shape();
    let vm = VarMap::new();
    // The default 4x4 kernel, cut to the board on smaller boards.
    let net_cfg = Cnn3Config {
        kernel: [4.min(shape[1]), 4.min(shape[2])],
        ..Default::default()
    };
    let net = Cnn3::new(
        &net_cfg,
        shape,
        VarBuilder::from_varmap(&vm, DType::F32, &device),
    )?;
    let mut opt = Momentum::new(
        vm.all_vars(),
        MomentumConfig {
            lr: 0.01,
            momentum: 0.9,
            nesterov: true,
            ..Default::default()
        },
    )?;
    let step = |opt: &mut Momentum| -> anyhow::Result<Tensor> {
        let y = net.forward(&first.planes)?;
        let loss = (y - &first.labels)?.sqr()?.mean_all()?;
        opt.backward_step(&loss)?;
        Ok(loss)
    };
    for _ in 0..3 {
        step(&mut opt)?;
    }
    device.synchronize()?;
    let t = Instant::now();
    let mut loss = None;
    for _ in 0..a.train_steps.max(1) {
        loss = Some(step(&mut opt)?);
    }
    device.synchronize()?;
    let train_s = t.elapsed().as_secs_f64();
    let train_rate = (a.train_steps.max(1) * first.len) as f64 / train_s;
    let loss = loss.map(|l| l.to_scalar::<f32>()).transpose()?;

    // (c) pyarrow + numpy on the same shards.
    let py = if a.no_python {
        Err(PeerError::NotRun("skipped (--no-python)".into()))
    } else {
        run_python(&a)
    };
    let py_rate = py.as_ref().ok().and_then(|v| v["positions_per_s"].as_f64());
    let py_rss = py.as_ref().ok().and_then(|v| v["peak_rss_bytes"].as_u64());

    let rayon = std::env::var("RAYON_NUM_THREADS").unwrap_or_default();
    if a.json {
        println!(
            "{}",
            serde_json::json!({
                "data": a.data, "split": a.split, "rows": loader.len(), "epochs": a.epochs,
                "batch": a.batch, "buffer_rows": a.buffer_rows, "device": a.device,
                "decode_threads": threads, "rayon_threads": rayon,
                "loader": { "positions": positions, "seconds": loader_s,
                    "positions_per_s": loader_rate, "peak_rss_bytes": loader_rss,
                    "peak_buffer_rows": peak_buffer },
                "cnn3_train": { "steps": a.train_steps.max(1), "seconds": train_s,
                    "positions_per_s": train_rate, "last_loss": loss },
                "loader_over_training": loader_rate / train_rate,
                "pyarrow": match &py { Ok(v) => v.clone(), Err(note) => serde_json::json!({ "skipped": note.to_string() }) },
                "loader_over_pyarrow": py_rate.map(|p| loader_rate / p),
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "loader bench: {} split {}, {} rows x {} epoch(s), batch {}, buffer {} rows, device {}, {threads} decoder thread(s), RAYON_NUM_THREADS={rayon}",
        a.data.display(),
        a.split,
        loader.len(),
        a.epochs,
        a.batch,
        a.buffer_rows,
        a.device
    );
    println!("{:<44} {:>14} {:>10}", "", "positions/s", "peak RSS");
    println!(
        "{:<44} {:>14.0} {:>10}",
        "plies StreamLoader -> f32 tensors",
        loader_rate,
        mib(loader_rss)
    );
    println!(
        "{:<44} {:>14.0} {:>10}",
        "cnn3 train step (48 4x4, 384; Nesterov SGD)",
        train_rate,
        mib(peak_rss())
    );
    match &py {
        Ok(_) => println!(
            "{:<44} {:>14.0} {:>10}",
            "pyarrow + numpy shuffle buffer -> float32",
            py_rate.unwrap_or(f64::NAN),
            mib(py_rss)
        ),
        Err(note) => println!("pyarrow side skipped: {note}"),
    }
    let ratio = loader_rate / train_rate;
    println!(
        "loader / training: {ratio:.1}x ({})",
        if ratio >= 10.0 {
            "at least 10x ahead: the loader never starves training"
        } else {
            "below the 10x target"
        }
    );
    if let Some(p) = py_rate {
        println!("plies loader / pyarrow loader: {:.2}x", loader_rate / p);
    }
    Ok(ExitCode::SUCCESS)
}
