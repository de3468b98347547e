//! `plies import`: game archives to JSONL game records, every game replayed
//! through the rules engine.

use super::progress;
use anyhow::{bail, Context};
use clap::Args;
use plies::game::arimaa::Termination;
use plies::games::{GameKind, GameSupport};
use plies::record::arimaa_archive::{self, import_archive, FileSummary, ImportOptions};
use plies::record::RecordWriter;
use plies::report::Table;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The records file in the output directory.
pub const GAMES_FILE: &str = "games.jsonl";
/// The counts and skip reports in the output directory.
pub const SUMMARY_FILE: &str = "import-summary.json";

#[derive(Args)]
pub struct ImportArgs {
    #[arg(long)]
    game: GameKind,
    /// Input format (default: the game's first): arimaa-archive (the
    /// arimaa.com tab-separated game archive), playok-pgn (PlayOK Gomoku),
    /// amazons-text (one game per line).
    #[arg(long)]
    format: Option<String>,
    /// Record files to read.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output directory: gets games.jsonl and import-summary.json.
    #[arg(long)]
    out: PathBuf,
    /// Replace an existing DIR/games.jsonl and DIR/import-summary.json.
    #[arg(long)]
    force: bool,
    /// Keep a game only if both players are rated at least this.
    #[arg(long)]
    min_rating: Option<i32>,
    /// Keep only these terminations (codes or names, comma-separated:
    /// g,e,m,p,r,t,i,f,o or goal,elimination,...). Default: all.
    #[arg(long, value_delimiter = ',')]
    terminations: Vec<String>,
    /// Stop at the first game that does not replay instead of skipping it.
    #[arg(long)]
    stop_on_error: bool,
    /// How many skip reports to print.
    #[arg(long, default_value_t = 10)]
    show: usize,
    /// Print the summary as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(Serialize)]
struct Totals {
    games_read: usize,
    kept: usize,
    skipped: BTreeMap<String, usize>,
}

#[derive(Serialize)]
struct ImportSummary<'a> {
    game: &'static str,
    format: &'a str,
    records: String,
    options: &'a ImportOptions,
    total: Totals,
    files: &'a [FileSummary],
}

fn parse_termination(s: &str) -> anyhow::Result<Termination> {
    let s = s.trim();
    if s.len() == 1 && "gempritfo".contains(s) {
        return Ok(Termination::from_code(s));
    }
    arimaa_archive::termination_from_name(s).with_context(|| {
        format!("--terminations: '{s}' is not a termination (codes g,e,m,p,r,t,i,f,o or names such as goal, resignation)")
    })
}

/// Game lines in a file (lines after the header that are not blank), for the progress bar.
fn count_games(path: &Path) -> anyhow::Result<u64> {
    let file = std::fs::File::open(path).with_context(|| format!("{}", path.display()))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let (mut lines, mut blank, mut at_start, mut last) = (0u64, 0u64, true, b'\n');
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = reader
            .read(&mut buf)
            .with_context(|| format!("{}", path.display()))?;
        if n == 0 {
            break;
        }
        for &b in &buf[..n] {
            if b == b'\n' {
                if at_start {
                    blank += 1;
                }
                lines += 1;
                at_start = true;
            } else if b != b'\r' {
                at_start = false;
            }
            last = b;
        }
    }
    if last != b'\n' {
        lines += 1;
    }
    Ok(lines.saturating_sub(1 + blank))
}

fn totals(files: &[FileSummary]) -> Totals {
    let mut t = Totals {
        games_read: 0,
        kept: 0,
        skipped: BTreeMap::new(),
    };
    for f in files {
        t.games_read += f.games_read;
        t.kept += f.kept;
        for (k, v) in &f.skipped {
            *t.skipped.entry(k.clone()).or_default() += v;
        }
    }
    t
}

fn table(files: &[FileSummary], total: &Totals) -> Table {
    let reasons: BTreeSet<&String> = files.iter().flat_map(|f| f.skipped.keys()).collect();
    let mut headers = vec!["file", "games read", "kept", "skipped"];
    headers.extend(reasons.iter().map(|r| r.as_str()));
    let mut t = Table::with_headers(headers);
    let row = |name: &str, read: usize, kept: usize, skipped: &BTreeMap<String, usize>| {
        let mut cells = vec![
            name.to_string(),
            read.to_string(),
            kept.to_string(),
            skipped.values().sum::<usize>().to_string(),
        ];
        cells.extend(
            reasons
                .iter()
                .map(|r| skipped.get(*r).copied().unwrap_or(0).to_string()),
        );
        cells
    };
    for f in files {
        t.push_row(row(&f.file, f.games_read, f.kept, &f.skipped));
    }
    if files.len() > 1 {
        t.push_row(row("total", total.games_read, total.kept, &total.skipped));
    }
    t
}

pub fn run(a: ImportArgs) -> anyhow::Result<ExitCode> {
    plies::with_game!(a.game, G => import_game::<G>(a))
}

