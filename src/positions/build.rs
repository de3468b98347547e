//! `build_dataset`: JSONL game records -> a sharded Arrow dataset.
//!
//! The records are read in chunks of games; each chunk is parsed, filtered,
//! replayed and encoded in parallel (rayon, on a pool of `threads`), and the
//! rows go, in input order, to a writer thread that cuts and compresses the
//! shards while the next chunk is encoded. The output depends only on the
//! input and the options, never on the number of threads: the same records
//! give the same bytes in every shard.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::error::PositionsError;
use super::filter::{DropReason, Dropped, Filters};
use super::from_record::{record_rows, StageTimes};
use super::PolicyTargets;
use crate::dataset::{
    DatasetError, DatasetSpec, DatasetWriter, EncoderInfo, GameRows, Manifest, SplitCounts,
    SplitRule, BUILD_REPORT_FILE, DEFAULT_FOLDS, DEFAULT_SHARD_ROWS,
};
use crate::encode::Encoder;
use crate::game::Game;
use crate::games::GameSupport;
use crate::record::GameRecord;
use crate::util::atomic::{write_atomic_named, TempName};
use crate::util::text::{open_text, skip_bom};

/// Games parsed and replayed together (one parallel step).
const CHUNK_GAMES: usize = 1024;

/// At most this many bad records are listed in the report (all are counted).
const MAX_LISTED_BAD: usize = 100;

/// How to build a dataset.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub filters: Filters,
    pub split: SplitRule,
    /// Cross-validation folds, 1 to 255.
    pub folds: u8,
    pub shard_rows: usize,
    /// Worker threads for parsing, replaying and encoding (`None`: one per core).
    pub threads: Option<usize>,
    /// Replace a dataset already in the output directory (crash-safely).
    pub force: bool,
    /// Stop at the first bad record instead of skipping it.
    pub strict: bool,
    /// The policy target each position gets (none by default).
    pub policy_targets: PolicyTargets,
    /// Free JSON stored in the manifest (command line, ...).
    pub provenance: serde_json::Value,
}

impl BuildOptions {
    /// Defaults for `G`: its default filters, 80/10/10, 5 folds.
    pub fn new<G: GameSupport>() -> Self {
        BuildOptions {
            filters: Filters::default_for::<G>(),
            split: SplitRule::default(),
            folds: DEFAULT_FOLDS,
            shard_rows: DEFAULT_SHARD_ROWS,
            threads: None,
            force: false,
            strict: false,
            policy_targets: PolicyTargets::None,
            provenance: serde_json::Value::Null,
        }
    }
}

/// Games and positions left out, by filter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DroppedByFilter {
    /// Termination not among those that count.
    pub termination: Dropped,
    /// A rating unknown or below `--min-rating`.
    pub min_rating: Dropped,
    /// No winner and not a draw.
    pub no_result: Dropped,
    /// Records that did not parse or replay.
    pub bad_record: Dropped,
    /// Positions of kept games before the last K (`games` counts the games
    /// that lost some).
    pub last_plies: Dropped,
}

/// CPU seconds per stage, summed over threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct StageSeconds {
    /// Reading lines and parsing the JSON records.
    pub parse: f64,
    /// Start positions, parsing and playing moves.
    pub replay: f64,
    /// Position text and encoder.
    pub encode: f64,
    /// Writer: row checks, Arrow conversion, zstd, file writes and fsync.
    pub write: f64,
}

/// What a build read, kept, dropped and wrote, and how fast.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BuildReport {
    pub dir: PathBuf,
    pub game: String,
    pub encoder: EncoderInfo,
    pub record_files: Vec<PathBuf>,
    pub filters: Filters,
    /// Record lines read (games), including bad ones.
    pub games_read: u64,
    /// Positions of the games read (`plies + 1` per parsed game).
    pub positions_read: u64,
    pub dropped: DroppedByFilter,
    pub games_kept: u64,
    /// Rows written.
    pub positions: u64,
    pub rows_per_split: SplitCounts,
    pub games_per_split: SplitCounts,
    pub folds: u8,
    /// What the policy columns hold, and how many rows have a target.
    pub policy_targets: PolicyTargets,
    pub positions_with_policy: u64,
    pub shards: usize,
    pub bytes: u64,
    pub threads: usize,
    pub seconds: f64,
    pub positions_per_second: f64,
    pub cpu_seconds: StageSeconds,
    /// The first bad records (`file:line: game ID: why`); all are counted
    /// in `dropped.bad_record`.
    pub bad_records: Vec<String>,
}

