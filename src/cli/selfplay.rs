//! `plies selfplay`: games between two players, seeded, in parallel and
//! resumable, written as JSONL game records in chunk files.

use super::progress;
use anyhow::Context;
use clap::Args;

use plies::games::{GameKind, GameSupport, Openings};
use plies::positions::PolicyTargets;
use plies::report::Table;
use plies::selfplay::chunks::{chunk_path, GAMES_DIR};
use plies::selfplay::run::{
    build_players, execute, prepare, summarise, Matchup, SelfplayConfig, SelfplaySummary, Wdl,
    CONFIG_FILE, DEFAULT_CHUNK_GAMES, FORMAT, SUMMARY_FILE,
};
use plies::selfplay::Shard;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct SelfplayArgs {
    #[arg(long)]
    game: GameKind,
    /// The first player (Arimaa: gold): random, naive,
    /// alphabeta:depth=D[,eval=NAME], greedy[:eval=NAME], random-steps[:end=P] (Arimaa).
    #[arg(long)]
    white: String,
    /// The second player (Arimaa: silver), same specs.
    #[arg(long)]
    black: String,
    /// Swap the colours in odd-numbered games.
    #[arg(long)]
    alternate: bool,
    /// Number of games.
    #[arg(long)]
    games: u64,
    /// Output directory: selfplay.json, games/part-NNNNN.jsonl, selfplay-summary.json.
    #[arg(long)]
    out: PathBuf,
    /// Worker threads (0: all cores). The records do not depend on it.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Chance that a move is replaced by a random one (Arimaa: a random-steps turn).
    #[arg(long, default_value_t = 0.0)]
    epsilon: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Board side length (Amazons, Gomoku, Atari-Go); default the game's standard.
    #[arg(long)]
    size: Option<usize>,
    /// Stop a game after this many moves; it is recorded as unfinished.
    #[arg(long, default_value_t = 1000)]
    max_plies: u32,
    /// Arimaa setups: a JSONL file of imported records (plies import), or
    /// `random`; default: the shipped arimaa.com archives in data/arimaa.
    #[arg(long)]
    setups: Option<String>,
    /// Record ids are PREFIX-INDEX (default: sp<seed>).
    #[arg(long)]
    id_prefix: Option<String>,
    /// Games per chunk file (the unit of resumption).
    #[arg(long, default_value_t = DEFAULT_CHUNK_GAMES)]
    chunk_games: u64,
    /// Play only shard I of N (0-based): the chunks c with c mod N = I, so
    /// N machines given 0/N .. N-1/N write between them exactly the chunk
    /// files of one unsharded run (docs/scale-out.md).
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// Start over in a directory holding another run.
    #[arg(long)]
    force: bool,
    /// Also encode the records into a dataset with this encoder (e.g.
    /// arimaa-6x8x8), in --dataset-out; rebuilt from all records on a resume.
    #[arg(long, value_name = "ENCODER")]
    dataset: Option<String>,
    /// Where --dataset writes (default: OUT/dataset).
    #[arg(long, requires = "dataset")]
    dataset_out: Option<PathBuf>,
    /// With --dataset: keep only the K positions nearest each game's end.
    #[arg(long, requires = "dataset")]
    last_plies: Option<u32>,
    /// With --dataset: policy targets, `none` or `played` (the players'
    /// chosen moves: alpha-beta's best move; `--epsilon` moves get none).
    #[arg(long, requires = "dataset", default_value = "none")]
    policy_targets: PolicyTargets,
    /// Print the summary as JSON instead of a table (with --dataset:
    /// `{"selfplay": ..., "dataset": ...}`).
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: SelfplayArgs) -> anyhow::Result<ExitCode> {
    plies::with_game!(a.game, G => run_game::<G>(a))
}

