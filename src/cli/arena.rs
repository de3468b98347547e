//! `plies arena`: a round-robin tournament between any number of players,
//! with a cross table, per-pair results, an Elo rating list, CSV, JSON and
//! a chart of the ratings.

use super::progress;
use super::shared_args::{EvalDeviceArgs, GameStartArgs, JobArgs};
use anyhow::bail;
use clap::Args;
use plies::arena::{
    build_players, round_robin, schedule, write_ratings_png, Anchor, FitOptions, RatingBar,
    RoundRobin, RoundRobinConfig,
};
use plies::games::{GameKind, GameSupport};
use plies::report::{write_atomic, write_json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct ArenaArgs {
    #[arg(long)]
    game: GameKind,
    /// Board side length (Amazons, Gomoku, Atari-Go); default the game's standard.
    #[arg(long)]
    size: Option<usize>,
    /// Two or more players: random, naive, alphabeta:depth=D[,eval=E],
    /// greedy[:eval=E], mcts:sims=N[,threads=T,eval=E,...], spiel-mcts:sims=N,
    /// random-steps[:end=P] (Arimaa); E: random, a hand evaluator or
    /// ckpt:PATH. Tic-tac-toe also expert, greedy:CHECKPOINT, greedy+:CHECKPOINT.
    #[arg(long, num_args = 2.., required = true)]
    players: Vec<String>,
    #[command(flatten)]
    eval: EvalDeviceArgs,
    /// Games between every two players (colours alternate); at most, with
    /// --stop-decided.
    #[arg(long, default_value_t = 100)]
    games_per_pair: usize,
    /// Play each pair in blocks of 10 games and stop it once decided: its
    /// score's 99.9% Wilson interval excludes an even score.
    #[arg(long)]
    stop_decided: bool,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output directory: results.csv, ratings.csv, arena.json, ratings.png
    /// (and games.txt with --save-games).
    #[arg(long)]
    out: PathBuf,
    /// Rating 0: the `first` player of --players, or the `mean`.
    #[arg(long, default_value = "first")]
    anchor: Anchor,
    /// Virtual draws added to every pair in the rating fit (keeps ratings
    /// finite when a player wins every game; 0 for the plain fit).
    #[arg(long, default_value_t = 1.0)]
    prior_draws: f64,
    #[command(flatten)]
    start: GameStartArgs,
    /// Also write every game's moves to OUT/games.txt.
    #[arg(long)]
    save_games: bool,
    #[command(flatten)]
    job: JobArgs,
}

pub fn run(a: ArenaArgs) -> anyhow::Result<ExitCode> {
    plies::with_game!(a.game, G => run_game::<G>(a))
}

fn run_game<G: GameSupport>(a: ArenaArgs) -> anyhow::Result<ExitCode> {
    if !(a.prior_draws >= 0.0 && a.prior_draws.is_finite()) {
        bail!("--prior-draws {} must be 0 or more", a.prior_draws);
    }
    let start = a.start.start::<G>(a.size)?;
    let ctx = a.eval.player_context(start.size)?;
    let players = build_players::<G>(&a.players, &ctx, |i| {
        format!("player {} of --players", i + 1)
    })?;
    let cfg = RoundRobinConfig {
        games_per_pair: a.games_per_pair,
        seed: a.seed,
        max_plies: a.start.ply_limit(),
        fit: FitOptions {
            prior_draws: a.prior_draws,
            anchor: a.anchor,
        },
        keep_games: a.save_games,
        stop_decided: a.stop_decided,
    };
    let total = (schedule(players.len()).len() * a.games_per_pair) as u64;
    let bar = progress(total, "games", a.job.silent());
    let play = || round_robin::<G>(&players, &start, &cfg, Some(&bar));
    let rr = super::threads::on_threads(a.job.threads, play)?;
    bar.finish_and_clear();
    let board = G::board_label(rr.board_size);
    let written = write_outputs(&rr, &board, &a.out)?;
    if a.job.json {
        println!("{}", serde_json::to_string_pretty(&rr)?);
    } else {
        print!("{}", render(&rr, &board));
        println!("wrote {}", written.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the result files into `out`; returns their paths.
fn write_outputs(rr: &RoundRobin, board: &str, out: &Path) -> anyhow::Result<Vec<String>> {
    let mut written = Vec::new();
    let mut note = |p: PathBuf| written.push(p.display().to_string());
    let path = out.join("results.csv");
    rr.results_csv().write_csv(&path)?;
    note(path);
    let path = out.join("ratings.csv");
    rr.ratings_csv().write_csv(&path)?;
    note(path);
    let path = out.join("arena.json");
    write_json(&path, rr)?;
    note(path);
    if !rr.ratings.is_empty() {
        let bars: Vec<RatingBar> = rr
            .ratings
            .iter()
            .map(|r| RatingBar {
                name: r.player.clone(),
                elo: r.elo,
                lo: r.lo,
                hi: r.hi,
            })
            .collect();
        let path = out.join("ratings.png");
        write_ratings_png(&path, &chart_title(rr, board), &bars)?;
        note(path);
    }
    if !rr.game_log.is_empty() {
        let path = out.join("games.txt");
        write_atomic(&path, rr.games_text().as_bytes())?;
        note(path);
    }
    Ok(written)
}

fn anchor_text(rr: &RoundRobin) -> String {
    match rr.fit.anchor {
        Anchor::First => format!("{} = 0", rr.players[0]),
        Anchor::Mean => "mean = 0".into(),
    }
}

/// `100 games per pair`, or `up to 100 games per pair, decided pairs
/// stopped`.
fn games_text(rr: &RoundRobin) -> String {
    if rr.stop_decided {
        format!(
            "up to {} games per pair, decided pairs stopped ({} games)",
            rr.games_per_pair, rr.games
        )
    } else {
        format!("{} games per pair", rr.games_per_pair)
    }
}

/// `board` is the game's name for the board (`7x6`, `9x9`).
fn chart_title(rr: &RoundRobin, board: &str) -> String {
    format!(
        "{} {board}: Elo, {} ({})",
        rr.game,
        games_text(rr),
        anchor_text(rr)
    )
}

/// The tournament for people: cross table, pairs, rating list, speed.
fn render(rr: &RoundRobin, board: &str) -> String {
    let mut out = format!(
        "{} {board} round robin: {} players, {}, seed {}, openings: {}\n\n",
        rr.game,
        rr.players.len(),
        games_text(rr),
        rr.seed,
        rr.openings
    );
    out.push_str(&format!(
        "points of the row player against the column player (of {}):\n{}\n",
        if rr.stop_decided {
            "the games they played".to_string()
        } else {
            rr.games_per_pair.to_string()
        },
        rr.cross_table()
    ));
    out.push_str(&format!("pairs:\n{}\n", rr.pairs_table()));
    match &rr.rating_error {
        None => out.push_str(&format!(
            "ratings (Bradley-Terry fit on all games, {}, {} prior draws per pair, 95% intervals):\n{}\n",
            anchor_text(rr),
            rr.fit.prior_draws,
            rr.ratings_table()
        )),
        Some(e) => out.push_str(&format!("ratings: not fitted: {e}\n\n")),
    }
    if rr.unfinished > 0 {
        out.push_str(&format!(
            "{} games stopped unfinished at {} plies (counted as draws)\n",
            rr.unfinished,
            rr.max_plies.unwrap_or(0)
        ));
    }
    out.push_str(&format!(
        "{} games, {} plies in {:.2} s on {} threads: {:.1} games/s\n",
        rr.games, rr.plies, rr.seconds, rr.threads, rr.games_per_second
    ));
    out
}
