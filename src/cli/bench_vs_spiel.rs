//! `plies bench vs-spiel`: plies' MCTS against OpenSpiel's MCTS bot (C++,
//! random rollouts, through `scripts/spiel_mcts_bot.py`) at the same
//! number of simulations and at the same time per move: equity, Elo,
//! thinking time and games/s, in one run.
//!
//! Games are played one at a time so each side's time per move is its own.
//! OpenSpiel splits an Amazons move into three decisions (amazon,
//! destination, arrow) and searches each with the given simulations, so at
//! "the same simulations" it runs three times as many per Amazons move as
//! plies does.

use clap::Args;
use plies::arena::{play_match_from, EloEstimate, MatchResult};
use plies::games::{GameKind, GameSupport};
use plies::search::game_player::{player_from_spec_in, PlayerContext};
use plies::search::mcts::{MctsConfig, MctsPlayer};
use plies::search::timed::TimedPlayer;
use plies::search::Player;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

#[derive(Args)]
pub struct VsSpielArgs {
    /// GAME:SIZE pairs of the games OpenSpiel has: amazons, gomoku, pentago, tictactoe, connect-four.
    #[arg(long, value_delimiter = ',', default_value = "amazons:8,gomoku:9")]
    games: Vec<String>,
    /// Simulations per decision of both sides in the first match; OpenSpiel's
    /// time per move at it sets plies' time in the second.
    #[arg(long, default_value_t = 400)]
    sims: u64,
    /// Games per match (colours alternate).
    #[arg(long, default_value_t = 20)]
    matches_games: usize,
    /// Extra plies MCTS options, e.g. `threads=2`.
    #[arg(long, default_value = "")]
    plies_options: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the rows as JSON.
    #[arg(long)]
    json: bool,
    /// Also write the rows as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
    #[arg(long)]
    quiet: bool,
}

#[derive(Serialize)]
struct Row {
    game: String,
    size: usize,
    /// The board as reports name it (`9x9`, `7x6`).
    board: String,
    condition: &'static str,
    plies: String,
    spiel: String,
    games: u64,
    wins: u64,
    draws: u64,
    losses: u64,
    equity: f64,
    elo: Option<EloEstimate>,
    plies_ms_per_move: f64,
    spiel_ms_per_move: f64,
    plies_sims_per_move: f64,
    games_per_second: f64,
}

