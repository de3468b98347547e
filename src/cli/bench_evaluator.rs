//! `plies bench evaluator`: the batched evaluator service
//! ([`plies::infer::BatchedEvaluator`]) against the unbatched path on the
//! same model in the same run. Client threads each ask for one position at
//! a time, as search threads do; the unbatched path has every client call
//! the model itself ([`CandleEvaluator`], a forward pass of one position),
//! the batched path has them share one service. Throughput (positions/s)
//! and per-call latency p50/p99 for each number of clients and `max_batch`,
//! the ratio batched/unbatched, and PyTorch's forward pass on the same
//! model at the same batch sizes (`plies bench infer`, run as a child
//! process) as the ceiling a batch of that size could reach.

use super::bench_models::BenchModel;
use anyhow::{bail, Context};
use candle_core::{DType, Device};
use candle_nn::{VarBuilder, VarMap};
use clap::{Args, ValueEnum};
use plies::bench::peer::PeerError;
use plies::encode::arimaa_encoder;
use plies::game::arimaa::random_steps::random_steps_move;
use plies::game::{Arimaa, Game};
use plies::infer::batched::LatencyHistogram;
use plies::infer::{BatchOptions, BatchedEvaluator, CandleEvaluator, Evaluator};
use plies::model::{
    build, seeded_init, Cnn3Config, Cnn3NetConfig, InputShape, ModelConfig, ResNetConfig,
};
use plies::util::seeded_rng;
use rand::RngExt;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct EvaluatorBenchArgs {
    /// The network, with fresh seeded weights, on Arimaa's 6x8x8 planes.
    #[arg(long, value_enum, default_value = "cnn3")]
    model: BenchModel,
    /// Client thread counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,8,32,64")]
    clients: Vec<usize>,
    /// The service's max_batch values, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,64,256")]
    max_batch: Vec<usize>,
    /// The service's max_wait, microseconds.
    #[arg(long, default_value_t = 200)]
    max_wait_us: u64,
    /// The service's cache (0, the default, turns it off so that every
    /// position reaches the model).
    #[arg(long, default_value_t = 0)]
    cache_entries: usize,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 0.5)]
    seconds: f64,
    /// Measurements per cell; the fastest counts (with its latencies).
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Positions taken from random Arimaa games (clients pick among them at random).
    #[arg(long, default_value_t = 4096)]
    positions: usize,
    /// Python with torch for the PyTorch column (as `plies bench infer`).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the PyTorch comparison.
    #[arg(long)]
    no_torch: bool,
    /// One JSON object on stdout instead of the tables.
    #[arg(long)]
    json: bool,
    /// Also write the rows as CSV to this file.
    #[arg(long)]
    csv: Option<PathBuf>,
}

const INPUT: [usize; 3] = [6, 8, 8];
const ENCODER: &str = "arimaa-6x8x8";

fn model_name(m: BenchModel) -> String {
    m.to_possible_value()
        .map_or_else(|| format!("{m:?}"), |v| v.get_name().to_string())
}

/// The same networks as `plies bench infer` (value head only), with the
/// same seeded weights whatever the run.
fn model_config(m: BenchModel) -> ModelConfig {
    let input = InputShape::new(INPUT, 0);
    match m {
        BenchModel::Cnn3 => ModelConfig::Cnn3(Cnn3NetConfig::new(input, Cnn3Config::default())),
        BenchModel::ResnetTiny => ModelConfig::Resnet(ResNetConfig::tiny(input)),
        BenchModel::ResnetSmall => ModelConfig::Resnet(ResNetConfig::small(input)),
    }
}

fn evaluator(m: BenchModel) -> anyhow::Result<Arc<dyn Evaluator<Arimaa>>> {
    let cfg = model_config(m);
    let vm = VarMap::new();
    let dev = Device::Cpu;
    let net = build(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev))?;
    seeded_init(&vm, &cfg, &mut seeded_rng(1, 0), &dev)?;
    net.freeze()?;
    Ok(Arc::new(CandleEvaluator::new(
        arimaa_encoder(ENCODER)?,
        net,
        dev,
        model_name(m),
    )))
}

/// `n` positions of random-steps Arimaa games (at most 300 plies each),
/// and how many games they came from.
fn arimaa_positions(n: usize) -> (Vec<Arimaa>, usize) {
    let mut rng = seeded_rng(7, 0);
    let mut out = Vec::with_capacity(n);
    let mut games = 0;
    while out.len() < n {
        games += 1;
        let mut g = Arimaa::new();
        for _ in 0..300 {
            if out.len() == n {
                break;
            }
            out.push(g.clone());
            match random_steps_move(&g, 0.3, &mut rng) {
                Some(m) => g.play(m),
                None => break,
            }
        }
    }
    (out, games)
}

