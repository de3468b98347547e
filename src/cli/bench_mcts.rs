//! `plies bench mcts`: MCTS simulations per second with the batched
//! evaluator service against the same search calling the model one
//! position at a time, at several thread counts, in one run.

use clap::Args;
use plies::encode::Encoder;
use plies::game::Game;
use plies::games::{GameKind, GameSupport};
use plies::infer::batched::{BatchOptions, BatchedEvaluator};
use plies::infer::{CandleEvaluator, Evaluator};
use plies::model::{build, seeded_init, InputShape};
use plies::search::mcts::{run_search, MctsConfig, Node, Rollout};
use plies::util::{parse_device, seeded_rng};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct MctsBenchArgs {
    /// arimaa (encoder arimaa-6x8x8), amazons (amazons-units, 10x10, with
    /// global features: a resnet model) or gomoku (stones-2, 15x15).
    #[arg(long, default_value = "arimaa")]
    game: GameKind,
    /// A model preset with fresh seeded weights: cnn3, resnet-tiny, resnet-small.
    #[arg(long, default_value = "cnn3")]
    model: String,
    /// Search threads to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,8,32")]
    threads: Vec<usize>,
    /// Simulations per search.
    #[arg(long, default_value_t = 400)]
    sims: u64,
    /// Root positions (from seeded random games) searched per measurement.
    #[arg(long, default_value_t = 3)]
    positions: usize,
    /// Longest wait of the batched service for a fuller batch, microseconds.
    #[arg(long, default_value_t = 500)]
    max_wait_us: u64,
    /// Largest batch of the service (default: MCTS's own, three quarters
    /// of the threads).
    #[arg(long)]
    max_batch: Option<usize>,
    /// Rounds per measurement, unbatched and batched taking turns; the
    /// fastest round of each counts (a 2-core machine's timings vary from
    /// run to run by tens of percent).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    #[arg(long, default_value = "cpu")]
    device: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the rows as JSON.
    #[arg(long)]
    json: bool,
    /// Also write the rows as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
}

#[derive(Serialize)]
struct Row {
    threads: usize,
    unbatched_sims_per_s: f64,
    batched_sims_per_s: f64,
    ratio: f64,
    mean_batch: f64,
    latency_p50_us: f64,
    latency_p99_us: f64,
}

pub fn bench_mcts(a: MctsBenchArgs) -> anyhow::Result<ExitCode> {
    plies::with_game!(a.game, G => run::<G>(&a, G::new(), G::ENCODERS[0]))
}

/// Positions 10 to 30 random moves into seeded games (never finished ones).
fn roots<G: GameSupport>(start: &G, n: usize, seed: u64) -> Vec<G> {
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    let mut i = 0;
    while out.len() < n {
        let mut rng = seeded_rng(seed, i);
        i += 1;
        let mut g = start.clone();
        let plies = 10 + i % 20;
        for _ in 0..plies {
            match g.exploration_move(&mut rng, &mut scratch) {
                Some(mv) if g.outcome().is_none() => g.play(mv),
                _ => break,
            }
        }
        if g.outcome().is_none() {
            out.push(g);
        }
    }
    out
}

