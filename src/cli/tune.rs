//! `plies tune`: weights of a weighted hand evaluator by play.

use super::progress;
use super::shared_args::JobArgs;
use anyhow::Context;
use clap::{Args, ValueEnum};
use plies::games::{GameKind, GameSupport};
use plies::tune::{tune, TuneConfig, TuneMethod, TunePlayer};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum)]
enum Method {
    /// The paper's: current weights against a perturbed copy, the winner's
    /// become current.
    Perturb,
    /// SPSA on the match score.
    Spsa,
}

#[derive(Clone, Copy, ValueEnum)]
enum Player {
    /// One ply deep on the evaluator (the paper's feature player).
    Greedy,
    /// The threat player: wins, blocks and forced wins by fours first, then
    /// the evaluator (Gomoku, Tic-tac-toe).
    Threats,
}

#[derive(Args)]
pub struct TuneArgs {
    #[arg(long, default_value = "pentago")]
    game: GameKind,
    /// The weighted evaluator (default: the game's first).
    #[arg(long)]
    eval: Option<String>,
    #[arg(long, value_enum, default_value = "spsa")]
    method: Method,
    /// The player both weight vectors play in.
    #[arg(long, value_enum, default_value = "greedy")]
    player: Player,
    /// Iterations in all (a resumed run does the rest); default 1,000
    /// (perturb) or 300 (spsa).
    #[arg(long)]
    iterations: Option<usize>,
    /// Games per iteration, even (colours alternate); default 2 (perturb)
    /// or 8 (spsa).
    #[arg(long)]
    games: Option<usize>,
    /// Perturbation size in weight scales.
    #[arg(long, default_value_t = 0.2)]
    sigma: f64,
    /// SPSA's step size (default: a first step of sigma / 2 scales).
    #[arg(long)]
    spsa_a: Option<f64>,
    /// Random plies at the start of every game.
    #[arg(long, default_value_t = 4)]
    random_opening: usize,
    /// Play the starting weights every this many iterations.
    #[arg(long, default_value_t = 50)]
    eval_every: usize,
    #[arg(long, default_value_t = 200)]
    eval_games: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Starting weights file (default: the hand-set weights).
    #[arg(long)]
    start: Option<PathBuf>,
    /// Output directory: weights.json, progress.csv, progress.png|svg,
    /// tune-state.json (resumed when present).
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    job: JobArgs,
}

pub fn run(a: TuneArgs) -> anyhow::Result<ExitCode> {
    plies::with_game!(a.game, G => run_game::<G>(a))
}

fn run_game<G: GameSupport>(a: TuneArgs) -> anyhow::Result<ExitCode> {
    let method = match a.method {
        Method::Perturb => TuneMethod::Perturb,
        Method::Spsa => TuneMethod::Spsa,
    };
    let eval = match &a.eval {
        Some(e) => e.clone(),
        None => G::FEATURE_SETS
            .first()
            .with_context(|| format!("{} has no weighted hand evaluator to tune", G::NAME))?
            .to_string(),
    };
    let defaults = TuneConfig::new(&eval, method);
    let cfg = TuneConfig {
        player: match a.player {
            Player::Greedy => TunePlayer::Greedy,
            Player::Threats => TunePlayer::Threats,
        },
        iterations: a.iterations.unwrap_or(defaults.iterations),
        games: a.games.unwrap_or(defaults.games),
        sigma: a.sigma,
        spsa_a: a.spsa_a,
        random_opening: a.random_opening,
        eval_every: a.eval_every,
        eval_games: a.eval_games,
        seed: a.seed,
        start: a.start.clone(),
        ..defaults
    };
    let bar = progress(cfg.iterations as u64, "iterations", a.job.silent());
    let go = || tune::<G>(&cfg, &a.out, &|k| bar.set_position(k as u64));
    let r = super::threads::on_threads(a.job.threads, go)?;
    bar.finish_and_clear();
    if a.job.json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        if let Some(last) = r.progress.last() {
            println!(
                "{} {} after {} iterations: {:.3} [{:.3}, {:.3}] against the starting weights ({} games)",
                G::NAME,
                cfg.method,
                r.iterations_done,
                last.score_vs_start,
                last.score_lo,
                last.score_hi,
                last.wins + last.draws + last.losses
            );
        }
        println!(
            "wrote {0}/weights.json, progress.csv, progress.png, progress.svg; play it with eval={1}:{0}/weights.json",
            a.out.display(),
            eval
        );
    }
    Ok(ExitCode::SUCCESS)
}