/// One measurement: `clients` threads calling `ev` with one position at a
/// time for `seconds`.
struct Cell {
    clients: usize,
    /// `None` for the unbatched path.
    max_batch: Option<usize>,
    positions: u64,
    seconds: f64,
    rate: f64,
    p50_us: f64,
    p99_us: f64,
    mean_batch: f64,
    /// Batched rate over the unbatched one at the same client count.
    ratio: Option<f64>,
}

/// The fastest of `rounds` runs of [`measure_once`].
fn measure(
    ev: &Arc<dyn Evaluator<Arimaa>>,
    pool: &Arc<Vec<Arimaa>>,
    clients: usize,
    seconds: f64,
    rounds: usize,
) -> anyhow::Result<(u64, f64, LatencyHistogram)> {
    let mut best = measure_once(ev, pool, clients, seconds)?;
    for _ in 1..rounds {
        let m = measure_once(ev, pool, clients, seconds)?;
        if m.0 as f64 / m.1 > best.0 as f64 / best.1 {
            best = m;
        }
    }
    Ok(best)
}

fn measure_once(
    ev: &Arc<dyn Evaluator<Arimaa>>,
    pool: &Arc<Vec<Arimaa>>,
    clients: usize,
    seconds: f64,
) -> anyhow::Result<(u64, f64, LatencyHistogram)> {
    let latency = Arc::new(LatencyHistogram::default());
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(clients + 1));
    let threads: Vec<_> = (0..clients)
        .map(|t| {
            let (ev, pool, latency) = (ev.clone(), pool.clone(), latency.clone());
            let (stop, start) = (stop.clone(), start.clone());
            std::thread::spawn(move || -> anyhow::Result<u64> {
                let mut rng = seeded_rng(11, t as u64);
                start.wait();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let g = &pool[rng.random_range(0..pool.len())];
                    let t = Instant::now();
                    ev.evaluate(std::slice::from_ref(g))?;
                    latency.record(t.elapsed());
                    n += 1;
                }
                Ok(n)
            })
        })
        .collect();
    // The clock starts before the clients are released: taken after, it
    // could start late (64 busy clients starve this thread of a core) and
    // inflate the rate.
    let t = Instant::now();
    start.wait();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    let mut total = 0;
    for h in threads {
        total += h
            .join()
            .map_err(|_| anyhow::anyhow!("a client thread panicked"))??;
    }
    let elapsed = t.elapsed().as_secs_f64();
    let latency = Arc::try_unwrap(latency).map_err(|_| anyhow::anyhow!("latency still shared"))?;
    Ok((total, elapsed, latency))
}

/// Positions/s of one forward pass per batch size, plies and PyTorch, from
/// `plies bench infer --json` run as a child of this binary.
struct Forward {
    torch: Result<String, PeerError>,
    /// `(batch, plies, torch)`.
    rows: Vec<(usize, Option<f64>, Option<f64>)>,
}

fn forward_rates(a: &EvaluatorBenchArgs, threads: usize) -> Forward {
    let batches: Vec<usize> = a.max_batch.clone();
    let none = |why: String| Forward {
        torch: Err(PeerError::NotRun(why)),
        rows: batches.iter().map(|&b| (b, None, None)).collect(),
    };
    if a.no_torch {
        return none("--no-torch".into());
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return none(format!("cannot find this program: {e}")),
    };
    let mut cmd = Command::new(exe);
    cmd.args(["bench", "infer", "--no-stock", "--json"])
        .args(["--model", &model_name(a.model)])
        .args(["--threads", &threads.to_string()])
        .args(["--seconds", &a.seconds.to_string()])
        .args(["--rounds", &a.rounds.to_string()])
        .arg("--batch")
        .arg(
            batches
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(","),
        );
    if let Some(p) = &a.python {
        cmd.arg("--python").arg(p);
    }
    let out = match cmd.output() {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            return none(format!(
                "plies bench infer failed ({}): {}",
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            ))
        }
        Err(e) => return none(format!("cannot run plies bench infer: {e}")),
    };
    let v: serde_json::Value = match serde_json::from_slice(&out.stdout) {
        Ok(v) => v,
        Err(e) => return none(format!("no JSON from plies bench infer: {e}")),
    };
    let torch = match (v["torch"].as_str(), v["torch_note"].as_str()) {
        (Some(version), _) => Ok(version.to_string()),
        (None, Some(note)) => Err(PeerError::NotRun(note.to_string())),
        (None, None) => Err(PeerError::NotRun("no PyTorch result".into())),
    };
    let rows = batches
        .iter()
        .map(|&b| {
            let row = v["rows"]
                .as_array()
                .and_then(|r| r.iter().find(|r| r["batch"].as_u64() == Some(b as u64)));
            let get = |k: &str| row.and_then(|r| r[k].as_f64());
            (
                b,
                get("plies_positions_per_s"),
                get("torch_positions_per_s"),
            )
        })
        .collect();
    Forward { torch, rows }
}

