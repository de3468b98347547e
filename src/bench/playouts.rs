//! Uniformly random games from the start position, one thread, timed.
//! `scripts/bench_playouts.sh` times OpenSpiel on the same games in the
//! same run (`scripts/bench_playouts.py`) and prints the ratio.

use std::fmt;
use std::time::Instant;

use super::{BenchError, Result};
use crate::game::{Game, Outcome, Side};
use crate::games::{GameKind, GameSupport};
use crate::util::{seeded_rng, SeededRng};

pub struct PlayoutOptions {
    /// tictactoe, amazons, pentago, gomoku or atari-go.
    pub game: GameKind,
    /// Board side length (default: the game's standard size).
    pub size: Option<usize>,
    /// Number of random games to play.
    pub games: usize,
    pub seed: u64,
}

/// Totals over a batch of random games.
#[derive(Default)]
pub struct Tally {
    pub moves: u64,
    pub first: u64,
    pub second: u64,
    pub draws: u64,
}

pub struct PlayoutReport {
    pub game: GameKind,
    pub size: usize,
    pub games: usize,
    pub seed: u64,
    pub tally: Tally,
    pub seconds: f64,
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

fn timed<G: Game>(size: Option<usize>, games: usize, seed: u64) -> Result<(usize, Tally, f64)> {
    let start = G::with_size(size.unwrap_or(G::DEFAULT_SIZE))?;
    let mut rng = seeded_rng(seed, 0);
    let t = Instant::now();
    let tally = playouts(&start, games, &mut rng);
    Ok((start.size(), tally, t.elapsed().as_secs_f64()))
}

pub fn run(opts: &PlayoutOptions) -> Result<PlayoutReport> {
    if opts.games == 0 {
        return Err(BenchError::bad_option("--games", "must be at least 1"));
    }
    let (size, tally, seconds) = with_game!(opts.game, G => {
        if G::RANDOM_STEPS {
            return Err(BenchError::Unsupported(format!(
                "bench playouts does not play {} (uniform full moves need the whole move list; see bench movegen)",
                G::NAME
            )));
        }
        timed::<G>(opts.size, opts.games, opts.seed)?
    });
    Ok(PlayoutReport {
        game: opts.game,
        size,
        games: opts.games,
        seed: opts.seed,
        tally,
        seconds: seconds.max(1e-9),
    })
}

impl PlayoutReport {
    pub fn games_per_s(&self) -> f64 {
        self.games as f64 / self.seconds
    }

    pub fn moves_per_s(&self) -> f64 {
        self.tally.moves as f64 / self.seconds
    }

    pub fn mean_length(&self) -> f64 {
        self.tally.moves as f64 / self.games as f64
    }

    pub fn to_json(&self) -> serde_json::Value {
        let t = &self.tally;
        serde_json::json!({
            "engine": "plies", "game": self.game.name(), "size": self.size, "games": self.games,
            "seed": self.seed, "moves": t.moves, "seconds": self.seconds,
            "games_per_s": self.games_per_s(), "moves_per_s": self.moves_per_s(),
            "mean_length": self.mean_length(), "first_wins": t.first,
            "second_wins": t.second, "draws": t.draws,
        })
    }
}

impl fmt::Display for PlayoutReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.tally;
        writeln!(
            f,
            "{} {}: {} uniformly random games, {} moves in {:.3} s (1 thread, seed {})",
            self.game,
            with_game!(self.game, G => G::board_label(self.size)),
            self.games,
            t.moves,
            self.seconds,
            self.seed
        )?;
        writeln!(f, "{:<16} {:>14.1}", "games/s", self.games_per_s())?;
        writeln!(f, "{:<16} {:>14.0}", "moves/s", self.moves_per_s())?;
        writeln!(f, "{:<16} {:>14.2}", "mean length", self.mean_length())?;
        writeln!(
            f,
            "{:<16} {:>14}",
            "results",
            format!("{}/{}/{}", t.first, t.second, t.draws)
        )?;
        writeln!(
            f,
            "(results: first-player wins / second-player wins / draws)"
        )
    }
}

impl super::report::Report for PlayoutReport {
    fn json(&self) -> serde_json::Result<String> {
        Ok(self.to_json().to_string())
    }
}
