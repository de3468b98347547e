//! `plies bench vs-spiel`: plies' MCTS against OpenSpiel's MCTS bot at the
//! same number of simulations and at the same time per move, in one run
//! (see [`plies::bench::vs_spiel`]).

use super::bench::RowsOutput;
use clap::Args;
use plies::bench::vs_spiel::{self, VsSpielOptions};
use std::process::ExitCode;

#[derive(Args)]
pub struct VsSpielArgs {
    /// GAME:SIZE pairs of the games OpenSpiel has: amazons, gomoku, pentago, tictactoe, connect-four, and atari-go (defined on its go, searched by its Python bot).
    #[arg(long, value_delimiter = ',', default_value = "amazons:8,gomoku:9")]
    games: Vec<String>,
    /// Simulations per decision of both sides in the first match; OpenSpiel's
    /// time per move at it sets plies' time in the second.
    #[arg(long, default_value_t = 400)]
    sims: u64,
    /// Games per match (colours alternate).
    #[arg(long, default_value_t = 20)]
    matches_games: usize,
    /// Extra plies MCTS options, e.g. `threads=2`, or a network for the
    /// leaves: `eval=ckpt:DIR,reuse=off`.
    #[arg(long, default_value = "")]
    plies_options: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    out: RowsOutput,
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: VsSpielArgs) -> anyhow::Result<ExitCode> {
    let opts = VsSpielOptions {
        games: a
            .games
            .iter()
            .map(|g| g.parse())
            .collect::<Result<_, _>>()?,
        sims: a.sims,
        matches_games: a.matches_games,
        plies_options: a.plies_options,
        seed: a.seed,
    };
    let quiet = a.quiet;
    let report = vs_spiel::run(&opts, &mut |note| {
        if !quiet {
            eprintln!("{note}");
        }
    })?;
    a.out.emit(&report, || report.csv())?;
    Ok(ExitCode::SUCCESS)
}