fn describe(a: &EvaluatorBenchArgs, threads: usize, games: usize) -> String {
    format!(
        "{} ({} parameters, fresh seeded weights) on Arimaa {}x{}x{} planes ({ENCODER}) of {} \
         positions from {games} random-steps games; CPU, {threads} model threads; \
         best of {} x {} s per cell; service max_wait {} us, cache {}",
        model_name(a.model),
        model_config(a.model).num_params(),
        INPUT[0],
        INPUT[1],
        INPUT[2],
        a.positions,
        a.rounds,
        a.seconds,
        a.max_wait_us,
        if a.cache_entries == 0 {
            "off".to_string()
        } else {
            format!("{} entries", a.cache_entries)
        }
    )
}

fn num(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.prec$}"))
}

fn path_name(c: &Cell) -> String {
    match c.max_batch {
        None => "unbatched".to_string(),
        Some(b) => format!("batched {b}"),
    }
}

fn write_csv(path: &PathBuf, model: &str, cells: &[Cell]) -> anyhow::Result<()> {
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| path.display().to_string())?,
    );
    writeln!(
        f,
        "model,clients,path,max_batch,positions,seconds,positions_per_s,p50_us,p99_us,mean_batch,ratio_to_unbatched"
    )?;
    for c in cells {
        writeln!(
            f,
            "{model},{},{},{},{},{:.4},{:.1},{:.1},{:.1},{:.2},{}",
            c.clients,
            if c.max_batch.is_some() {
                "batched"
            } else {
                "unbatched"
            },
            c.max_batch.map_or(String::new(), |b| b.to_string()),
            c.positions,
            c.seconds,
            c.rate,
            c.p50_us,
            c.p99_us,
            c.mean_batch,
            c.ratio.map_or(String::new(), |r| format!("{r:.3}")),
        )?;
    }
    f.flush()?;
    Ok(())
}

pub fn bench_evaluator(a: EvaluatorBenchArgs) -> anyhow::Result<ExitCode> {
    if a.clients.is_empty() || a.clients.contains(&0) {
        bail!("--clients: counts must be at least 1");
    }
    if a.max_batch.is_empty() {
        bail!("--max-batch: give at least one size");
    }
    if !(a.seconds > 0.0 && a.seconds.is_finite()) {
        bail!("--seconds must be positive, got {}", a.seconds);
    }
    if a.positions == 0 {
        bail!("--positions must be at least 1");
    }
    if a.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let opts = |max_batch| BatchOptions {
        max_batch,
        max_wait: Duration::from_micros(a.max_wait_us),
        cache_entries: a.cache_entries,
    };
    for &b in &a.max_batch {
        opts(b).validate()?;
    }
    let threads = rayon::current_num_threads();
    let inner = evaluator(a.model).context("building the model")?;
    let (pool, games) = arimaa_positions(a.positions);
    let pool = Arc::new(pool);
    // Warm up the kernels and allocator at every batch size used.
    for &b in &a.max_batch {
        inner.evaluate(&pool[..b.min(pool.len())])?;
    }
    inner.evaluate(&pool[..1])?;

    let mut cells = Vec::new();
    for &clients in &a.clients {
        let (n, secs, lat) = measure(&inner, &pool, clients, a.seconds, a.rounds)
            .with_context(|| format!("unbatched, {clients} clients"))?;
        let base = n as f64 / secs;
        cells.push(Cell {
            clients,
            max_batch: None,
            positions: n,
            seconds: secs,
            rate: base,
            p50_us: lat.quantile(0.5),
            p99_us: lat.quantile(0.99),
            mean_batch: 1.0,
            ratio: None,
        });
        for &b in &a.max_batch {
            let svc = Arc::new(BatchedEvaluator::new(inner.clone(), opts(b))?);
            let shared: Arc<dyn Evaluator<Arimaa>> = svc.clone();
            let (n, secs, lat) = measure(&shared, &pool, clients, a.seconds, a.rounds)
                .with_context(|| format!("batched {b}, {clients} clients"))?;
            let mean_batch = svc.stats().mean_batch;
            let rate = n as f64 / secs;
            cells.push(Cell {
                clients,
                max_batch: Some(b),
                positions: n,
                seconds: secs,
                rate,
                p50_us: lat.quantile(0.5),
                p99_us: lat.quantile(0.99),
                mean_batch,
                ratio: Some(rate / base),
            });
        }
    }
    let forward = forward_rates(&a, threads);
    let name = model_name(a.model);
    if let Some(path) = &a.csv {
        write_csv(path, &name, &cells)?;
    }
    report(&a, threads, games, &cells, &forward);
    Ok(ExitCode::SUCCESS)
}

