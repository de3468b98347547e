//! The batched evaluator service ([`BatchedEvaluator`]) against the
//! unbatched path on the same model in the same run. Client threads each
//! ask for one position at a time, as search threads do; the unbatched path
//! has every client call the model itself (the model's evaluator, a forward
//! pass of one position), the batched path has them share one service.
//! Throughput (positions/s) and per-call latency p50/p99 for each number of
//! clients and `max_batch`, the ratio batched/unbatched, and PyTorch's
//! forward pass on the same model at the same batch sizes (`plies bench
//! infer`, run as a child process) as the ceiling a batch of that size
//! could reach.

use std::fmt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use candle_core::Device;
use rand::RngExt;

use super::models::{BenchModel, INPUT};
use super::peer::{self, peer_head, PeerError, PeerRun};
use super::report::{num, ratio};
use super::{BenchError, Result, StepContext};
use crate::encode::arimaa_encoder;
use crate::game::arimaa::random_steps::random_steps_move;
use crate::game::{Arimaa, Game};
use crate::infer::batched::LatencyHistogram;
use crate::infer::{weights_evaluator, BatchOptions, BatchedEvaluator, Evaluator};
use crate::model::seeded_tensors;
use crate::util::seeded_rng;

const ENCODER: &str = "arimaa-6x8x8";

pub struct EvaluatorOptions {
    /// The network, with fresh seeded weights, on Arimaa's 6x8x8 planes.
    pub model: BenchModel,
    /// Client thread counts.
    pub clients: Vec<usize>,
    /// The service's max_batch values.
    pub max_batch: Vec<usize>,
    /// The service's max_wait, microseconds.
    pub max_wait_us: u64,
    /// The service's cache (0 turns it off so that every position reaches
    /// the model).
    pub cache_entries: usize,
    /// Seconds per measurement.
    pub seconds: f64,
    /// Measurements per cell; the fastest counts (with its latencies).
    pub rounds: usize,
    /// Positions taken from random Arimaa games (clients pick among them
    /// at random).
    pub positions: usize,
    /// Python with torch for the PyTorch column (as `plies bench infer`).
    pub python: Option<PathBuf>,
    /// Skip the PyTorch comparison.
    pub no_torch: bool,
}

/// One measurement: `clients` threads calling the evaluator with one
/// position at a time.
pub struct Cell {
    pub clients: usize,
    /// `None` for the unbatched path.
    pub max_batch: Option<usize>,
    pub positions: u64,
    pub seconds: f64,
    pub rate: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub mean_batch: f64,
    /// Batched rate over the unbatched one at the same client count.
    pub ratio: Option<f64>,
}

/// Positions/s of one forward pass per batch size, plies and PyTorch, from
/// `plies bench infer --json` run as a child of this program.
pub struct Forward {
    pub torch: PeerRun,
    /// `(batch, plies, torch)`.
    pub rows: Vec<(usize, Option<f64>, Option<f64>)>,
}

pub struct EvaluatorReport {
    pub model: BenchModel,
    pub threads: usize,
    /// How many random games the positions came from.
    pub games: usize,
    pub positions: usize,
    pub seconds: f64,
    pub rounds: usize,
    pub max_wait_us: u64,
    pub cache_entries: usize,
    pub cells: Vec<Cell>,
    pub forward: Forward,
}

