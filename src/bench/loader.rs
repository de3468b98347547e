//! The streaming loader's throughput against cnn3's training step rate on
//! the same device and batch size, and against a pyarrow + numpy loader
//! (`scripts/bench_loader_pyarrow.py`) doing the same work on the same
//! shards in the same run; peak memory of each side.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use candle_core::{DType, Device};
use candle_nn::{VarBuilder, VarMap};
use rand::RngExt;

use super::peer::{self, PeerError};
use super::report::mib;
use super::{mse_step, nesterov_sgd, BenchError, Notes, Result};
use crate::dataset::{
    Dataset, DatasetSpec, DatasetWriter, EncoderInfo, PositionRow, Split, StreamConfig,
    StreamLoader, MANIFEST_FILE,
};
use crate::model::{Cnn3, Cnn3Config};
use crate::util::{parse_device, seeded_rng};

pub struct LoaderOptions {
    /// Dataset directory.
    pub data: PathBuf,
    pub batch: usize,
    /// Shuffle buffer capacity in rows.
    pub buffer_rows: usize,
    pub epochs: u64,
    /// cpu, cuda, cuda:N or metal.
    pub device: String,
    /// train, valid, test or all.
    pub split: String,
    /// Timed cnn3 training steps (after 3 warm-up steps).
    pub train_steps: usize,
    /// Decoder threads of the loader (`None`: cores, at most 4).
    pub threads: Option<usize>,
    /// Check every shard's sha256 while reading.
    pub verify_sha256: bool,
    pub seed: u64,
    /// Python with pyarrow and numpy (`None`: $PLIES_DATA_PYTHON, then
    /// .venv-data/bin/python, then python3).
    pub python: Option<PathBuf>,
    /// Skip the pyarrow side.
    pub no_python: bool,
    /// When `data` holds no dataset, first write a synthetic Arimaa-shaped
    /// dataset of this many rows there.
    pub synthetic: Option<usize>,
}

/// Rate, time and peak memory of one side.
pub struct Side {
    pub positions: usize,
    pub seconds: f64,
    pub positions_per_s: f64,
    pub peak_rss_bytes: Option<u64>,
}

pub struct LoaderReport {
    pub data: PathBuf,
    pub split: String,
    pub rows: u64,
    pub epochs: u64,
    pub batch: usize,
    pub buffer_rows: usize,
    pub device: String,
    pub decode_threads: usize,
    /// `RAYON_NUM_THREADS` as set for the run.
    pub rayon_threads: String,
    pub loader: Side,
    pub peak_buffer_rows: usize,
    /// `positions` counts timed steps times the batch.
    pub train: Side,
    pub train_steps: usize,
    pub last_loss: Option<f32>,
    /// The pyarrow side's own JSON report, or why it did not run.
    pub pyarrow: Result<serde_json::Value, PeerError>,
}

/// Peak resident memory of this process in bytes (Linux `VmHWM`).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Writes a synthetic Arimaa-shaped dataset (clearly named as such in its
/// encoder and provenance) for volume benchmarks: random sparse 6x8x8
/// planes, 80-ply games, random results.
fn write_synthetic(dir: &Path, rows: usize, seed: u64) -> Result<()> {
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
            policy: None,
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

/// Runs the pyarrow side: its JSON report.
fn run_python(o: &LoaderOptions) -> Result<serde_json::Value, PeerError> {
    let python = peer::find_python(o.python.clone(), "PLIES_DATA_PYTHON", ".venv-data");
    peer::require_modules(
        &python,
        "pyarrow, numpy",
        "set --python or PLIES_DATA_PYTHON, or \
         `python3 -m venv .venv-data && .venv-data/bin/pip install pyarrow numpy`",
    )?;
    let mut cmd = Command::new(&python);
    cmd.arg(peer::script_path("bench_loader_pyarrow.py"))
        .arg("--data")
        .arg(&o.data)
        .args(["--batch", &o.batch.to_string()])
        .args(["--buffer-rows", &o.buffer_rows.to_string()])
        .args(["--epochs", &o.epochs.to_string()])
        .args(["--split", &o.split])
        .args(["--seed", &o.seed.to_string()]);
    let out = peer::run_peer(&mut cmd, "the pyarrow loader")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).map_err(|e| PeerError::Output {
        what: "the pyarrow loader",
        why: e.to_string(),
    })
}

