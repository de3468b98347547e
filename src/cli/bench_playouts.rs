//! `plies bench playouts`: uniformly random games from the start position,
//! one thread, timed. `scripts/bench_playouts.sh` times OpenSpiel on the same
//! games in the same run (`scripts/bench_playouts.py`) and prints the ratio.

use clap::Args;
use plies::bench::playouts::{self, PlayoutOptions};
use plies::games::GameKind;
use std::process::ExitCode;

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

pub fn run(a: PlayoutsArgs) -> anyhow::Result<ExitCode> {
    let report = playouts::run(&PlayoutOptions {
        game: a.game,
        size: a.size,
        games: a.games,
        seed: a.seed,
    })?;
    super::bench::print_report(&report, a.json)
}