fn evaluator(m: BenchModel) -> Result<Arc<dyn Evaluator<Arimaa>>> {
    let cfg = m.config();
    let dev = Device::Cpu;
    // The same seeded weights whatever the run.
    let tensors = seeded_tensors(&cfg, &mut seeded_rng(1, 0), &dev)?;
    Ok(weights_evaluator(
        arimaa_encoder(ENCODER)?,
        &cfg,
        &tensors,
        &dev,
        m.name(),
    )?)
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

/// Positions, seconds and latency p50/p99 of one measurement.
type Measured = (u64, f64, f64, f64);

/// The fastest of `rounds` runs of [`measure_once`].
fn measure(
    ev: &Arc<dyn Evaluator<Arimaa>>,
    pool: &Arc<Vec<Arimaa>>,
    clients: usize,
    seconds: f64,
    rounds: usize,
) -> Result<Measured> {
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
) -> Result<Measured> {
    let latency = Arc::new(LatencyHistogram::default());
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(clients + 1));
    let threads: Vec<_> = (0..clients)
        .map(|t| {
            let (ev, pool, latency) = (ev.clone(), pool.clone(), latency.clone());
            let (stop, start) = (stop.clone(), start.clone());
            std::thread::spawn(move || -> Result<u64> {
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
        total += h.join().map_err(|_| BenchError::ClientPanicked)??;
    }
    let elapsed = t.elapsed().as_secs_f64();
    Ok((
        total,
        elapsed,
        latency.quantile(0.5),
        latency.quantile(0.99),
    ))
}

/// PyTorch's and plies' forward passes at every `max_batch`, through
/// `plies bench infer` run as a child (its thread pool is set before it
/// starts, which this process's pool no longer can be).
fn forward_rates(o: &EvaluatorOptions, threads: usize) -> Forward {
    let batches = &o.max_batch;
    match run_infer(o, threads) {
        Ok(v) => {
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
        Err(e) => Forward {
            torch: Err(e),
            rows: batches.iter().map(|&b| (b, None, None)).collect(),
        },
    }
}

/// `plies bench infer --json` on the same model and batch sizes.
fn run_infer(o: &EvaluatorOptions, threads: usize) -> Result<serde_json::Value, PeerError> {
    if o.no_torch {
        return Err(PeerError::NotRun("--no-torch".into()));
    }
    let exe = std::env::current_exe()
        .map_err(|e| PeerError::NotRun(format!("cannot find this program: {e}")))?;
    let mut cmd = Command::new(exe);
    cmd.args(["bench", "infer", "--no-stock", "--json"])
        .args(["--model", o.model.name()])
        .args(["--threads", &threads.to_string()])
        .args(["--seconds", &o.seconds.to_string()])
        .args(["--rounds", &o.rounds.to_string()])
        .arg("--batch")
        .arg(
            o.max_batch
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(","),
        );
    if let Some(p) = &o.python {
        cmd.arg("--python").arg(p);
    }
    let out = peer::run_peer(&mut cmd, "plies bench infer")?;
    serde_json::from_slice(&out.stdout).map_err(|e| PeerError::Output {
        what: "plies bench infer",
        why: e.to_string(),
    })
}

fn check(o: &EvaluatorOptions) -> Result<()> {
    let bad = |option: &str, why: String| Err(BenchError::bad_option(option, why));
    if o.clients.is_empty() || o.clients.contains(&0) {
        return bad("--clients", "counts must be at least 1".into());
    }
    if o.max_batch.is_empty() {
        return bad("--max-batch", "give at least one size".into());
    }
    if !(o.seconds > 0.0 && o.seconds.is_finite()) {
        return bad("--seconds", format!("must be positive, got {}", o.seconds));
    }
    if o.positions == 0 {
        return bad("--positions", "must be at least 1".into());
    }
    if o.rounds == 0 {
        return bad("--rounds", "must be at least 1".into());
    }
    Ok(())
}

/// Measures every client count on the unbatched path and through the
/// service at every `max_batch`, then PyTorch's forward passes.
pub fn run(o: &EvaluatorOptions) -> Result<EvaluatorReport> {
    check(o)?;
    let opts = |max_batch| BatchOptions {
        max_batch,
        max_wait: Duration::from_micros(o.max_wait_us),
        cache_entries: o.cache_entries,
        workers: 1,
    };
    for &b in &o.max_batch {
        opts(b).validate()?;
    }
    let threads = rayon::current_num_threads();
    let inner = evaluator(o.model).step(|| "building the model".into())?;
    let (pool, games) = arimaa_positions(o.positions);
    let pool = Arc::new(pool);
    // Warm up the kernels and allocator at every batch size used.
    for &b in &o.max_batch {
        inner.evaluate(&pool[..b.min(pool.len())])?;
    }
    inner.evaluate(&pool[..1])?;

    let mut cells = Vec::new();
    for &clients in &o.clients {
        let measured = measure(&inner, &pool, clients, o.seconds, o.rounds)
            .step(|| format!("unbatched, {clients} clients"))?;
        let base = measured.0 as f64 / measured.1;
        cells.push(Cell::new(clients, None, measured, 1.0, None));
        for &b in &o.max_batch {
            let svc = Arc::new(BatchedEvaluator::new(inner.clone(), opts(b))?);
            let shared: Arc<dyn Evaluator<Arimaa>> = svc.clone();
            let measured = measure(&shared, &pool, clients, o.seconds, o.rounds)
                .step(|| format!("batched {b}, {clients} clients"))?;
            let rate = measured.0 as f64 / measured.1;
            let mean_batch = svc.stats().mean_batch;
            cells.push(Cell::new(
                clients,
                Some(b),
                measured,
                mean_batch,
                Some(rate / base),
            ));
        }
    }
    Ok(EvaluatorReport {
        model: o.model,
        threads,
        games,
        positions: o.positions,
        seconds: o.seconds,
        rounds: o.rounds,
        max_wait_us: o.max_wait_us,
        cache_entries: o.cache_entries,
        cells,
        forward: forward_rates(o, threads),
    })
}

impl Cell {
    fn new(
        clients: usize,
        max_batch: Option<usize>,
        (positions, seconds, p50_us, p99_us): Measured,
        mean_batch: f64,
        ratio: Option<f64>,
    ) -> Self {
        Cell {
            clients,
            max_batch,
            positions,
            seconds,
            rate: positions as f64 / seconds,
            p50_us,
            p99_us,
            mean_batch,
            ratio,
        }
    }

    fn path(&self) -> &'static str {
        if self.max_batch.is_some() {
            "batched"
        } else {
            "unbatched"
        }
    }

    fn path_name(&self) -> String {
        match self.max_batch {
            None => "unbatched".to_string(),
            Some(b) => format!("batched {b}"),
        }
    }
}

impl EvaluatorReport {
    /// The fastest service cell at `max_batch` `b`.
    fn best(&self, b: usize) -> Option<&Cell> {
        self.cells
            .iter()
            .filter(|c| c.max_batch == Some(b))
            .max_by(|x, y| x.rate.total_cmp(&y.rate))
    }

    pub fn describe(&self) -> String {
        let cache = match self.cache_entries {
            0 => "off".to_string(),
            n => format!("{n} entries"),
        };
        format!(
            "{} ({} parameters, fresh seeded weights) on Arimaa {}x{}x{} planes ({ENCODER}) of {} \
             positions from {} random-steps games; CPU, {} model threads; \
             best of {} x {} s per cell; service max_wait {} us, cache {cache}",
            self.model.name(),
            self.model.config().num_params(),
            INPUT[0],
            INPUT[1],
            INPUT[2],
            self.positions,
            self.games,
            self.threads,
            self.rounds,
            self.seconds,
            self.max_wait_us,
        )
    }

    pub fn csv(&self) -> String {
        let model = self.model.name();
        let mut out = String::from(
            "model,clients,path,max_batch,positions,seconds,positions_per_s,p50_us,p99_us,mean_batch,ratio_to_unbatched\n",
        );
        for c in &self.cells {
            out += &format!(
                "{model},{},{},{},{},{:.4},{:.1},{:.1},{:.1},{:.2},{}\n",
                c.clients,
                c.path(),
                c.max_batch.map_or(String::new(), |b| b.to_string()),
                c.positions,
                c.seconds,
                c.rate,
                c.p50_us,
                c.p99_us,
                c.mean_batch,
                c.ratio.map_or(String::new(), |r| format!("{r:.3}")),
            );
        }
        out
    }

    pub fn to_json(&self) -> serde_json::Value {
        let rows: Vec<_> = self
            .cells
            .iter()
            .map(|c| {
                serde_json::json!({
                    "clients": c.clients,
                    "path": c.path(),
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
        let forward: Vec<_> = self
            .forward
            .rows
            .iter()
            .map(|&(b, plies, torch)| {
                let svc = self.best(b);
                serde_json::json!({
                    "batch": b,
                    "plies_forward_positions_per_s": plies,
                    "torch_forward_positions_per_s": torch,
                    "service_best_positions_per_s": svc.map(|c| c.rate),
                    "service_best_clients": svc.map(|c| c.clients),
                    "service_over_torch": ratio(svc.map(|c| c.rate), torch),
                })
            })
            .collect();
        let torch = &self.forward.torch;
        serde_json::json!({
            "model": self.model.name(),
            "description": self.describe(),
            "threads": self.threads,
            "positions": self.positions,
            "seconds": self.seconds,
            "rounds": self.rounds,
            "max_wait_us": self.max_wait_us,
            "cache_entries": self.cache_entries,
            "rows": rows,
            "forward": forward,
            "torch": torch.as_ref().ok(),
            "torch_note": torch.as_ref().err().map(|e| e.to_string()),
        })
    }
}

impl fmt::Display for EvaluatorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.describe())?;
        writeln!(
            f,
            "{:>7} {:<12} {:>12} {:>10} {:>10} {:>10} {:>12}",
            "clients", "path", "positions/s", "p50 us", "p99 us", "mean batch", "x unbatched"
        )?;
        for c in &self.cells {
            writeln!(
                f,
                "{:>7} {:<12} {:>12.0} {:>10.0} {:>10.0} {:>10.1} {:>12}",
                c.clients,
                c.path_name(),
                c.rate,
                c.p50_us,
                c.p99_us,
                c.mean_batch,
                num(c.ratio, 2),
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "{:>9} {:>20} {:>16} {:>16} {:>16}",
            "max_batch",
            "service best (clients)",
            "plies forward",
            peer_head("PyTorch", &self.forward.torch),
            "service/PyTorch"
        )?;
        for &(b, plies, torch) in &self.forward.rows {
            let svc = self.best(b);
            writeln!(
                f,
                "{:>9} {:>20} {:>16} {:>16} {:>16}",
                b,
                svc.map_or("-".into(), |c| format!("{:.0} ({})", c.rate, c.clients)),
                num(plies, 0),
                num(torch, 0),
                num(ratio(svc.map(|c| c.rate), torch), 2),
            )?;
        }
        writeln!(
            f,
            "(forward: positions/s of one forward pass of a whole batch of that size, no service)"
        )?;
        if let Err(note) = &self.forward.torch {
            writeln!(f, "note: PyTorch skipped: {note}")?;
        }
        Ok(())
    }
}

impl super::report::Report for EvaluatorReport {
    fn json(&self) -> serde_json::Result<String> {
        Ok(self.to_json().to_string())
    }
}