impl fmt::Display for BuildReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.encoder;
        writeln!(
            f,
            "dataset {} ({}, encoder {} v{} {:?} + {} globals)",
            self.dir.display(),
            self.game,
            e.name,
            e.version,
            e.shape,
            e.globals
        )?;
        writeln!(f, "{:<28} {:>10} {:>12}", "", "games", "positions")?;
        let line = |f: &mut fmt::Formatter<'_>, name: &str, g: String, p: u64| {
            writeln!(f, "{name:<28} {g:>10} {p:>12}")
        };
        line(f, "read", self.games_read.to_string(), self.positions_read)?;
        let d = &self.dropped;
        let rating = match self.filters.min_rating {
            Some(r) => format!("dropped: rating < {r}"),
            None => "dropped: rating".into(),
        };
        for (name, count) in [
            ("dropped: termination", &d.termination),
            (&rating, &d.min_rating),
            ("dropped: no result", &d.no_result),
            ("dropped: bad record", &d.bad_record),
        ] {
            line(f, name, count.games.to_string(), count.positions)?;
        }
        let last = match self.filters.last_plies {
            Some(k) => format!("dropped: before last {k}"),
            None => "dropped: before last K".into(),
        };
        line(f, &last, "-".into(), d.last_plies.positions)?;
        line(f, "kept", self.games_kept.to_string(), self.positions)?;
        if self.policy_targets != PolicyTargets::None {
            writeln!(
                f,
                "policy targets: {} ({} positions have one)",
                self.policy_targets, self.positions_with_policy
            )?;
        }
        writeln!(f, "terminations kept: {}", self.filters.terminations)?;
        let (r, g) = (&self.rows_per_split, &self.games_per_split);
        writeln!(
            f,
            "split (train/valid/test): rows {} / {} / {}, games {} / {} / {}; {} folds",
            r.train, r.valid, r.test, g.train, g.valid, g.test, self.folds
        )?;
        writeln!(
            f,
            "wrote {} shard(s), {} bytes; {:.2} s, {:.0} positions/s on {} thread(s)",
            self.shards, self.bytes, self.seconds, self.positions_per_second, self.threads
        )?;
        let c = &self.cpu_seconds;
        write!(
            f,
            "cpu seconds: parse {:.2}, replay {:.2}, encode {:.2}, write (arrow + zstd + io) {:.2}",
            c.parse, c.replay, c.encode, c.write
        )
    }
}

/// What happened to one record line.
enum Processed {
    Kept {
        id: String,
        rows: Box<GameRows>,
        positions: u64,
    },
    Dropped {
        id: String,
        reason: DropReason,
        positions: u64,
    },
    Bad {
        id: Option<String>,
        positions: u64,
        error: PositionsError,
    },
}

impl Processed {
    /// The game id, unless the line did not parse.
    fn id(&self) -> Option<&str> {
        match self {
            Processed::Kept { id, .. } | Processed::Dropped { id, .. } => Some(id),
            Processed::Bad { id, .. } => id.as_deref(),
        }
    }

    /// Positions read from the record, kept or not.
    fn positions(&self) -> u64 {
        match *self {
            Processed::Kept { positions, .. }
            | Processed::Dropped { positions, .. }
            | Processed::Bad { positions, .. } => positions,
        }
    }
}

/// One record line's text and where it is.
struct Line {
    file: usize,
    line: usize,
    text: String,
}

/// Only the `why` of a replay error (the caller names file, line and game).
fn why(e: &PositionsError) -> String {
    match e {
        PositionsError::IllegalMove {
            ply, token, why, ..
        } => format!("ply {ply}: move '{token}' refused: {why}"),
        PositionsError::BadStart { why, .. } => why.clone(),
        other => other.to_string(),
    }
}

struct Ctx<'a, G: Game> {
    files: &'a [PathBuf],
    encoder: &'a dyn Encoder<G>,
    board_size: usize,
    filters: &'a Filters,
    policy_targets: PolicyTargets,
}

