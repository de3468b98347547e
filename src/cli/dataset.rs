//! `plies dataset build | verify | stats`.

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use plies::dataset::SplitRule;
use plies::encode::Encoder;
use plies::game::Game;
use plies::games::{GameKind, GameSupport};
use plies::positions::{
    build_dataset, first_record_info, BuildOptions, BuildReport, Filters, PolicyTargets,
    Terminations,
};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Subcommand)]
pub enum DatasetCmd {
    /// Build a dataset of encoded positions from JSONL game records.
    Build(BuildArgs),
    /// Play games between two players and store every position as a
    /// dataset (Tic-tac-toe).
    Generate(super::data::GenerateArgs),
    /// Print the rows of a dataset as JSON lines, in stored order: the
    /// fields of a row as the Rust reader returns it plus every other
    /// stored column (`split`, ...). For checks by outside tools.
    Dump(super::data::DumpArgs),
    /// Check a dataset's shards against its manifest (counts, sha256, schema).
    Verify {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Join datasets of one game and encoder (e.g. the datasets of
    /// `selfplay --shard` runs) into one whose manifest lists every shard;
    /// shards are hard-linked, not copied (copied only across file systems).
    Merge {
        /// The datasets, in the order their shards are listed.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// The merged dataset (must not exist, or be empty).
        #[arg(long)]
        out: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Write a copy of a dataset whose labels are alpha-beta search values
    /// of its positions (or a mix of those and the game results): targets
    /// for a network that should see as far as the search did.
    Relabel(RelabelArgs),
    /// Summarise a dataset: rows, games, splits, labels, game lengths.
    Stats {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
        /// Also draw rows per plies-to-end (PNG, or SVG for a .svg name).
        #[arg(long, value_name = "FILE")]
        plot: Option<PathBuf>,
    },
}

#[derive(Args)]
pub struct RelabelArgs {
    /// The dataset to relabel (left as it is).
    data: PathBuf,
    /// The relabelled dataset (replaced once complete if one is there).
    #[arg(long)]
    out: PathBuf,
    /// The evaluator at the search's leaves, as players name it
    /// (`lieberum`, `material`, `ckpt:PATH`, ...).
    #[arg(long)]
    eval: String,
    /// Alpha-beta depth, in moves.
    #[arg(long, default_value_t = 2)]
    depth: u32,
    /// Share of the label from the search (the rest stays the game's
    /// result): 1 replaces it, 0 keeps it.
    #[arg(long, default_value_t = 1.0)]
    mix: f32,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

fn relabel(a: RelabelArgs) -> anyhow::Result<ExitCode> {
    let game = plies::dataset::Dataset::open(&a.data)?.spec().game;
    let kind = game
        .parse::<GameKind>()
        .with_context(|| format!("{}: the dataset's game '{game}'", a.data.display()))?;
    let labels = plies::positions::SearchLabels {
        eval: a.eval.clone(),
        depth: a.depth,
        mix: a.mix,
    };
    let bar = super::progress(0, "searched", a.quiet);
    let report = plies::with_game!(kind, G => {
        plies::positions::label_by_search::<G>(&a.data, &a.out, &labels, Some(&bar))
    })?;
    bar.finish_and_clear();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{report}");
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct BuildArgs {
    /// The game; inferred from the first record when left out.
    #[arg(long)]
    game: Option<GameKind>,
    /// JSONL record files, read in this order, or the directories `plies
    /// import` and `plies selfplay` write (their record files in order).
    #[arg(long, required = true, num_args = 1..)]
    records: Vec<PathBuf>,
    /// Encoder name (default: arimaa-6x8x8, amazons-units, stones-2 or
    /// tictactoe-2x3x3, by game).
    #[arg(long)]
    encoder: Option<String>,
    /// Output dataset directory.
    #[arg(long)]
    out: PathBuf,
    /// Rows per shard file.
    #[arg(long, default_value_t = plies::dataset::DEFAULT_SHARD_ROWS)]
    shard_rows: usize,
    /// Keep only the K positions nearest the end of each game (plies to end < K).
    #[arg(long)]
    last_plies: Option<u32>,
    /// Keep only games whose two players are both rated at least R.
    #[arg(long)]
    min_rating: Option<i32>,
    /// Terminations that count: a comma list or `all` (default for Arimaa:
    /// goal,elimination,immobilization; for the others: all except
    /// resignation, timeout, forfeit, unfinished, illegal_move, other).
    #[arg(long)]
    terminations: Option<String>,
    /// Number of cross-validation folds (the `fold` column), 1 to 255.
    #[arg(long, default_value_t = plies::dataset::DEFAULT_FOLDS, value_parser = clap::value_parser!(u8).range(1..=255))]
    folds: u8,
    /// Share of games in the validation split (by hash of the game id).
    #[arg(long, default_value_t = 0.1)]
    valid: f64,
    /// Share of games in the test split.
    #[arg(long, default_value_t = 0.1)]
    test: f64,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Replace a dataset in --out (the old one stays readable until the new one is complete).
    #[arg(long)]
    force: bool,
    /// Stop at the first bad record instead of skipping it.
    #[arg(long)]
    strict: bool,
    /// Policy targets: `none`, or `played` (the move played, with
    /// probability 1, at every position where the player chose it: the best
    /// move of alpha-beta self-play, the human's move in real games; moves
    /// self-play drew at random for exploration get none).
    #[arg(long, default_value = "none")]
    policy_targets: PolicyTargets,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

fn build(a: BuildArgs) -> anyhow::Result<ExitCode> {
    let json = a.json;
    let report = build_report(a)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{report}");
    }
    if report.positions == 0 {
        eprintln!("warning: no position passed the filters; the dataset is empty");
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds the dataset `a` describes; the report is the caller's to print.
fn build_report(mut a: BuildArgs) -> anyhow::Result<BuildReport> {
    a.records = super::records::record_files(&a.records)?;
    let first = first_record_info(&a.records)?;
    let record_kind = match &first {
        Some((game, _)) => Some(
            game.parse::<GameKind>()
                .with_context(|| format!("the first record names game '{game}'"))?,
        ),
        None => None,
    };
    let kind = match (a.game, record_kind) {
        (Some(g), Some(r)) if g != r => bail!(
            "--game {g}, but the first record of {} is a {r} game",
            a.records[0].display()
        ),
        (Some(g), _) => g,
        (None, Some(r)) => r,
        (None, None) => bail!("the record files hold no record: pass --game"),
    };
    let size = first.and_then(|(_, size)| size);
    let name = a
        .encoder
        .clone()
        .unwrap_or_else(|| plies::with_game!(kind, G => G::ENCODERS[0]).to_string());
    plies::with_game!(kind, G => {
        let encoder = G::encoder(&name, size.unwrap_or(G::DEFAULT_SIZE))?;
        run::<G>(a, Arc::from(encoder), size)
    })
}

fn run<G: GameSupport>(
    a: BuildArgs,
    encoder: Arc<dyn Encoder<G>>,
    size: Option<usize>,
) -> anyhow::Result<BuildReport> {
    let board_size = size.unwrap_or(G::DEFAULT_SIZE);
    let terminations = match &a.terminations {
        Some(list) => Terminations::parse::<G>(list)?,
        None => Terminations::default_for::<G>(),
    };
    let options = BuildOptions {
        filters: Filters {
            last_plies: a.last_plies,
            min_rating: a.min_rating,
            terminations,
        },
        split: SplitRule::new(a.valid, a.test)?,
        folds: a.folds,
        shard_rows: a.shard_rows,
        threads: a.threads,
        force: a.force,
        strict: a.strict,
        policy_targets: a.policy_targets,
        provenance: serde_json::json!({
            "command": std::env::args().collect::<Vec<_>>().join(" "),
            "records": a.records,
        }),
    };
    let pb = if a.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        let pb = indicatif::ProgressBar::new(0);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg:>20} [{bar:40}] {binary_bytes}/{binary_total_bytes} ({eta})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        pb
    };
    let report: BuildReport =
        build_dataset::<G>(&a.records, &a.out, encoder, board_size, &options, Some(&pb))?;
    pb.finish_and_clear();
    Ok(report)
}

/// The dataset of a self-play run: every finished game of its record files
/// (terminations `all`), default split and folds; replaces a dataset
/// already in `out` (it is derived from the records, which stay).
pub fn build_from_selfplay(
    records: Vec<PathBuf>,
    out: PathBuf,
    encoder: String,
    last_plies: Option<u32>,
    policy_targets: PolicyTargets,
    threads: Option<usize>,
    quiet: bool,
) -> anyhow::Result<BuildReport> {
    build_report(BuildArgs {
        game: None,
        records,
        encoder: Some(encoder),
        out,
        shard_rows: plies::dataset::DEFAULT_SHARD_ROWS,
        last_plies,
        min_rating: None,
        terminations: Some("all".into()),
        folds: plies::dataset::DEFAULT_FOLDS,
        valid: 0.1,
        test: 0.1,
        threads,
        force: true,
        strict: true,
        policy_targets,
        json: false,
        quiet,
    })
}

pub fn run_cmd(cmd: DatasetCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        DatasetCmd::Build(a) => build(a),
        DatasetCmd::Generate(a) => super::data::generate(a),
        DatasetCmd::Dump(a) => super::data::dump(a),
        DatasetCmd::Verify { dir, json } => super::data::verify(&dir, json),
        DatasetCmd::Merge { dirs, out, json } => merge(&dirs, &out, json),
        DatasetCmd::Relabel(a) => relabel(a),
        DatasetCmd::Stats { dir, json, plot } => super::data::stats(&dir, json, plot.as_deref()),
    }
}

fn merge(dirs: &[PathBuf], out: &std::path::Path, json: bool) -> anyhow::Result<ExitCode> {
    let r = plies::dataset::merge(dirs, out)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!(
            "merged {} datasets into {}: {} shards ({} hard-linked, {} copied), {} rows, {} games; \
             manifest sha256 {}",
            r.sources.len(),
            r.out.display(),
            r.shards,
            r.linked,
            r.copied,
            r.rows,
            r.games,
            r.manifest_sha256
        );
    }
    Ok(ExitCode::SUCCESS)
}
