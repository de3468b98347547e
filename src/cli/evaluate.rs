//! `plies evaluate`: accuracy, MSE, MAE and R^2 of checkpoints and material
//! baselines on a dataset split, with the height plot.

use anyhow::{bail, Context};
use candle_core::Device;
use clap::Args;
use plies::checkpoint::CheckpointSource;
use plies::dataset::{Dataset, Split};
use plies::eval::{
    baseline_metrics, evaluate_checkpoint, evaluate_material, fit_k, material_rows, paired_by_game,
    predict_moves, value_bridge, EvalReport, EvaluatorResult, MovePredictionInput, PairedByGame,
    DEFAULT_K,
};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct EvaluateArgs {
    /// Checkpoint to evaluate: a directory or ckpt:hf:ORG/NAME[@REV]
    /// (repeat for several).
    #[arg(long)]
    checkpoint: Vec<String>,
    /// Baseline: `random` (a value drawn from the position's key) or any hand
    /// evaluator of the dataset's game (Amazons `lieberum`, `mindist`), each
    /// valuing every position with no lookahead; Arimaa also `material`
    /// (sigmoid(k * material balance), plus the `material-sign` rule) or
    /// `material-sign` alone. Repeat or comma-separate.
    /// With --moves: `material` or any hand evaluator of the game, and
    /// `naive` (wins at once first, moves that let the opponent win last);
    /// `random` is always there.
    #[arg(long, value_delimiter = ',')]
    baseline: Vec<String>,
    /// Rank the move played among all legal moves (1 ply) instead of
    /// predicting results: top-1, top-5 and MRR by game phase; writes
    /// moves.json and moves.csv into --out.
    #[arg(long)]
    moves: bool,
    /// With --moves: positions per forward pass (bounds memory).
    #[arg(long, default_value_t = 4096)]
    chunk: usize,
    /// Dataset directory.
    #[arg(long)]
    data: PathBuf,
    /// Split to evaluate: test, valid, train or all; several comma-separated
    /// (`test,train`) are reported side by side, each evaluator's name
    /// suffixed with its split.
    #[arg(long, default_value = "test")]
    split: String,
    /// Seed of the resampled games behind the intervals of each checkpoint
    /// against the material (or first) baseline.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Dataset whose train split fits the material baseline's k (default:
    /// --data's train split when it has rows, else k = 0.22 per rabbit).
    #[arg(long)]
    fit_data: Option<PathBuf>,
    /// Use this k (per rabbit of material balance) instead of fitting one.
    #[arg(long)]
    k: Option<f64>,
    /// Report directory: metrics.json, by_height.csv, by_height_buckets.csv,
    /// by_ply.csv, height.png, height.svg, ply.png, ply.svg.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Device of the checkpoints' models: cpu, cuda, cuda:N or metal.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Positions per model batch.
    #[arg(long, default_value_t = 1024)]
    batch: usize,
    /// Print metrics.json instead of the table.
    #[arg(long)]
    json: bool,
}

/// Parses `--device` (see [`plies::util::parse_device`]).
pub fn parse_device(s: &str) -> anyhow::Result<Device> {
    Ok(plies::util::parse_device(s)?)
}

fn parse_split(s: &str) -> anyhow::Result<Option<Split>> {
    if s == "all" {
        return Ok(None);
    }
    s.parse::<Split>()
        .map(Some)
        .map_err(|_| anyhow::anyhow!("--split {s}: expected test, valid, train or all"))
}

/// A checkpoint against the reference baseline, on the same games.
#[derive(serde::Serialize)]
struct PairedResult {
    evaluator: String,
    reference: String,
    by_game: PairedByGame,
}

/// Resamples of the games for the intervals of [`compare_by_game`].
const GAME_RESAMPLES: usize = 2000;

/// Every checkpoint (the first `checkpoints` results) against the
/// `material` baseline, or the first baseline when there is no material,
/// resampling whole games.
fn compare_by_game(
    results: &[EvaluatorResult],
    checkpoints: usize,
    seed: u64,
) -> Vec<PairedResult> {
    let baselines = &results[checkpoints.min(results.len())..];
    let reference = baselines
        .iter()
        .find(|r| r.name == "material")
        .or(baselines.first());
    let Some(reference) = reference else {
        return Vec::new();
    };
    results[..checkpoints.min(results.len())]
        .iter()
        .filter_map(|r| {
            let by_game = paired_by_game(
                &r.metrics.by_game,
                &reference.metrics.by_game,
                GAME_RESAMPLES,
                seed,
            )?;
            Some(PairedResult {
                evaluator: r.name.clone(),
                reference: reference.name.clone(),
                by_game,
            })
        })
        .collect()
}

