//! MCTS simulations per second with the batched evaluator service against
//! the same search calling the model one position at a time, at several
//! thread counts, in one run.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{BenchError, Notes, Result};
use crate::encode::Encoder;
use crate::game::Game;
use crate::games::{GameKind, GameSupport};
use crate::infer::backend::BackendChoice;
use crate::infer::batched::{BatchOptions, BatchSplit, BatchStats, BatchedEvaluator};
use crate::infer::plan::Precision;
use crate::infer::{weights_backend, Evaluator, ModelEvaluator};
use crate::model::{seeded_tensors, InputShape};
use crate::search::mcts::{run_search, MctsConfig, Node, Rollout};
use crate::util::{parse_device, seeded_rng};

pub struct MctsOptions {
    /// arimaa (encoder arimaa-6x8x8), amazons (amazons-units, 10x10, with
    /// global features: a resnet model) or gomoku (stones-2, 15x15).
    pub game: GameKind,
    /// A model preset with fresh seeded weights: cnn3, resnet-tiny, resnet-small.
    pub model: String,
    /// Search threads to measure.
    pub threads: Vec<usize>,
    /// Simulations per search.
    pub sims: u64,
    /// Root positions (from seeded random games) searched per measurement.
    pub positions: usize,
    /// Longest wait of the batched service for a fuller batch, microseconds.
    pub max_wait_us: u64,
    /// Largest batch of the service (`None`: MCTS's own).
    pub max_batch: Option<usize>,
    /// Rounds per measurement, unbatched and batched taking turns; the
    /// fastest round of each counts.
    pub rounds: usize,
    pub device: String,
    pub seed: u64,
}

#[derive(Serialize, Clone, Debug)]
pub struct MctsRow {
    pub threads: usize,
    pub unbatched_sims_per_s: f64,
    pub batched_sims_per_s: f64,
    pub ratio: f64,
    pub mean_batch: f64,
    pub latency_p50_us: f64,
    pub latency_p99_us: f64,
    /// The same search with an evaluator that costs nothing (value 0, no
    /// policy): the ceiling the search itself sets.
    pub zero_cost_sims_per_s: f64,
    /// Batched over zero-cost: the share of the ceiling the network leaves.
    pub of_zero_cost: f64,
    /// Where the service's batches spent their time.
    pub split: BatchSplit,
}

/// Value 0 for every position, at no cost.
struct ZeroCost;

impl<G: Game> Evaluator<G> for ZeroCost {
    fn evaluate(&self, states: &[G]) -> std::result::Result<Vec<f32>, crate::infer::InferError> {
        Ok(vec![0.0; states.len()])
    }

    fn prefers_batches(&self) -> bool {
        false
    }

    fn name(&self) -> String {
        "zero-cost".into()
    }
}

