//! `plies bench playouts`: uniformly random games from the start position,
//! one thread, timed. `scripts/bench_playouts.sh` times OpenSpiel on the same
//! games in the same run (`scripts/bench_playouts.py`) and prints the ratio.

use clap::Args;
use plies::game::{Game, Outcome, Side};
use plies::games::{GameKind, GameSupport};
use plies::util::{seeded_rng, SeededRng};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct PlayoutsArgs {
    /// tictactoe, amazons, pentago, gomoku or atari-go.
    #[arg(long)]
    game: GameKind,
    /// Board side length (default: the game's standard size).
    #[arg(long)]
    size: Option<usize>,
    /// Number of random games to play.
    #[arg(long, default_value_t = 1000)]
    games: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    json: bool,
}

/// Totals over a batch of random games.
#[derive(Default)]
struct Tally {
    moves: u64,
    first: u64,
    second: u64,
    draws: u64,
}

/// Plays `games` uniformly random games from `start`, each move drawn by
/// [`Game::random_move`] (uniform over the legal moves; games with a faster
/// exact sampler skip building the move list). One scratch `Vec` serves the
/// whole run, so the loop does not allocate per move. The game's own `play`
/// keeps the outcome up to date (incrementally where the engine can), and
/// `random_move` returns `None` exactly when the game is over.
fn playouts<G: Game>(start: &G, games: usize, rng: &mut SeededRng) -> Tally {
    let mut t = Tally::default();
    let mut scratch = Vec::with_capacity(256);
    for _ in 0..games {
        let mut g = start.clone();
        while let Some(mv) = g.random_move(rng, &mut scratch) {
            g.play(mv);
            t.moves += 1;
        }
        // Every engine sets an outcome when no move is left; guard anyway.
        match g.outcome().unwrap_or(Outcome::Draw) {
            Outcome::Win(Side::First) => t.first += 1,
            Outcome::Win(Side::Second) => t.second += 1,
            Outcome::Draw => t.draws += 1,
        }
    }
    t
}

fn timed<G: Game>(
    size: Option<usize>,
    games: usize,
    seed: u64,
) -> anyhow::Result<(usize, Tally, f64)> {
    let start = G::with_size(size.unwrap_or(G::DEFAULT_SIZE))?;
    let mut rng = seeded_rng(seed, 0);
    let t = Instant::now();
    let tally = playouts(&start, games, &mut rng);
    Ok((start.size(), tally, t.elapsed().as_secs_f64()))
}

pub fn bench_playouts(a: PlayoutsArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(a.games > 0, "--games must be at least 1");
    let (size, tally, seconds) = plies::with_game!(a.game, G => {
        if G::RANDOM_STEPS {
            anyhow::bail!(
                "bench playouts does not play {} (uniform full moves need the whole move list; see bench movegen)",
                G::NAME
            );
        }
        timed::<G>(a.size, a.games, a.seed)?
    });
    let seconds = seconds.max(1e-9);
    let games = a.games as f64;
    let (games_per_s, moves_per_s) = (games / seconds, tally.moves as f64 / seconds);
    let mean_length = tally.moves as f64 / games;
    if a.json {
        println!(
            "{}",
            serde_json::json!({
                "engine": "plies", "game": a.game.name(), "size": size, "games": a.games,
                "seed": a.seed, "moves": tally.moves, "seconds": seconds,
                "games_per_s": games_per_s, "moves_per_s": moves_per_s,
                "mean_length": mean_length, "first_wins": tally.first,
                "second_wins": tally.second, "draws": tally.draws,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} {}: {} uniformly random games, {} moves in {seconds:.3} s (1 thread, seed {})",
        a.game,
        plies::with_game!(a.game, G => G::board_label(size)),
        a.games,
        tally.moves,
        a.seed
    );
    println!("{:<16} {:>14.1}", "games/s", games_per_s);
    println!("{:<16} {:>14.0}", "moves/s", moves_per_s);
    println!("{:<16} {:>14.2}", "mean length", mean_length);
    println!(
        "{:<16} {:>14}",
        "results",
        format!("{}/{}/{}", tally.first, tally.second, tally.draws)
    );
    println!("(results: first-player wins / second-player wins / draws)");
    Ok(ExitCode::SUCCESS)
}