/// Writes the synthetic dataset `opts` asks for, unless one is there.
fn prepare(o: &LoaderOptions, notes: Notes) -> Result<()> {
    let Some(rows) = o.synthetic else {
        return Ok(());
    };
    if o.data.join(MANIFEST_FILE).exists() {
        notes(&format!(
            "note: {} already holds a dataset; --synthetic ignored",
            o.data.display()
        ));
    } else {
        let t = Instant::now();
        write_synthetic(&o.data, rows, o.seed)?;
        notes(&format!(
            "wrote a SYNTHETIC {rows}-row Arimaa-shaped dataset to {} in {:.1} s",
            o.data.display(),
            t.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}

/// Times the loader, cnn3's training step and the pyarrow loader.
pub fn run(o: &LoaderOptions, notes: Notes) -> Result<LoaderReport> {
    prepare(o, notes)?;
    let device = parse_device(&o.device)?;
    let split = match o.split.as_str() {
        "all" => None,
        s => Some(
            s.parse::<Split>()
                .map_err(|e| BenchError::bad_option(format!("--split {s}"), e.to_string()))?,
        ),
    };
    let ds = Dataset::open(&o.data)?;
    let mut cfg = StreamConfig {
        split,
        batch_size: o.batch,
        buffer_rows: o.buffer_rows,
        seed: o.seed,
        verify_sha256: o.verify_sha256,
        ..Default::default()
    };
    if let Some(t) = o.threads {
        cfg.decode_threads = t;
    }
    let decode_threads = cfg.decode_threads;
    let loader = StreamLoader::new(&ds, cfg)?;
    if loader.is_empty() {
        return Err(BenchError::EmptySplit {
            data: o.data.clone(),
            split: o.split.clone(),
        });
    }
    let (loader_side, peak_buffer_rows) = time_loader(o, &loader, &device)?;
    let (train, last_loss) = time_training(o, &loader, &device)?;
    let pyarrow = if o.no_python {
        Err(PeerError::NotRun("skipped (--no-python)".into()))
    } else {
        run_python(o)
    };
    Ok(LoaderReport {
        data: o.data.clone(),
        split: o.split.clone(),
        rows: loader.len(),
        epochs: o.epochs,
        batch: o.batch,
        buffer_rows: o.buffer_rows,
        device: o.device.clone(),
        decode_threads,
        rayon_threads: std::env::var("RAYON_NUM_THREADS").unwrap_or_default(),
        loader: loader_side,
        peak_buffer_rows,
        train,
        train_steps: o.train_steps.max(1),
        last_loss,
        pyarrow,
    })
}

/// The loader producing f32 tensors on the device, every epoch.
fn time_loader(o: &LoaderOptions, loader: &StreamLoader, device: &Device) -> Result<(Side, usize)> {
    let mut positions = 0usize;
    let mut peak_buffer = 0usize;
    let t = Instant::now();
    for epoch in 0..o.epochs {
        let mut batches = loader.epoch_tensors(epoch, device);
        for b in batches.by_ref() {
            positions += b?.len;
        }
        peak_buffer = peak_buffer.max(batches.peak_buffer_rows());
    }
    device.synchronize()?;
    let seconds = t.elapsed().as_secs_f64();
    let side = Side {
        positions,
        seconds,
        positions_per_s: positions as f64 / seconds,
        peak_rss_bytes: peak_rss(),
    };
    Ok((side, peak_buffer))
}

/// cnn3 training steps on one batch of the same size.
fn time_training(
    o: &LoaderOptions,
    loader: &StreamLoader,
    device: &Device,
) -> Result<(Side, Option<f32>)> {
    let first = loader
        .epoch_tensors(0, device)
        .next()
        .ok_or(BenchError::NoBatch)??;
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
        VarBuilder::from_varmap(&vm, DType::F32, device),
    )?;
    let mut opt = nesterov_sgd(vm.all_vars())?;
    let mut step = || mse_step(&mut opt, net.forward(&first.planes)?, &first.labels);
    for _ in 0..3 {
        step()?;
    }
    device.synchronize()?;
    let steps = o.train_steps.max(1);
    let t = Instant::now();
    let mut loss = None;
    for _ in 0..steps {
        loss = Some(step()?);
    }
    device.synchronize()?;
    let seconds = t.elapsed().as_secs_f64();
    let positions = steps * first.len;
    let side = Side {
        positions,
        seconds,
        positions_per_s: positions as f64 / seconds,
        peak_rss_bytes: peak_rss(),
    };
    Ok((side, loss.map(|l| l.to_scalar::<f32>()).transpose()?))
}

impl LoaderReport {
    fn pyarrow_rate(&self) -> Option<f64> {
        self.pyarrow.as_ref().ok()?["positions_per_s"].as_f64()
    }

    pub fn to_json(&self) -> serde_json::Value {
        let (l, t) = (&self.loader, &self.train);
        serde_json::json!({
            "data": self.data, "split": self.split, "rows": self.rows, "epochs": self.epochs,
            "batch": self.batch, "buffer_rows": self.buffer_rows, "device": self.device,
            "decode_threads": self.decode_threads, "rayon_threads": self.rayon_threads,
            "loader": { "positions": l.positions, "seconds": l.seconds,
                "positions_per_s": l.positions_per_s, "peak_rss_bytes": l.peak_rss_bytes,
                "peak_buffer_rows": self.peak_buffer_rows },
            "cnn3_train": { "steps": self.train_steps, "seconds": t.seconds,
                "positions_per_s": t.positions_per_s, "last_loss": self.last_loss },
            "loader_over_training": l.positions_per_s / t.positions_per_s,
            "pyarrow": match &self.pyarrow { Ok(v) => v.clone(), Err(note) => serde_json::json!({ "skipped": note.to_string() }) },
            "loader_over_pyarrow": self.pyarrow_rate().map(|p| l.positions_per_s / p),
        })
    }
}

impl fmt::Display for LoaderReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (l, t) = (&self.loader, &self.train);
        writeln!(
            f,
            "loader bench: {} split {}, {} rows x {} epoch(s), batch {}, buffer {} rows, device {}, {} decoder thread(s), RAYON_NUM_THREADS={}",
            self.data.display(),
            self.split,
            self.rows,
            self.epochs,
            self.batch,
            self.buffer_rows,
            self.device,
            self.decode_threads,
            self.rayon_threads
        )?;
        writeln!(f, "{:<44} {:>14} {:>10}", "", "positions/s", "peak RSS")?;
        side(
            f,
            "plies StreamLoader -> f32 tensors",
            l.positions_per_s,
            l.peak_rss_bytes,
        )?;
        side(
            f,
            "cnn3 train step (48 4x4, 384; Nesterov SGD)",
            t.positions_per_s,
            t.peak_rss_bytes,
        )?;
        match &self.pyarrow {
            Ok(v) => side(
                f,
                "pyarrow + numpy shuffle buffer -> float32",
                self.pyarrow_rate().unwrap_or(f64::NAN),
                v["peak_rss_bytes"].as_u64(),
            )?,
            Err(note) => writeln!(f, "pyarrow side skipped: {note}")?,
        }
        let ratio = l.positions_per_s / t.positions_per_s;
        writeln!(
            f,
            "loader / training: {ratio:.1}x ({})",
            if ratio >= 10.0 {
                "at least 10x ahead: the loader never starves training"
            } else {
                "below the 10x target"
            }
        )?;
        if let Some(p) = self.pyarrow_rate() {
            writeln!(
                f,
                "plies loader / pyarrow loader: {:.2}x",
                l.positions_per_s / p
            )?;
        }
        Ok(())
    }
}

/// One side's row: positions/s and peak memory.
fn side(f: &mut fmt::Formatter<'_>, label: &str, rate: f64, rss: Option<u64>) -> fmt::Result {
    writeln!(f, "{label:<44} {rate:>14.0} {:>10}", mib(rss))
}

impl super::report::Report for LoaderReport {
    fn json(&self) -> serde_json::Result<String> {
        Ok(self.to_json().to_string())
    }
}