fn unique_name(taken: &[EvaluatorResult], base: String) -> String {
    let mut name = base.clone();
    let mut i = 2;
    while taken.iter().any(|r| r.name == name) {
        name = format!("{base}-{i}");
        i += 1;
    }
    name
}

/// The material baseline's k and where it came from.
fn material_k(a: &EvaluateArgs, data: &Dataset) -> anyhow::Result<(f64, String)> {
    if let Some(k) = a.k {
        if !k.is_finite() {
            bail!("--k {k}: expected a finite number");
        }
        return Ok((k, "given by --k".into()));
    }
    let (fit, explicit) = match &a.fit_data {
        Some(dir) => (Dataset::open(dir)?, true),
        None => (data.clone(), false),
    };
    if fit.num_rows(Some(Split::Train)) == 0 {
        if explicit {
            bail!(
                "--fit-data {}: its train split has no rows to fit k on",
                fit.dir().display()
            );
        }
        return Ok((
            DEFAULT_K,
            format!(
                "default (the train split of {} is empty)",
                data.dir().display()
            ),
        ));
    }
    let rows = material_rows(&fit, Some(Split::Train))?;
    match fit_k(&rows) {
        Some(k) => Ok((
            k,
            format!(
                "fitted on the train split of {} ({} rows)",
                fit.dir().display(),
                rows.len()
            ),
        )),
        None => Ok((
            DEFAULT_K,
            format!(
                "default (every balance in the train split of {} is level)",
                fit.dir().display()
            ),
        )),
    }
}

