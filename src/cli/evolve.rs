//! `plies evolve` and `plies coevolve`: networks trained by evolution.

use clap::Args;
use plies::evolve::coevolve::coevolve_table;
use plies::evolve::run::history_table;
use plies::evolve::{run_coevolve, run_evolve, CoevolveConfig, EvolveConfig, StrategyKind};
use plies::games::{GameKind, GameSupport};
use plies::model::{MdrnnConfig, ModelConfig};
use std::path::PathBuf;
use std::process::ExitCode;

/// What both commands share: the game, the board and the network.
#[derive(Args, Clone)]
pub struct NetworkArgs {
    #[arg(long)]
    pub game: GameKind,
    /// Board side of the training games.
    #[arg(long, default_value_t = 5)]
    pub size: usize,
    /// Hidden units per swiping unit of the MDRNN (10: the paper's 140 weights).
    #[arg(long, default_value_t = 10)]
    pub hidden: usize,
    /// Gibbs temperature of the networks' moves (0: greedy, random ties).
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output directory; a run there with the same options is resumed.
    #[arg(long)]
    pub out: PathBuf,
    /// Threads for the games (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    #[arg(long)]
    pub quiet: bool,
}

impl NetworkArgs {
    pub fn model(&self) -> ModelConfig {
        ModelConfig::Mdrnn(MdrnnConfig::stones(self.size, self.hidden))
    }

    pub fn threads(&self) -> anyhow::Result<()> {
        super::threads::set_global_threads(self.threads)
    }
}

#[derive(Args)]
pub struct EvolveArgs {
    #[command(flatten)]
    net: NetworkArgs,
    /// one-plus-one, mu-lambda or snes.
    #[arg(long, default_value = "one-plus-one")]
    strategy: StrategyKind,
    #[arg(long, default_value_t = 200)]
    generations: u64,
    /// Step size at the start.
    #[arg(long, default_value_t = 0.1)]
    sigma: f64,
    /// Parents (mu-lambda).
    #[arg(long, default_value_t = 5)]
    mu: usize,
    /// Children a generation (mu-lambda, snes; default 4 + 3 ln n for snes, 20 for mu-lambda).
    #[arg(long)]
    lambda: Option<usize>,
    /// Games per fitness evaluation, starts alternating.
    #[arg(long, default_value_t = 100)]
    games: usize,
    /// The fixed opponent (a player spec): naive, random, ...
    #[arg(long, default_value = "naive")]
    opponent: String,
    /// More board sizes for the fitness games, besides --size (e.g. 5,9):
    /// the games take turns between the sizes by pairs, both starts on each.
    #[arg(long, value_delimiter = ',')]
    also_sizes: Vec<usize>,
    /// Start from this checkpoint's weights (same model and hidden size,
    /// any board size) instead of random ones: go on from a smaller board.
    #[arg(long)]
    init: Option<PathBuf>,
}

pub fn evolve_config(a: &EvolveArgs) -> EvolveConfig {
    let model = a.net.model();
    let n = model.num_params();
    let lambda = a.lambda.unwrap_or(match a.strategy {
        StrategyKind::Snes => plies::evolve::strategy::default_lambda(n),
        _ => 20,
    });
    EvolveConfig {
        game: with_game_name(a.net.game),
        size: a.net.size,
        also_sizes: a.also_sizes.clone(),
        init: a.init.clone(),
        encoder: "stones-2".into(),
        model,
        strategy: a.strategy,
        sigma: a.sigma,
        mu: a.mu,
        lambda,
        games: a.games,
        opponent: a.opponent.clone(),
        temperature: a.net.temperature,
        seed: a.net.seed,
        generations: a.generations,
        out: a.net.out.clone(),
    }
}

fn evolve_game<G: GameSupport>(cfg: &EvolveConfig, quiet: bool) -> anyhow::Result<ExitCode> {
    let report = run_evolve::<G>(cfg, !quiet)?;
    let history = &report.state.history;
    let tail = &history[history.len().saturating_sub(10)..];
    println!("{}", history_table(tail));
    if let Some(c) = &report.state.champion {
        println!(
            "best fitness {:.4} (generation {}): {}",
            c.fitness,
            c.generation,
            report.best_dir.display()
        );
    }
    println!(
        "final: {} (play it with --a policy:ckpt={})",
        report.final_dir.display(),
        report.final_dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn run_evolve_cmd(a: EvolveArgs) -> anyhow::Result<ExitCode> {
    a.net.threads()?;
    let cfg = evolve_config(&a);
    plies::with_game!(a.net.game, G => evolve_game::<G>(&cfg, a.net.quiet))
}

#[derive(Args)]
pub struct CoevolveArgs {
    #[command(flatten)]
    net: NetworkArgs,
    #[arg(long, default_value_t = 100)]
    generations: u64,
    /// Networks in each of the two populations.
    #[arg(long, default_value_t = 16)]
    population: usize,
    /// Survivors of each population a generation.
    #[arg(long, default_value_t = 4)]
    mu: usize,
    /// Parasites each host meets, picked by shared sampling.
    #[arg(long, default_value_t = 5)]
    sample: usize,
    /// Hall-of-fame members each host meets.
    #[arg(long, default_value_t = 3)]
    hall: usize,
    /// Games per pairing, starts alternating.
    #[arg(long, default_value_t = 2)]
    games: usize,
    #[arg(long, default_value_t = 0.1)]
    sigma: f64,
    /// The fixed opponent each generation's champion is measured against.
    #[arg(long, default_value = "naive")]
    monitor: String,
    #[arg(long, default_value_t = 40)]
    monitor_games: usize,
}

pub fn coevolve_config(a: &CoevolveArgs) -> CoevolveConfig {
    CoevolveConfig {
        game: with_game_name(a.net.game),
        size: a.net.size,
        encoder: "stones-2".into(),
        model: a.net.model(),
        population: a.population,
        mu: a.mu,
        sample: a.sample,
        hall: a.hall,
        games: a.games,
        sigma: a.sigma,
        temperature: a.net.temperature,
        monitor: a.monitor.clone(),
        monitor_games: a.monitor_games,
        seed: a.net.seed,
        generations: a.generations,
        out: a.net.out.clone(),
    }
}

fn coevolve_game<G: GameSupport>(cfg: &CoevolveConfig, quiet: bool) -> anyhow::Result<ExitCode> {
    let report = run_coevolve::<G>(cfg, !quiet)?;
    let history = &report.state.history;
    let tail = &history[history.len().saturating_sub(10)..];
    println!("{}", coevolve_table(tail));
    println!(
        "best: {} final: {}",
        report.best_dir.display(),
        report.final_dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn run_coevolve_cmd(a: CoevolveArgs) -> anyhow::Result<ExitCode> {
    a.net.threads()?;
    let cfg = coevolve_config(&a);
    plies::with_game!(a.net.game, G => coevolve_game::<G>(&cfg, a.net.quiet))
}

/// The game's name as its checkpoints record it.
fn with_game_name(game: GameKind) -> String {
    plies::with_game!(game, G => <G as plies::game::Game>::NAME.to_string())
}