fn run<G: GameSupport>(a: &MctsBenchArgs, start: G, encoder: &str) -> anyhow::Result<ExitCode> {
    let device = parse_device(&a.device)?;
    let size = start.size();
    let enc: Box<dyn Encoder<G>> = G::encoder(encoder, size)?;
    let spec = enc.spec();
    if spec.globals > 0 && a.model == "cnn3" {
        anyhow::bail!(
            "--game {}: encoder {encoder} has {} global features, which cnn3 does not read; use --model resnet-tiny or resnet-small",
            a.game,
            spec.globals
        );
    }
    let input = InputShape::new(spec.shape, spec.globals);
    let cfg = plies::train::preset(&a.model, input).ok_or_else(|| {
        anyhow::anyhow!(
            "--model {}: expected cnn3, resnet-tiny or resnet-small",
            a.model
        )
    })?;
    let vm = candle_nn::VarMap::new();
    let vb = candle_nn::VarBuilder::from_varmap(&vm, candle_core::DType::F32, &device);
    let model = build(&cfg, vb)?;
    seeded_init(&vm, &cfg, &mut seeded_rng(a.seed, 0), &device)?;
    model.freeze()?;
    let inner: Arc<dyn Evaluator<G>> = Arc::new(CandleEvaluator::new(
        enc,
        model,
        device.clone(),
        a.model.clone(),
    ));
    let positions = roots(&start, a.positions, a.seed);
    eprintln!(
        "{} {} ({} positions, {} simulations each), device {}",
        G::NAME,
        a.model,
        positions.len(),
        a.sims,
        a.device
    );
    let mut rows = Vec::new();
    for &threads in &a.threads {
        let mcts = MctsConfig {
            simulations: a.sims,
            threads,
            rollout: Rollout::Plies(0),
            puct: Some(true),
            reuse: false,
            eval: Some(a.model.clone()),
            ..MctsConfig::default()
        };
        let search_all = |eval: &dyn Evaluator<G>| -> anyhow::Result<Duration> {
            let t = Instant::now();
            for (i, p) in positions.iter().enumerate() {
                run_search(&Node::default(), p, &mcts, Some(eval), a.seed + i as u64)?;
            }
            Ok(t.elapsed())
        };
        let mut plain = Duration::MAX;
        let mut with_batches = Duration::MAX;
        let mut stats = None;
        for _ in 0..a.rounds.max(1) {
            plain = plain.min(search_all(inner.as_ref())?);
            // The cache is off so both sides run the model on the same
            // number of positions: the difference is batching alone.
            let batched = BatchedEvaluator::new(
                inner.clone(),
                BatchOptions {
                    max_batch: a.max_batch.or(mcts.service_batch()).unwrap_or(1).max(1),
                    max_wait: Duration::from_micros(a.max_wait_us),
                    cache_entries: 0,
                },
            )?;
            let took = search_all(&batched)?;
            if took < with_batches {
                with_batches = took;
                stats = Some(batched.stats());
            }
        }
        let stats = stats.expect("at least one round");
        let total = (a.sims * positions.len() as u64) as f64;
        let row = Row {
            threads,
            unbatched_sims_per_s: total / plain.as_secs_f64(),
            batched_sims_per_s: total / with_batches.as_secs_f64(),
            ratio: plain.as_secs_f64() / with_batches.as_secs_f64(),
            mean_batch: stats.mean_batch,
            latency_p50_us: stats.latency.p50_us,
            latency_p99_us: stats.latency.p99_us,
        };
        eprintln!(
            "  service: {} batches, {:.0} us in the model per batch, queue wait p50 {:.0} us",
            stats.batches,
            stats.inner_seconds * 1e6 / stats.batches.max(1) as f64,
            stats.queue_wait.p50_us
        );
        eprintln!(
            "threads {:>3}: unbatched {:>8.0}/s, batched {:>8.0}/s ({:.2}x)",
            threads, row.unbatched_sims_per_s, row.batched_sims_per_s, row.ratio
        );
        rows.push(row);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!(
            "{:>7}  {:>16}  {:>14}  {:>6}  {:>10}  {:>14}",
            "threads",
            "unbatched sims/s",
            "batched sims/s",
            "ratio",
            "mean batch",
            "latency p50/p99"
        );
        for r in &rows {
            println!(
                "{:>7}  {:>16.0}  {:>14.0}  {:>5.2}x  {:>10.1}  {:>7.0}/{:<6.0}us",
                r.threads,
                r.unbatched_sims_per_s,
                r.batched_sims_per_s,
                r.ratio,
                r.mean_batch,
                r.latency_p50_us,
                r.latency_p99_us
            );
        }
    }
    if let Some(path) = &a.csv {
        let mut text = String::from(
            "threads,unbatched_sims_per_s,batched_sims_per_s,ratio,mean_batch,latency_p50_us,latency_p99_us\n",
        );
        for r in &rows {
            text.push_str(&format!(
                "{},{:.1},{:.1},{:.3},{:.2},{:.1},{:.1}\n",
                r.threads,
                r.unbatched_sims_per_s,
                r.batched_sims_per_s,
                r.ratio,
                r.mean_batch,
                r.latency_p50_us,
                r.latency_p99_us
            ));
        }
        std::fs::write(path, text)?;
    }
    Ok(ExitCode::SUCCESS)
}