pub fn run(a: EvaluateArgs) -> anyhow::Result<ExitCode> {
    if a.moves {
        return run_moves(a);
    }
    if a.checkpoint.is_empty() && a.baseline.is_empty() {
        bail!("nothing to evaluate: pass --checkpoint DIR and/or --baseline NAME");
    }
    let data = Dataset::open(&a.data)?;
    let names: Vec<&str> = a.split.split(',').map(str::trim).collect();
    let mut results: Vec<EvaluatorResult> = Vec::new();
    let mut paired = Vec::new();
    for name in &names {
        let split = parse_split(name)?;
        let rows = data.num_rows(split);
        if rows == 0 {
            bail!("dataset {}: the {name} split has no rows", a.data.display());
        }
        let mut these = evaluate_split(&a, &data, split)?;
        paired.extend(compare_by_game(&these, a.checkpoint.len(), a.seed));
        if names.len() > 1 {
            for r in &mut these {
                r.name = format!("{} ({name})", r.name);
            }
        }
        results.extend(these);
    }
    let rows: u64 = names
        .iter()
        .filter_map(|n| parse_split(n).ok())
        .map(|s| data.num_rows(s))
        .sum();
    let report = EvalReport {
        dataset: a.data.display().to_string(),
        game: data.spec().game,
        split: a.split.clone(),
        results,
    };
    if let Some(out) = &a.out {
        report.write(out)?;
        if !paired.is_empty() {
            let path = out.join("paired_by_game.json");
            plies::util::write_atomic(&path, serde_json::to_string_pretty(&paired)?.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report.to_json())?);
    } else {
        println!(
            "{} ({} split, {} positions, {} encoder)\n",
            a.data.display(),
            a.split,
            rows,
            data.spec().encoder.name
        );
        println!("{}", report.table());
        for r in &report.results {
            println!("{}: {}", r.name, r.description);
        }
        println!(
            "Acc counts decisive positions only (draws left out; a prediction of 0.5 counts half)."
        );
        for p in &paired {
            let d = &p.by_game;
            println!(
                "{} - {}, paired over {} games ({} resamples of whole games, seed {}): \
                 Acc {:+.1} points [95% {:+.1}, {:+.1}], MSE {:+.4} [{:+.4}, {:+.4}]",
                p.evaluator,
                p.reference,
                d.games,
                d.resamples,
                a.seed,
                100.0 * d.accuracy.value,
                100.0 * d.accuracy.low,
                100.0 * d.accuracy.high,
                d.mse.value,
                d.mse.low,
                d.mse.high
            );
        }
        if let Some(out) = &a.out {
            println!("wrote {}/{{metrics.json,by_height.csv,by_height_buckets.csv,by_ply.csv,height.png,height.svg,ply.png,ply.svg}}", out.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Every checkpoint and baseline of `a` on one split.
fn evaluate_split(
    a: &EvaluateArgs,
    data: &Dataset,
    split: Option<Split>,
) -> anyhow::Result<Vec<EvaluatorResult>> {
    let mut results: Vec<EvaluatorResult> = Vec::new();
    if !a.checkpoint.is_empty() {
        let device = parse_device(&a.device)?;
        for spec in &a.checkpoint {
            let source = CheckpointSource::parse(spec)?;
            let ckpt = source
                .open(None, None)
                .with_context(|| format!("loading checkpoint {source}"))?;
            let metrics = evaluate_checkpoint(&ckpt, data, split, &device, a.batch)?;
            let base = source_name(&source);
            let read_as = match value_bridge(&ckpt, data)? {
                Some(bridge) => format!(", positions read as {}", bridge.description),
                None => String::new(),
            };
            results.push(EvaluatorResult {
                name: unique_name(&results, base),
                description: format!(
                    "checkpoint {} ({}, {}{read_as})",
                    source,
                    ckpt.config.model.kind(),
                    ckpt.config.encoder.name
                ),
                metrics,
            });
        }
    }
    let want = |b: &str| a.baseline.iter().any(|x| x == b);
    if want("material") || want("material-sign") {
        let rows = material_rows(data, split)?;
        if want("material") {
            let (k, how) = material_k(a, data)?;
            let (fitted, _) = evaluate_material(&rows, k);
            results.push(EvaluatorResult {
                name: "material".into(),
                description: format!(
                    "sigmoid(k * material balance in rabbits), k = {k:.4} per rabbit, {how}"
                ),
                metrics: fitted,
            });
        }
        let (_, sign) = evaluate_material(&rows, DEFAULT_K);
        results.push(EvaluatorResult {
            name: "material-sign".into(),
            description: "1 when ahead in material, 0 behind, 0.5 level".into(),
            metrics: sign,
        });
    }
    for name in a
        .baseline
        .iter()
        .filter(|b| !["material", "material-sign"].contains(&b.as_str()))
    {
        let metrics = baseline_metrics(data, split, name)?;
        results.push(EvaluatorResult {
            name: unique_name(&results, name.clone()),
            description: if name == "random" {
                "a value drawn from the position's key".into()
            } else {
                format!("hand evaluator `{name}`, no lookahead")
            },
            metrics,
        });
    }
    Ok(results)
}

/// A checkpoint's name in the report: its directory's name, or the hub
/// repository's or shipped checkpoint's label.
fn source_name(source: &CheckpointSource) -> String {
    match source {
        CheckpointSource::Dir(dir) => checkpoint_name(dir),
        CheckpointSource::Hub(_) | CheckpointSource::Builtin(_) => source.label(),
    }
}

/// `plies evaluate --moves`: move prediction.
fn run_moves(a: EvaluateArgs) -> anyhow::Result<ExitCode> {
    let split = parse_split(&a.split)?;
    let data = Dataset::open(&a.data)?;
    let device = parse_device(&a.device)?;
    let mut checkpoints = Vec::new();
    for spec in &a.checkpoint {
        let source = CheckpointSource::parse(spec)?;
        let ckpt = source
            .open(None, None)
            .with_context(|| format!("loading checkpoint {source}"))?;
        let taken: Vec<&String> = checkpoints.iter().map(|(n, _)| n).collect();
        let mut name = source_name(&source);
        let base = name.clone();
        let mut i = 2;
        while taken.contains(&&name) {
            name = format!("{base}-{i}");
            i += 1;
        }
        checkpoints.push((name, ckpt));
    }
    let input = MovePredictionInput {
        dataset: &data,
        split,
        checkpoints: &checkpoints,
        hands: &a.baseline,
        device: &device,
        chunk: a.chunk,
        progress: !a.json,
    };
    let report = predict_moves(&input, &a.split)?;
    if let Some(out) = &a.out {
        report.write(out)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report.to_json())?);
    } else {
        println!(
            "{} ({} split): the move played ranked among all legal moves, 1 ply\n",
            a.data.display(),
            a.split
        );
        println!("{}", report.table());
        for r in &report.results {
            println!("{}: {}", r.name, r.description);
        }
        println!("Ties are broken uniformly at random (expectations). Phase: share of the game played, thirds.");
        if let Some(out) = &a.out {
            println!("wrote {}/{{moves.json,moves.csv}}", out.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A short name for a checkpoint: its folder's name, or for a training
/// run's `best/` and `last/` folders the run's name with that suffix.
fn checkpoint_name(dir: &std::path::Path) -> String {
    let name = |p: &std::path::Path| p.file_name().map(|n| n.to_string_lossy().to_string());
    match name(dir).as_deref() {
        // A run's generic leaf (a fit's best/last, a loop generation's net)
        // is named with its parent.
        Some(leaf @ ("best" | "last" | "net")) => match dir.parent().and_then(name) {
            Some(run) => format!("{run}/{leaf}"),
            None => leaf.to_string(),
        },
        Some(leaf) => leaf.to_string(),
        None => "checkpoint".into(),
    }
}
