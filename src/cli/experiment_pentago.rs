//! `plies experiment pentago`.

use super::shared_args::JobArgs;
use clap::Args;
use plies::experiment::pentago::{run as run_pentago, summary_table, PentagoExperimentConfig};
use std::path::PathBuf;
use std::process::ExitCode;

/// The defaults run in a few minutes on 2 cores.
#[derive(Args)]
pub struct PentagoArgs {
    /// Output directory (resumed when it holds an earlier run's files).
    #[arg(long, default_value = "runs/pentago")]
    out: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Games of each match in the table.
    #[arg(long, default_value_t = 500)]
    games: usize,
    /// Random plies before the games against the greedy player (6: each
    /// side's first three moves).
    #[arg(long, default_value_t = 6)]
    random_opening: usize,
    /// MDP training games (the paper's best: 2,000).
    #[arg(long, default_value_t = 2000)]
    mdp_games: usize,
    /// MDP buckets (the paper's best: 1,500).
    #[arg(long, default_value_t = 1500)]
    buckets: usize,
    /// Measure the MDP learner every this many training games (0: at the end only).
    #[arg(long, default_value_t = 250)]
    curve_every: usize,
    #[arg(long, default_value_t = 200)]
    curve_games: usize,
    /// Iterations of the paper's perturbation tuner.
    #[arg(long, default_value_t = 1000)]
    perturb_iterations: usize,
    /// Iterations of SPSA.
    #[arg(long, default_value_t = 600)]
    spsa_iterations: usize,
    #[arg(long, default_value_t = 2)]
    alphabeta_depth: u32,
    #[arg(long, default_value_t = 1000)]
    mcts_sims: u64,
    #[command(flatten)]
    job: JobArgs,
}

pub fn run(a: PentagoArgs) -> anyhow::Result<ExitCode> {
    let mut cfg = PentagoExperimentConfig::new(a.out.clone());
    cfg.seed = a.seed;
    cfg.games = a.games;
    cfg.random_opening = a.random_opening;
    cfg.mdp.games = a.mdp_games;
    cfg.mdp.settings.buckets = a.buckets;
    cfg.mdp.seed = a.seed;
    cfg.curve_every = a.curve_every;
    cfg.curve_games = a.curve_games;
    cfg.perturb.iterations = a.perturb_iterations;
    cfg.perturb.seed = a.seed;
    cfg.spsa.iterations = a.spsa_iterations;
    cfg.spsa.seed = a.seed;
    cfg.alphabeta_depth = a.alphabeta_depth;
    cfg.mcts_sims = a.mcts_sims;
    let quiet = a.job.silent();
    let say = super::say(quiet);
    let go = || run_pentago(&cfg, &say).map_err(Box::new);
    let report = super::threads::on_threads(a.job.threads, go)?;
    if a.job.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", summary_table(&report));
        println!(
            "wrote {0}/results.txt, results.csv, results.json, mdp_curve.csv, mdp_curve.png, mdp_curve.svg ({1:.0} s)",
            cfg.out.display(),
            report.seconds
        );
    }
    Ok(ExitCode::SUCCESS)
}
