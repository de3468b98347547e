//! `plies match` and `plies play`: two players, any game, any board size.

use super::progress;
use super::shared_args::{EvalDeviceArgs, GameStartArgs};
use clap::Args;
use plies::arena::{
    build_players, play_game_from, play_match_journaled, result_text, MatchJournal, StartConfig,
};

use plies::games::{GameKind, GameSupport};
use plies::search::Player;
use plies::util::seeded_rng;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

/// The two sides of a game and where it is played: what `plies match` and
/// `plies play` share.
#[derive(Args)]
pub struct Pairing {
    #[arg(long)]
    game: GameKind,
    /// Board side length (Amazons, Gomoku, Atari-Go); default the game's standard.
    #[arg(long)]
    size: Option<usize>,
    /// Player A (moves first in the even games): random, naive, expert,
    /// alphabeta:depth=D[,eval=E], greedy[:eval=E], greedy:CHECKPOINT,
    /// greedy+:CHECKPOINT, mcts:sims=N[,threads=T,eval=E,...],
    /// spiel-mcts:sims=N, random-steps[:end=P] (Arimaa); E: random, a hand
    /// evaluator, ckpt:PATH or ckpt:hf:ORG/NAME[@REV] (a shared checkpoint).
    #[arg(long)]
    a: String,
    /// Player B, same specs.
    #[arg(long)]
    b: String,
    #[command(flatten)]
    eval: EvalDeviceArgs,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    start: GameStartArgs,
}

#[derive(Args)]
pub struct MatchArgs {
    #[command(flatten)]
    pairing: Pairing,
    #[arg(long, default_value_t = 1000)]
    games: usize,
    /// Print the result as one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    #[arg(long)]
    quiet: bool,
    /// Record every finished game in this folder (games.jsonl, and
    /// result.json at the end): a rerun with the same settings plays only
    /// the missing games, so a long match survives an interruption; more
    /// --games extend a finished one.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

/// What a journaled match's games depend on: a rerun on the same folder
/// must give the same (all but `games`, which may grow).
#[derive(serde::Serialize)]
struct MatchSettings<'a> {
    game: &'a str,
    board_size: usize,
    a: &'a str,
    b: &'a str,
    seed: u64,
    openings: &'a str,
    max_plies: usize,
    random_opening: usize,
    device: &'a str,
    precision: String,
    games: usize,
}

#[derive(Args)]
pub struct PlayArgs {
    #[command(flatten)]
    pairing: Pairing,
}

/// Player A, then player B.
type Players<G> = Vec<Arc<dyn Player<G>>>;

/// The start of the games and both players of a pairing; errors name the
/// option at fault (`--size`, `--setups`, `--a`, `--b`).
fn start_and_players<G: GameSupport>(p: &Pairing) -> anyhow::Result<(StartConfig, Players<G>)> {
    let start = p.start.start::<G>(p.size)?;
    let specs = [p.a.clone(), p.b.clone()];
    let ctx = p.eval.player_context(start.size)?;
    let players = build_players::<G>(&specs, &ctx, |i| ["--a", "--b"][i].to_string())?;
    Ok((start, players))
}

pub fn run_match(a: MatchArgs) -> anyhow::Result<ExitCode> {
    plies::with_game!(a.pairing.game, G => match_game::<G>(a))
}

fn match_game<G: GameSupport>(a: MatchArgs) -> anyhow::Result<ExitCode> {
    let p = &a.pairing;
    let (start, players) = start_and_players::<G>(p)?;
    let bar = progress(a.games as u64, "games", a.quiet || a.json);
    let t0 = Instant::now();
    // Games a journal already held: not played (nor timed) by this run.
    let mut resumed = 0;
    let journal = match &a.out {
        None => None,
        Some(out) => {
            let settings = MatchSettings {
                game: G::NAME,
                board_size: start.size,
                a: &p.a,
                b: &p.b,
                seed: p.seed,
                openings: &start.openings_name,
                max_plies: p.start.max_plies,
                random_opening: p.start.random_opening,
                device: &p.eval.device,
                precision: format!("{:?}", p.eval.precision),
                games: a.games,
            };
            let journal = MatchJournal::open(out, &settings)?;
            resumed = journal.done().range(..a.games).count();
            Some(journal)
        }
    };
    let r = play_match_journaled::<G>(
        players[0].as_ref(),
        players[1].as_ref(),
        &start.starter::<G>(),
        a.games,
        p.seed,
        p.start.ply_limit(),
        Some(&bar),
        journal.as_ref(),
    )?;
    let seconds = t0.elapsed().as_secs_f64();
    bar.finish_and_clear();
    if a.json {
        let mut v = serde_json::to_value(&r)?;
        if let Some(obj) = v.as_object_mut() {
            obj.insert("game".into(), G::NAME.into());
            obj.insert("board_size".into(), start.size.into());
            obj.insert("openings".into(), start.openings_name.clone().into());
        }
        println!("{}", serde_json::to_string(&v)?);
    } else {
        println!(
            "{} {}, openings: {}",
            G::NAME,
            G::board_label(start.size),
            start.openings_name
        );
        println!("{r}");
        let played = a.games - resumed;
        println!(
            "{played} games in {seconds:.2} s ({:.1} games/s)",
            played as f64 / seconds.max(1e-9)
        );
        if let Some(out) = &a.out {
            let kept = if resumed > 0 {
                format!(" ({resumed} of them from an earlier run)")
            } else {
                String::new()
            };
            println!(
                "{} games recorded in {}{kept}; result in {}",
                a.games,
                out.join("games.jsonl").display(),
                out.join("result.json").display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run_play(a: PlayArgs) -> anyhow::Result<ExitCode> {
    plies::with_game!(a.pairing.game, G => play_one::<G>(a))
}

fn play_one<G: GameSupport>(a: PlayArgs) -> anyhow::Result<ExitCode> {
    let p = &a.pairing;
    let (start, players) = start_and_players::<G>(p)?;
    let mut rng = seeded_rng(p.seed, 0);
    let first = start
        .start(&mut rng)
        .map_err(|why| anyhow::anyhow!("no start position: {why}"))?;
    let game = play_game_from(
        first,
        players[0].as_ref(),
        players[1].as_ref(),
        0,
        &mut rng,
        p.start.ply_limit(),
    )?;
    let mut g = game.start.clone();
    let [x, o] = G::SIDE_NAMES;
    println!(
        "{x} = {} (A), {o} = {} (B)\n",
        players[0].name(),
        players[1].name()
    );
    println!("{}", g.render());
    for (i, m) in game.moves.iter().enumerate() {
        let who = if i % 2 == 0 { x } else { o };
        println!("{}. {who} plays {}", i + 1, g.move_to_string(*m));
        g.play(*m);
        println!("{}", g.render());
    }
    match game.outcome {
        Some(outcome) => println!("result: {outcome:?} ({})", result_text(game.outcome)),
        None => println!("result: unfinished after {} moves", game.moves.len()),
    }
    Ok(ExitCode::SUCCESS)
}