fn process<G: GameSupport>(
    ctx: &Ctx<'_, G>,
    line: &Line,
    times: &mut StageTimes,
    parse_ns: &mut u64,
) -> Processed {
    let t = Instant::now();
    let parsed = GameRecord::from_json_line(&line.text);
    *parse_ns += t.elapsed().as_nanos() as u64;
    let bad = |id: Option<String>, positions: u64, why: String| Processed::Bad {
        error: PositionsError::BadRecord {
            path: ctx.files[line.file].clone(),
            line: line.line,
            id: id.clone().unwrap_or_else(|| "?".into()),
            why,
        },
        id,
        positions,
    };
    let rec = match parsed {
        Ok(rec) => rec,
        Err(e) => {
            // The id, when the line is JSON with an id, for the report.
            let id = serde_json::from_str::<serde_json::Value>(&line.text)
                .ok()
                .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_string));
            return bad(id, 0, format!("not a valid record: {e}"));
        }
    };
    let positions = rec.moves.len() as u64 + 1;
    if let Some(reason) = ctx.filters.drop_reason(&rec) {
        return Processed::Dropped {
            id: rec.id,
            reason,
            positions,
        };
    }
    let first = ctx.filters.first_kept_ply(rec.plies);
    match record_rows::<G>(
        &rec,
        ctx.encoder,
        ctx.board_size,
        first,
        ctx.policy_targets,
        times,
    ) {
        Ok(Some(rows)) => Processed::Kept {
            id: rec.id,
            rows: Box::new(rows),
            positions,
        },
        Ok(None) => Processed::Dropped {
            id: rec.id,
            reason: DropReason::NoResult,
            positions,
        },
        Err(e) => bad(Some(rec.id.clone()), positions, why(&e)),
    }
}

/// Running counts of the sequential part.
struct Tally {
    report: BuildReport,
    /// Game id -> `file:line` where it was first seen.
    seen: HashMap<String, (usize, usize)>,
}

impl Tally {
    fn place(&self, files: &[PathBuf], (file, line): (usize, usize)) -> String {
        format!("{}:{line}", files[file].display())
    }

    /// Checks `id` was not seen before.
    fn first_sighting(
        &mut self,
        files: &[PathBuf],
        id: &str,
        at: (usize, usize),
    ) -> Result<(), PositionsError> {
        if let Some(&first) = self.seen.get(id) {
            return Err(PositionsError::DuplicateId {
                id: id.to_string(),
                first: self.place(files, first),
                second: self.place(files, at),
            });
        }
        self.seen.insert(id.to_string(), at);
        Ok(())
    }
}

/// The game name and board size (`None`: the game's standard size) of the
/// first readable record of `files`, for choosing the game and encoder.
/// Lines that are not records are passed over here; the build reports them.
pub fn first_record_info(
    files: &[PathBuf],
) -> Result<Option<(String, Option<usize>)>, PositionsError> {
    #[derive(serde::Deserialize)]
    struct Head {
        game: String,
        #[serde(default)]
        board_size: Option<usize>,
    }
    for path in files {
        let reader = open_text(path).map_err(DatasetError::io(path, "open the record file"))?;
        for line in reader.lines() {
            let line = line.map_err(DatasetError::io(path, "read the record file"))?;
            if let Ok(head) = serde_json::from_str::<Head>(&line) {
                return Ok(Some((head.game, head.board_size)));
            }
        }
    }
    Ok(None)
}