pub struct MctsReport {
    pub rows: Vec<MctsRow>,
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

/// Measures every thread count of `opts`; progress goes to `notes`.
pub fn run(opts: &MctsOptions, notes: Notes) -> Result<MctsReport> {
    with_game!(opts.game, G => run_game::<G>(opts, G::new(), G::ENCODERS[0], notes))
}

fn run_game<G: GameSupport>(
    opts: &MctsOptions,
    start: G,
    encoder: &str,
    notes: Notes,
) -> Result<MctsReport> {
    let device = parse_device(&opts.device)?;
    let size = start.size();
    let enc: Box<dyn Encoder<G>> = G::encoder(encoder, size)?;
    let spec = enc.spec();
    if spec.globals > 0 && opts.model == "cnn3" {
        return Err(BenchError::bad_option(
            format!("--game {}", opts.game),
            format!(
                "encoder {encoder} has {} global features, which cnn3 does not read; use --model resnet-tiny or resnet-small",
                spec.globals
            ),
        ));
    }
    let input = InputShape::new(spec.shape, spec.globals);
    let cfg = crate::train::preset(&opts.model, input).ok_or_else(|| {
        BenchError::bad_option(
            format!("--model {}", opts.model),
            "expected cnn3, resnet-tiny or resnet-small",
        )
    })?;
    let tensors = seeded_tensors(&cfg, &mut seeded_rng(opts.seed, 0), &device)?;
    // The backend weights_evaluator would pick, named in the notes
    // (PLIES_BACKEND=native takes the native one on CUDA).
    let backend = weights_backend(
        &cfg,
        &tensors,
        (enc.shape(), enc.globals_len()),
        &device,
        BackendChoice::Auto,
        Precision::F32,
    )?;
    let backend_name = backend.name();
    let inner: Arc<dyn Evaluator<G>> =
        Arc::new(ModelEvaluator::new(enc, backend, opts.model.clone()));
    let positions = roots(&start, opts.positions, opts.seed);
    notes(&format!(
        "{} {} ({} positions, {} simulations each), device {}, backend {backend_name}",
        G::NAME,
        opts.model,
        positions.len(),
        opts.sims,
        opts.device
    ));
    let mut rows = Vec::new();
    for &threads in &opts.threads {
        let mcts = MctsConfig {
            simulations: opts.sims,
            threads,
            rollout: Rollout::Plies(0),
            puct: Some(true),
            reuse: false,
            eval: Some(opts.model.clone()),
            ..MctsConfig::default()
        };
        let search_all = |eval: &dyn Evaluator<G>| -> Result<Duration> {
            let t = Instant::now();
            for (i, p) in positions.iter().enumerate() {
                run_search(
                    &Node::default(),
                    p,
                    &mcts,
                    Some(eval),
                    opts.seed + i as u64,
                    None,
                )?;
            }
            Ok(t.elapsed())
        };
        // The cache is off so both sides run the model on the same number
        // of positions: the difference is batching alone.
        let batched_round = || -> Result<(Duration, BatchStats)> {
            let batched = BatchedEvaluator::new(
                inner.clone(),
                BatchOptions {
                    max_batch: opts
                        .max_batch
                        .or(mcts.service_batch_on(!device.is_cpu()))
                        .unwrap_or(1)
                        .max(1),
                    max_wait: Duration::from_micros(opts.max_wait_us),
                    cache_entries: 0,
                    workers: BatchOptions::workers_on(!device.is_cpu()),
                },
            )?;
            let took = search_all(&batched)?;
            Ok((took, batched.stats()))
        };
        let mut plain = search_all(inner.as_ref())?;
        let mut zero = search_all(&ZeroCost)?;
        let (mut with_batches, mut stats) = batched_round()?;
        for _ in 1..opts.rounds.max(1) {
            plain = plain.min(search_all(inner.as_ref())?);
            zero = zero.min(search_all(&ZeroCost)?);
            let (took, s) = batched_round()?;
            if took < with_batches {
                (with_batches, stats) = (took, s);
            }
        }
        let total = (opts.sims * positions.len() as u64) as f64;
        let row = MctsRow {
            threads,
            unbatched_sims_per_s: total / plain.as_secs_f64(),
            batched_sims_per_s: total / with_batches.as_secs_f64(),
            ratio: plain.as_secs_f64() / with_batches.as_secs_f64(),
            mean_batch: stats.mean_batch,
            latency_p50_us: stats.latency.p50_us,
            latency_p99_us: stats.latency.p99_us,
            zero_cost_sims_per_s: total / zero.as_secs_f64(),
            of_zero_cost: zero.as_secs_f64() / with_batches.as_secs_f64(),
            split: stats.split.clone(),
        };
        let phases: Vec<String> = stats
            .split
            .phases()
            .iter()
            .map(|(name, us)| format!("{name} {us:.0}"))
            .collect();
        notes(&format!(
            "  service: {} batches, queue wait p50 {:.0} us; per batch, us: {}",
            stats.batches,
            stats.queue_wait.p50_us,
            phases.join(", ")
        ));
        notes(&format!(
            "threads {:>3}: unbatched {:>8.0}/s, batched {:>8.0}/s ({:.2}x)",
            threads, row.unbatched_sims_per_s, row.batched_sims_per_s, row.ratio
        ));
        rows.push(row);
    }
    Ok(MctsReport { rows })
}

/// The CSV columns after `threads`, with their decimals.
const CSV_COLUMNS: [(&str, usize); 13] = [
    ("unbatched_sims_per_s", 1),
    ("batched_sims_per_s", 1),
    ("ratio", 3),
    ("mean_batch", 2),
    ("latency_p50_us", 1),
    ("latency_p99_us", 1),
    ("zero_cost_sims_per_s", 1),
    ("of_zero_cost", 3),
    ("form_us", 1),
    ("encode_us", 1),
    ("network_us", 1),
    ("finish_us", 1),
    ("reply_us", 1),
];

impl MctsRow {
    /// The values of [`CSV_COLUMNS`], in order.
    fn values(&self) -> [f64; 13] {
        let s = &self.split;
        [
            self.unbatched_sims_per_s,
            self.batched_sims_per_s,
            self.ratio,
            self.mean_batch,
            self.latency_p50_us,
            self.latency_p99_us,
            self.zero_cost_sims_per_s,
            self.of_zero_cost,
            s.form_us,
            s.encode_us,
            s.network_us,
            s.finish_us,
            s.reply_us,
        ]
    }
}

impl MctsReport {
    pub fn csv(&self) -> String {
        let mut text = String::from("threads");
        for (name, _) in CSV_COLUMNS {
            text += ",";
            text += name;
        }
        text += "\n";
        for r in &self.rows {
            text += &r.threads.to_string();
            for ((_, prec), v) in CSV_COLUMNS.iter().zip(r.values()) {
                text += &format!(",{v:.prec$}");
            }
            text += "\n";
        }
        text
    }
}

impl fmt::Display for MctsReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>7}  {:>16}  {:>14}  {:>6}  {:>10}  {:>14}  {:>15}  {:>9}",
            "threads",
            "unbatched sims/s",
            "batched sims/s",
            "ratio",
            "mean batch",
            "latency p50/p99",
            "zero-cost sims/s",
            "of it"
        )?;
        for r in &self.rows {
            writeln!(
                f,
                "{:>7}  {:>16.0}  {:>14.0}  {:>5.2}x  {:>10.1}  {:>7.0}/{:<6.0}us  {:>15.0}  {:>8.0}%",
                r.threads,
                r.unbatched_sims_per_s,
                r.batched_sims_per_s,
                r.ratio,
                r.mean_batch,
                r.latency_p50_us,
                r.latency_p99_us,
                r.zero_cost_sims_per_s,
                100.0 * r.of_zero_cost
            )?;
        }
        Ok(())
    }
}

impl super::report::Report for MctsReport {
    /// The rows, pretty-printed.
    fn json(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(&self.rows)
    }
}
