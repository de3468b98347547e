//! `plies train mdp`: the bucketed MDP learner by self-play.

use super::progress;
use clap::Args;
use plies::games::{GameKind, GameSupport};
use plies::search::mdp::MdpSettings;
use plies::train::mdp::{train_mdp, MdpTrainConfig};
use std::path::PathBuf;
use std::process::ExitCode;

/// The paper's best settings are the defaults.
#[derive(Args)]
pub struct MdpArgs {
    #[arg(long, default_value = "pentago")]
    game: GameKind,
    /// The model file (resumed when it exists).
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 1500)]
    buckets: usize,
    /// Self-play games in all.
    #[arg(long, default_value_t = 2000)]
    games: usize,
    #[arg(long, default_value_t = 0.9)]
    gamma: f64,
    /// Value iteration stops when no value moves this much.
    #[arg(long, default_value_t = 0.001)]
    tolerance: f64,
    /// The chance of a random move in training.
    #[arg(long, default_value_t = 0.2)]
    epsilon: f64,
    /// The reward of a win (a loss: its negation).
    #[arg(long, default_value_t = 10.0)]
    reward: f64,
    /// Transitions of the uniform prior per bucket.
    #[arg(long, default_value_t = 1.0)]
    prior: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Save the model every this many games.
    #[arg(long, default_value_t = 100)]
    save_every: usize,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: MdpArgs) -> anyhow::Result<ExitCode> {
    plies::with_game!(a.game, G => run_game::<G>(a))
}

fn run_game<G: GameSupport>(a: MdpArgs) -> anyhow::Result<ExitCode> {
    let cfg = MdpTrainConfig {
        settings: MdpSettings {
            buckets: a.buckets,
            gamma: a.gamma,
            tolerance: a.tolerance,
            reward: a.reward,
            prior: a.prior,
        },
        games: a.games,
        epsilon: a.epsilon,
        seed: a.seed,
        save_every: a.save_every,
    };
    let bar = progress(a.games as u64, "games", a.quiet || a.json);
    let r = train_mdp::<G>(&cfg, &a.out, &|done| bar.set_position(done))?;
    bar.finish_and_clear();
    if a.json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!(
            "{}: {} games learned ({} now): first seat won {}, second {}, {} drawn; {:.1} value-iteration sweeps a game and seat",
            r.model.display(),
            r.games_done,
            r.games_run,
            r.first_wins,
            r.second_wins,
            r.draws,
            r.mean_sweeps
        );
        println!("play it as mdp:{}", r.model.display());
    }
    Ok(ExitCode::SUCCESS)
}