/// Reads every record of `records` (JSONL files, in order), keeps the games
/// and positions that pass `options.filters`, encodes them with `encoder`
/// (made for boards of `board_size`) and writes the dataset to `out`.
///
/// Bad records are skipped and counted (fatal with `options.strict`);
/// duplicate game ids are an error naming both places. An existing dataset
/// in `out` is replaced only with `options.force`, and stays readable until
/// the new one is complete. Also writes `out/build-report.json`.
pub fn build_dataset<G: GameSupport>(
    records: &[PathBuf],
    out: &Path,
    encoder: Arc<dyn Encoder<G>>,
    board_size: usize,
    options: &BuildOptions,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<BuildReport, PositionsError> {
    let start = Instant::now();
    if records.is_empty() {
        return Err(PositionsError::InvalidOption {
            option: "--records",
            expected: "at least one JSONL record file".into(),
            found: "none".into(),
        });
    }
    options.policy_targets.check::<G>()?;
    if let Some(0) = options.filters.last_plies {
        return Err(PositionsError::InvalidOption {
            option: "--last-plies",
            expected: "at least 1".into(),
            found: "0".into(),
        });
    }
    let threads = options
        .threads
        .unwrap_or_else(rayon::current_num_threads)
        .max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| PositionsError::InvalidOption {
            option: "--threads",
            expected: "a number of threads the system can start".into(),
            found: format!("{threads} ({e})"),
        })?;
    let es = encoder.spec();
    let info = EncoderInfo {
        name: es.name,
        version: es.version,
        shape: es.shape,
        globals: es.globals,
    };
    let spec = DatasetSpec {
        game: G::NAME.to_string(),
        encoder: info.clone(),
        split: options.split,
        shard_rows: options.shard_rows,
        folds: options.folds,
    };
    let mut total_bytes = 0u64;
    for path in records {
        let meta =
            std::fs::metadata(path).map_err(DatasetError::io(path, "open the record file"))?;
        total_bytes += meta.len();
    }
    let writer = if options.force {
        DatasetWriter::create_overwrite(out, spec)?
    } else {
        DatasetWriter::create(out, spec).map_err(|e| match e {
            DatasetError::AlreadyExists { path, found } => PositionsError::Exists { path, found },
            other => other.into(),
        })?
    };
    if let Some(pb) = progress {
        pb.set_length(total_bytes);
    }

    let mut tally = Tally {
        report: BuildReport {
            dir: out.to_path_buf(),
            game: G::NAME.to_string(),
            encoder: info,
            record_files: records.to_vec(),
            filters: options.filters.clone(),
            games_read: 0,
            positions_read: 0,
            dropped: DroppedByFilter::default(),
            games_kept: 0,
            positions: 0,
            rows_per_split: SplitCounts::default(),
            games_per_split: SplitCounts::default(),
            folds: options.folds,
            policy_targets: options.policy_targets,
            positions_with_policy: 0,
            shards: 0,
            bytes: 0,
            threads,
            seconds: 0.0,
            positions_per_second: 0.0,
            cpu_seconds: StageSeconds::default(),
            bad_records: Vec::new(),
        },
        seen: HashMap::new(),
    };
    let ctx = Ctx {
        files: records,
        encoder: encoder.as_ref(),
        board_size,
        filters: &options.filters,
        policy_targets: options.policy_targets,
    };
    let mut times = StageTimes::default();
    let mut parse_ns = 0u64;
    let mut read_bytes = 0u64;

    let (writer, write_ns) = std::thread::scope(|s| -> Result<_, PositionsError> {
        let (tx, rx) = sync_channel::<Vec<GameRows>>(2);
        let mut writer = writer;
        let handle = s.spawn(move || -> (DatasetWriter, u64, Result<(), DatasetError>) {
            let mut ns = 0u64;
            for chunk in rx {
                let t = Instant::now();
                for game in &chunk {
                    if let Err(e) = writer.push_game(game) {
                        return (writer, ns, Err(e));
                    }
                }
                ns += t.elapsed().as_nanos() as u64;
            }
            (writer, ns, Ok(()))
        });
        let result = (|| -> Result<(), PositionsError> {
            for (fi, path) in records.iter().enumerate() {
                let file =
                    File::open(path).map_err(DatasetError::io(path, "open the record file"))?;
                let mut reader = BufReader::with_capacity(1 << 20, file);
                skip_bom(&mut reader).map_err(DatasetError::io(path, "read the record file"))?;
                let mut line_no = 0usize;
                loop {
                    let t = Instant::now();
                    let mut lines = Vec::with_capacity(CHUNK_GAMES);
                    while lines.len() < CHUNK_GAMES {
                        let mut text = String::new();
                        let n = reader
                            .read_line(&mut text)
                            .map_err(DatasetError::io(path, "read the record file"))?;
                        if n == 0 {
                            break;
                        }
                        read_bytes += n as u64;
                        line_no += 1;
                        if text.trim().is_empty() {
                            continue;
                        }
                        lines.push(Line {
                            file: fi,
                            line: line_no,
                            text,
                        });
                    }
                    parse_ns += t.elapsed().as_nanos() as u64;
                    if lines.is_empty() {
                        break;
                    }
                    let results: Vec<(Processed, StageTimes, u64)> = pool.install(|| {
                        lines
                            .par_iter()
                            .map(|line| {
                                let mut t = StageTimes::default();
                                let mut p = 0u64;
                                let r = process::<G>(&ctx, line, &mut t, &mut p);
                                (r, t, p)
                            })
                            .collect()
                    });
                    let mut chunk = Vec::with_capacity(results.len());
                    for ((processed, t, p), line) in results.into_iter().zip(&lines) {
                        times.add(&t);
                        parse_ns += p;
                        let at = (line.file, line.line);
                        tally.report.games_read += 1;
                        // With --strict a bad record stops the build before
                        // its id is checked.
                        let processed = match processed {
                            Processed::Bad { error, .. } if options.strict => return Err(error),
                            p => p,
                        };
                        if let Some(id) = processed.id() {
                            tally.first_sighting(records, id, at)?;
                        }
                        let r = &mut tally.report;
                        r.positions_read += processed.positions();
                        match processed {
                            Processed::Kept {
                                rows, positions, ..
                            } => {
                                r.games_kept += 1;
                                let cut = positions - rows.len() as u64;
                                if cut > 0 {
                                    r.dropped.last_plies.add(cut);
                                }
                                r.positions += rows.len() as u64;
                                r.positions_with_policy +=
                                    rows.policies.iter().filter(|p| p.is_some()).count() as u64;
                                chunk.push(*rows);
                            }
                            Processed::Dropped {
                                reason, positions, ..
                            } => {
                                let d = &mut r.dropped;
                                match reason {
                                    DropReason::Termination => d.termination.add(positions),
                                    DropReason::Rating => d.min_rating.add(positions),
                                    DropReason::NoResult => d.no_result.add(positions),
                                }
                            }
                            Processed::Bad {
                                positions, error, ..
                            } => {
                                r.dropped.bad_record.add(positions);
                                tracing::warn!("skipped a bad record: {error}");
                                if let Some(pb) = progress {
                                    pb.suspend(|| eprintln!("warning: skipped {error}"));
                                }
                                if r.bad_records.len() < MAX_LISTED_BAD {
                                    r.bad_records.push(error.to_string());
                                }
                            }
                        }
                    }
                    if tx.send(chunk).is_err() {
                        // The writer stopped; its error is reported below.
                        return Ok(());
                    }
                    if let Some(pb) = progress {
                        pb.set_position(read_bytes);
                        pb.set_message(format!("{} positions", tally.report.positions));
                    }
                }
            }
            Ok(())
        })();
        drop(tx);
        let (writer, ns, written) = handle
            .join()
            .map_err(|_| PositionsError::Game("the dataset writer thread panicked".into()))?;
        // The first error wins; what was written so far is removed, so the
        // directory is as before (an old dataset stays as it was).
        match result.and(written.map_err(PositionsError::from)) {
            Ok(()) => Ok((writer, ns)),
            Err(e) => {
                if let Err(cleanup) = writer.abandon() {
                    tracing::warn!("could not remove the unfinished dataset: {cleanup}");
                }
                Err(e)
            }
        }
    })?;

    let manifest: Manifest = writer.finish(options.provenance.clone())?;
    let mut report = tally.report;
    report.rows_per_split = manifest.totals.rows_per_split;
    report.games_per_split = manifest.totals.games_per_split;
    report.shards = manifest.shards.len();
    report.bytes = manifest.shards.iter().map(|s| s.bytes).sum();
    report.seconds = start.elapsed().as_secs_f64();
    report.positions_per_second = report.positions as f64 / report.seconds.max(1e-9);
    report.cpu_seconds = StageSeconds {
        parse: parse_ns as f64 * 1e-9,
        replay: times.replay_ns as f64 * 1e-9,
        encode: times.encode_ns as f64 * 1e-9,
        write: write_ns as f64 * 1e-9,
    };
    let json = serde_json::to_string_pretty(&report).unwrap_or_default() + "\n";
    let path = out.join(BUILD_REPORT_FILE);
    write_atomic_named(&path, TempName::Fixed, json.as_bytes())
        .map_err(|e| DatasetError::io(&path, "write the build report")(e.source))?;
    Ok(report)
}