fn report(a: &EvaluatorBenchArgs, threads: usize, games: usize, cells: &[Cell], fwd: &Forward) {
    let best = |b: usize| {
        cells
            .iter()
            .filter(|c| c.max_batch == Some(b))
            .max_by(|x, y| x.rate.total_cmp(&y.rate))
    };
    if a.json {
        let rows: Vec<_> = cells
            .iter()
            .map(|c| {
                serde_json::json!({
                    "clients": c.clients,
                    "path": if c.max_batch.is_some() { "batched" } else { "unbatched" },
                    "max_batch": c.max_batch,
                    "positions": c.positions,
                    "seconds": c.seconds,
                    "positions_per_s": c.rate,
                    "p50_us": c.p50_us,
                    "p99_us": c.p99_us,
                    "mean_batch": c.mean_batch,
                    "ratio_to_unbatched": c.ratio,
                })
            })
            .collect();
        let forward: Vec<_> = fwd
            .rows
            .iter()
            .map(|&(b, plies, torch)| {
                let svc = best(b);
                serde_json::json!({
                    "batch": b,
                    "plies_forward_positions_per_s": plies,
                    "torch_forward_positions_per_s": torch,
                    "service_best_positions_per_s": svc.map(|c| c.rate),
                    "service_best_clients": svc.map(|c| c.clients),
                    "service_over_torch": svc.zip(torch).map(|(c, t)| c.rate / t),
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "model": model_name(a.model),
                "description": describe(a, threads, games),
                "threads": threads,
                "positions": a.positions,
                "seconds": a.seconds,
                "rounds": a.rounds,
                "max_wait_us": a.max_wait_us,
                "cache_entries": a.cache_entries,
                "rows": rows,
                "forward": forward,
                "torch": fwd.torch.as_ref().ok(),
                "torch_note": fwd.torch.as_ref().err().map(|e| e.to_string()),
            })
        );
        return;
    }
    println!("{}", describe(a, threads, games));
    println!(
        "{:>7} {:<12} {:>12} {:>10} {:>10} {:>10} {:>12}",
        "clients", "path", "positions/s", "p50 us", "p99 us", "mean batch", "x unbatched"
    );
    for c in cells {
        println!(
            "{:>7} {:<12} {:>12.0} {:>10.0} {:>10.0} {:>10.1} {:>12}",
            c.clients,
            path_name(c),
            c.rate,
            c.p50_us,
            c.p99_us,
            c.mean_batch,
            num(c.ratio, 2),
        );
    }
    println!();
    let torch_head = match &fwd.torch {
        Ok(v) => format!("PyTorch {v}"),
        Err(_) => "PyTorch".to_string(),
    };
    println!(
        "{:>9} {:>20} {:>16} {:>16} {:>16}",
        "max_batch", "service best (clients)", "plies forward", torch_head, "service/PyTorch"
    );
    for &(b, plies, torch) in &fwd.rows {
        let svc = best(b);
        println!(
            "{:>9} {:>20} {:>16} {:>16} {:>16}",
            b,
            svc.map_or("-".into(), |c| format!("{:.0} ({})", c.rate, c.clients)),
            num(plies, 0),
            num(torch, 0),
            num(svc.zip(torch).map(|(c, t)| c.rate / t), 2),
        );
    }
    println!(
        "(forward: positions/s of one forward pass of a whole batch of that size, no service)"
    );
    if let Err(note) = &fwd.torch {
        println!("note: PyTorch skipped: {note}");
    }
}