pub fn bench_vs_spiel(a: VsSpielArgs) -> anyhow::Result<ExitCode> {
    let mut rows = Vec::new();
    for g in &a.games {
        let (name, size) = match g.split_once(':') {
            Some((n, s)) => (
                n,
                s.parse::<usize>()
                    .map_err(|_| anyhow::anyhow!("--games {g}: size '{s}' is not a number"))?,
            ),
            None => (g.as_str(), 0),
        };
        let kind: GameKind = name.parse()?;
        plies::with_game!(kind, G => {
            if G::SPIEL_NAME.is_none() {
                anyhow::bail!(
                    "--games {name}: OpenSpiel does not have it (amazons, gomoku, pentago, tictactoe)"
                );
            }
            rows.extend(one_game::<G>(&a, size)?)
        })
    }
    print_rows(&rows, a.json);
    if let Some(path) = &a.csv {
        std::fs::write(path, csv(&rows))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn one_game<G: GameSupport>(a: &VsSpielArgs, size: usize) -> anyhow::Result<Vec<Row>> {
    let size = if size == 0 { G::DEFAULT_SIZE } else { size };
    G::with_size(size)?;
    let ctx = PlayerContext {
        size,
        ..PlayerContext::default_for::<G>()
    };
    let extra = if a.plies_options.is_empty() {
        String::new()
    } else {
        format!(",{}", a.plies_options)
    };
    let spiel_spec = format!("spiel-mcts:sims={},seed={}", a.sims, a.seed);
    let spiel: Arc<dyn Player<G>> = player_from_spec_in::<G>(&spiel_spec, &ctx)?;
    let spiel = Arc::new(TimedPlayer::new(spiel));
    let same_sims: MctsConfig = format!("sims={}{extra}", a.sims)
        .parse()
        .map_err(|e: plies::search::OptionError| anyhow::anyhow!("--plies-options: {e}"))?;
    let first = play::<G>(a, size, same_sims, &spiel, "same simulations")?;
    let spiel_s = first.spiel_ms_per_move / 1000.0;
    let same_time: MctsConfig = format!("time={spiel_s:.6}{extra}")
        .parse()
        .map_err(|e: plies::search::OptionError| anyhow::anyhow!("--plies-options: {e}"))?;
    let second = play::<G>(a, size, same_time, &spiel, "same time per move")?;
    let mut rows = vec![first, second];
    if G::SPIEL_ACTIONS > 1 {
        // OpenSpiel searched each of its decisions of a move: give plies
        // as many simulations per move.
        let per_move: MctsConfig = format!("sims={}{extra}", a.sims * G::SPIEL_ACTIONS as u64)
            .parse()
            .map_err(|e: plies::search::OptionError| anyhow::anyhow!("--plies-options: {e}"))?;
        rows.push(play::<G>(a, size, per_move, &spiel, "same sims per move")?);
    }
    Ok(rows)
}

fn play<G: GameSupport>(
    a: &VsSpielArgs,
    size: usize,
    cfg: MctsConfig,
    spiel: &Arc<TimedPlayer<G>>,
    condition: &'static str,
) -> anyhow::Result<Row> {
    let mcts = Arc::new(MctsPlayer::<G>::new(cfg, None)?);
    let timed = TimedPlayer::new(mcts.clone() as Arc<dyn Player<G>>);
    let spiel_before = (spiel.moves(), spiel.seconds_per_move());
    if !a.quiet {
        eprintln!(
            "{} {}: {} vs {} ({condition}, {} games)...",
            G::NAME,
            G::board_label(size),
            timed.name(),
            spiel.name(),
            a.matches_games
        );
    }
    // One game at a time: each side's thinking time is its own.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let t = Instant::now();
    let r: MatchResult = pool.install(|| {
        play_match_from(
            &timed,
            spiel.as_ref(),
            &|_| G::with_size(size).map_err(plies::games::SupportError::from),
            a.matches_games,
            a.seed,
            None,
            None,
        )
    })?;
    let elapsed = t.elapsed().as_secs_f64();
    // The spiel player's time in this match alone.
    let (n0, s0) = spiel_before;
    let n1 = spiel.moves();
    let spiel_ms = if n1 > n0 {
        (spiel.seconds_per_move() * n1 as f64 - s0 * n0 as f64) / (n1 - n0) as f64 * 1000.0
    } else {
        0.0
    };
    Ok(Row {
        game: G::NAME.into(),
        size,
        board: G::board_label(size),
        condition,
        plies: r.a.clone(),
        spiel: r.b.clone(),
        games: r.total.games(),
        wins: r.total.wins,
        draws: r.total.draws,
        losses: r.total.losses,
        equity: r.total.equity(),
        elo: r.elo,
        plies_ms_per_move: timed.seconds_per_move() * 1000.0,
        spiel_ms_per_move: spiel_ms,
        plies_sims_per_move: mcts.simulations_per_search(),
        games_per_second: r.total.games() as f64 / elapsed,
    })
}

fn fmt_elo(e: &Option<EloEstimate>) -> String {
    match e {
        Some(e) => format!("{:+.0} [{:+.0}, {:+.0}]", e.elo, e.lo, e.hi),
        None => "-".into(),
    }
}

fn print_rows(rows: &[Row], json: bool) {
    if json {
        println!("{}", serde_json::to_string_pretty(rows).unwrap_or_default());
        return;
    }
    println!(
        "{:<12} {:<19} {:>5} {:>11} {:>7} {:>24} {:>9} {:>9} {:>10} {:>8}",
        "game",
        "condition",
        "games",
        "plies W/D/L",
        "equity",
        "Elo (plies - spiel) 95%",
        "plies ms",
        "spiel ms",
        "plies sims",
        "games/s"
    );
    for r in rows {
        println!(
            "{:<12} {:<19} {:>5} {:>11} {:>+7.3} {:>24} {:>9.1} {:>9.1} {:>10.0} {:>8.2}",
            format!("{} {}", r.game, r.board),
            r.condition,
            r.games,
            format!("{}/{}/{}", r.wins, r.draws, r.losses),
            r.equity,
            fmt_elo(&r.elo),
            r.plies_ms_per_move,
            r.spiel_ms_per_move,
            r.plies_sims_per_move,
            r.games_per_second
        );
    }
}

fn csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "game,size,condition,plies,spiel,games,wins,draws,losses,equity,elo,elo_lo,elo_hi,plies_ms_per_move,spiel_ms_per_move,plies_sims_per_move,games_per_second\n",
    );
    for r in rows {
        let (e, lo, hi) = r
            .elo
            .map_or((f64::NAN, f64::NAN, f64::NAN), |e| (e.elo, e.lo, e.hi));
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{:.4},{:.1},{:.1},{:.1},{:.2},{:.2},{:.1},{:.3}\n",
            r.game,
            r.size,
            r.condition,
            r.plies,
            r.spiel,
            r.games,
            r.wins,
            r.draws,
            r.losses,
            r.equity,
            e,
            lo,
            hi,
            r.plies_ms_per_move,
            r.spiel_ms_per_move,
            r.plies_sims_per_move,
            r.games_per_second
        ));
    }
    out
}