fn import_game<G: GameSupport>(a: ImportArgs) -> anyhow::Result<ExitCode> {
    let Some(&default) = G::RECORD_FORMATS.first() else {
        bail!("plies import reads no record format of {}", G::NAME);
    };
    let format = a.format.clone().unwrap_or_else(|| default.to_string());
    if !G::RECORD_FORMATS.contains(&format.as_str()) {
        bail!(
            "unknown --format '{format}' for {} (known: {})",
            G::NAME,
            G::RECORD_FORMATS.join(", ")
        );
    }
    // The archive is read streaming, with its own filters and reports.
    if format == arimaa_archive::FORMAT {
        return import_archive_files(a, &format);
    }
    let out = prepare_out(&a)?;
    let mut writer = RecordWriter::create(&out.games, a.force)?;
    let pb = progress(a.files.len() as u64, "files", a.quiet);
    let (mut files, mut reports) = (Vec::new(), Vec::new());
    for path in &a.files {
        let imported = G::import_records(&format, path)?;
        let mut summary = FileSummary {
            file: path.display().to_string(),
            games_read: imported.records.len() + imported.skipped.len(),
            ..FileSummary::default()
        };
        if !imported.skipped.is_empty() {
            if a.stop_on_error {
                bail!("{}: {}", path.display(), imported.skipped[0]);
            }
            summary
                .skipped
                .insert("not importable".into(), imported.skipped.len());
            reports.extend(imported.skipped);
        }
        for rec in imported.records {
            let rated = |r: Option<i32>| a.min_rating.is_none_or(|m| r.is_some_and(|r| r >= m));
            let reason = if !(rated(rec.ratings.first) && rated(rec.ratings.second)) {
                Some("rating")
            } else if !a.terminations.is_empty() && !a.terminations.contains(&rec.termination) {
                Some("termination")
            } else {
                None
            };
            match reason {
                Some(r) => *summary.skipped.entry(r.into()).or_default() += 1,
                None => {
                    *summary
                        .kept_by_termination
                        .entry(rec.termination.clone())
                        .or_default() += 1;
                    summary.kept += 1;
                    writer.write(&rec)?;
                }
            }
        }
        files.push(summary);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let written = writer.finish()?;
    let summary = serde_json::json!({
        "game": G::NAME,
        "format": format,
        "records": out.games.display().to_string(),
        "options": {
            "min_rating": a.min_rating,
            "terminations": a.terminations,
            "stop_on_error": a.stop_on_error,
        },
        "total": totals(&files),
        "files": files,
        "not_importable": reports,
    });
    plies::report::write_json(&out.summary, &summary)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", table(&files, &totals(&files)));
    print_reports(&reports, a.show, &out.summary);
    println!(
        "\nwrote {written} games to {} and the summary to {}",
        out.games.display(),
        out.summary.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Where an import writes, refused when it holds an import already (unless
/// `--force`).
struct OutFiles {
    games: PathBuf,
    summary: PathBuf,
    /// Held while the files are written: one import per output directory.
    _lock: plies::util::DirLock,
}

fn prepare_out(a: &ImportArgs) -> anyhow::Result<OutFiles> {
    let out = OutFiles {
        games: a.out.join(GAMES_FILE),
        summary: a.out.join(SUMMARY_FILE),
        _lock: plies::util::DirLock::acquire(&a.out)?,
    };
    if !a.force {
        for p in [&out.games, &out.summary] {
            if p.exists() {
                bail!(
                    "{} already exists; use --force to overwrite it",
                    p.display()
                );
            }
        }
    }
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("creating the output directory {}", a.out.display()))?;
    Ok(out)
}

/// The first `show` reports of games left out, one a line.
fn print_reports(reports: &[impl std::fmt::Display], show: usize, summary: &Path) {
    if reports.is_empty() {
        return;
    }
    println!(
        "\nskipped games (first {} of {}):",
        show.min(reports.len()),
        reports.len()
    );
    for r in reports.iter().take(show) {
        println!("  {r}");
    }
    if reports.len() > show {
        println!("  ... all in {}", summary.display());
    }
}

/// The arimaa.com archive: read streaming, filtered by the archive's own
/// options (ratings, termination codes), every skipped game reported.
fn import_archive_files(a: ImportArgs, format: &str) -> anyhow::Result<ExitCode> {
    let opts = ImportOptions {
        min_rating: a.min_rating,
        terminations: if a.terminations.is_empty() {
            None
        } else {
            Some(
                a.terminations
                    .iter()
                    .map(|s| parse_termination(s))
                    .collect::<anyhow::Result<_>>()?,
            )
        },
        stop_on_error: a.stop_on_error,
    };
    let mut expected = 0;
    for f in &a.files {
        expected += count_games(f)?;
    }
    let out = prepare_out(&a)?;
    let (games_path, summary_path) = (out.games.clone(), out.summary.clone());
    let mut writer = RecordWriter::create(&games_path, a.force)?;
    let pb = progress(expected, "import", a.quiet);
    let mut files = Vec::with_capacity(a.files.len());
    for path in &a.files {
        let file = std::fs::File::open(path).with_context(|| format!("{}", path.display()))?;
        let reader = BufReader::with_capacity(1 << 20, file);
        let summary = import_archive(reader, path, &opts, |rec| writer.write(&rec), || pb.inc(1))?;
        files.push(summary);
    }
    pb.finish_and_clear();
    let written = writer.finish()?;
    let total = totals(&files);
    debug_assert_eq!(written, total.kept);
    let summary = ImportSummary {
        game: "arimaa",
        format,
        records: games_path.display().to_string(),
        options: &opts,
        total,
        files: &files,
    };
    plies::report::write_json(&summary_path, &summary)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", table(&files, &summary.total));
    let reports: Vec<_> = files.iter().flat_map(|f| &f.reports).collect();
    print_reports(&reports, a.show, &summary_path);
    println!(
        "\nwrote {written} games to {} and the summary to {}",
        games_path.display(),
        summary_path.display()
    );
    Ok(ExitCode::SUCCESS)
}