fn run_game<G: GameSupport>(a: SelfplayArgs) -> anyhow::Result<ExitCode> {
    let size = a.size.unwrap_or(G::DEFAULT_SIZE);
    G::with_size(size).with_context(|| format!("--size {size}"))?;
    // Refused before any game is played, not after.
    a.policy_targets.check::<G>()?;
    let players = build_players::<G>(&a.white, &a.black)?;
    let choice = G::openings(a.setups.as_deref())?;
    // The configuration names the setups of games that have them.
    let setups = (a.setups.is_some() || !matches!(choice.openings, Openings::Standard))
        .then(|| choice.name.clone());
    let (openings, setups_sha256) = (choice.openings, choice.file_sha256);
    let cfg = SelfplayConfig {
        format: FORMAT,
        matchup: Matchup {
            game: G::NAME.to_string(),
            board_size: size,
            white: players.white.name(),
            black: players.black.name(),
            alternate: a.alternate,
        },
        games: a.games,
        seed: a.seed,
        epsilon: a.epsilon,
        max_plies: a.max_plies,
        setups,
        setups_sha256,
        id_prefix: a
            .id_prefix
            .clone()
            .unwrap_or_else(|| SelfplayConfig::default_id_prefix(a.seed)),
        chunk_games: a.chunk_games,
        shard: a.shard,
    };
    // One writer per output directory, held to the end of the run.
    let _run_dir = plies::util::run_dir::RunDir::claim(&a.out)?;
    let plan = prepare(&a.out, &cfg, a.force)?;
    let threads = if a.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        a.threads
    };
    if plan.chunks_done > 0 && !a.quiet {
        eprintln!(
            "resuming {}: {} of {} games already played",
            a.out.display(),
            plan.games_done,
            cfg.own_games()
        );
    }
    let pb = progress(cfg.own_games(), "selfplay", a.quiet);
    pb.set_position(plan.games_done);
    let played = execute::<G>(&plan, &cfg, &openings, threads, &|_| pb.inc(1))?;
    pb.finish_and_clear();
    let summary = summarise(&a.out, &cfg, played, threads, plan.chunks_done)?;
    let dataset = match &a.dataset {
        Some(encoder) => {
            let out = a
                .dataset_out
                .clone()
                .unwrap_or_else(|| a.out.join("dataset"));
            let threads = (a.threads > 0).then_some(a.threads);
            let records = chunk_files(&a.out, &cfg);
            Some(super::dataset::build_from_selfplay(
                records,
                out,
                encoder.clone(),
                a.last_plies,
                a.policy_targets,
                threads,
                a.quiet,
            )?)
        }
        None => None,
    };
    if a.json {
        let json = match &dataset {
            Some(report) => serde_json::json!({ "selfplay": summary, "dataset": report }),
            None => serde_json::to_value(&summary)?,
        };
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", render(&summary, G::SIDE_NAMES));
    println!(
        "\nwrote {}/{GAMES_DIR}/part-*.jsonl, {CONFIG_FILE} and {SUMMARY_FILE}",
        a.out.display()
    );
    if let Some(report) = dataset {
        println!("\n{report}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The run's record files (its shard's, with --shard), in game order.
fn chunk_files(out: &std::path::Path, cfg: &SelfplayConfig) -> Vec<PathBuf> {
    let dir = out.join(GAMES_DIR);
    cfg.chunks().map(|c| chunk_path(&dir, c)).collect()
}

fn wdl_row(name: &str, player: &str, r: &Wdl) -> Vec<String> {
    vec![
        name.to_string(),
        player.to_string(),
        r.wins.to_string(),
        r.draws.to_string(),
        r.losses.to_string(),
        r.unfinished.to_string(),
    ]
}

/// The summary for people: results by colour (and by player when the
/// colours alternate), then lengths and speed.
fn render(s: &SelfplaySummary, [first, second]: [&str; 2]) -> String {
    let mut t = Table::with_headers(["", "player", "wins", "draws", "losses", "unfinished"]);
    let m = &s.matchup;
    let (p1, p2) = if m.alternate {
        ("(alternating)", "(alternating)")
    } else {
        (m.white.as_str(), m.black.as_str())
    };
    t.push_row(wdl_row(first, p1, &s.first));
    t.push_row(wdl_row(second, p2, &s.second));
    if m.alternate {
        t.push_row(wdl_row("--white", &m.white, &s.white_player));
        t.push_row(wdl_row("--black", &m.black, &s.black_player));
    }
    let terms: Vec<String> = s
        .terminations
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let mut out = format!(
        "{}: {} games, average {:.1} plies ({} positions); {}\n\n{t}\n",
        m.game,
        s.games,
        s.average_plies,
        s.plies,
        terms.join(", ")
    );
    out.push_str(&format!(
        "this run: {} games in {} chunks ({} chunks resumed), {:.1} s on {} threads: {:.1} games/s, {:.0} positions/s\n",
        s.played.games,
        s.played.chunks,
        s.chunks_resumed,
        s.played.seconds,
        s.threads,
        s.games_per_second,
        s.positions_per_second
    ));
    out
}
