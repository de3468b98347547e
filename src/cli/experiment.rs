use clap::{Args, Subcommand};
use plies::experiment::ttt::{run as run_ttt, summary_table, TttExperimentConfig};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum ExperimentCmd {
    /// Tic-tac-toe, Patist & Wiering (2004) / Fugers (2017): TD(lambda)
    /// Elliott MLPs, equity against EXPERT as they learn.
    Ttt(TttArgs),
    /// Pentago, Heon & Oetting (2012): the bucketed MDP learner and tuned
    /// feature players against RANDOM and the greedy feature player, beside
    /// alpha-beta and MCTS on the tuned features.
    Pentago(super::experiment_pentago::PentagoArgs),
    /// Schaul & Schmidhuber (2008): MDRNNs evolved on 5x5 and 7x7 Atari-Go
    /// and Gomoku, measured against random and naive on 5x5 to 19x19.
    Mdrnn(MdrnnArgs),
    /// Amazons, Fugers (2017) section 5: a self-play database, TD(lambda)
    /// networks for UNITS/MOBILITY/BITS x 40/80/160, their test error
    /// beside the hand evaluators', and the equity tables against the good
    /// and the simple player.
    Amazons(Box<super::experiment_amazons::AmazonsArgs>),
}

#[derive(Args)]
pub struct MdrnnArgs {
    /// Games, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "atari-go,gomoku")]
    games: Vec<plies::games::GameKind>,
    /// Training board sizes.
    #[arg(long, value_delimiter = ',', default_value = "5,7")]
    train_sizes: Vec<usize>,
    /// Board sizes every network is measured on.
    #[arg(long, value_delimiter = ',', default_value = "5,7,9,11,13,15,19")]
    eval_sizes: Vec<usize>,
    /// The evolution strategy against naive: snes, one-plus-one or mu-lambda.
    #[arg(long, default_value = "snes")]
    es_strategy: plies::evolve::StrategyKind,
    /// ES generations against naive (0: none); default 1,000.
    #[arg(long)]
    es_generations: Option<u64>,
    /// The board the largest training board's ES network goes on evolving
    /// on (the bootstrap; default 9, none when not larger than that board).
    #[arg(long)]
    bootstrap_size: Option<usize>,
    /// Bootstrap generations (0: none); default 200.
    #[arg(long)]
    bootstrap_generations: Option<u64>,
    /// Coevolution generations (0: none).
    #[arg(long)]
    coevolve_generations: Option<u64>,
    /// Fitness games per evaluation.
    #[arg(long)]
    fitness_games: Option<usize>,
    /// Networks per coevolution population.
    #[arg(long)]
    population: Option<usize>,
    /// Games per measured cell.
    #[arg(long, default_value_t = 200)]
    eval_games: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output directory (default runs/mdrnn); a run there is resumed.
    #[arg(long, default_value = "runs/mdrnn")]
    out: PathBuf,
    #[arg(long)]
    threads: Option<usize>,
    #[arg(long)]
    quiet: bool,
}

fn run_mdrnn(a: MdrnnArgs) -> anyhow::Result<ExitCode> {
    use plies::experiment::mdrnn::{
        cost_table, run, summary_table, transfer_summaries, transfer_table, MdrnnExperimentConfig,
    };
    super::threads::set_global_threads(a.threads)?;
    let mut cfg = MdrnnExperimentConfig::default_budget(a.out);
    cfg.games = a.games;
    cfg.train_sizes = a.train_sizes;
    cfg.eval_sizes = a.eval_sizes;
    cfg.es_strategy = a.es_strategy;
    cfg.es_generations = a.es_generations.unwrap_or(cfg.es_generations);
    cfg.bootstrap_size = a.bootstrap_size.unwrap_or(cfg.bootstrap_size);
    cfg.bootstrap_generations = a.bootstrap_generations.unwrap_or(cfg.bootstrap_generations);
    cfg.coevolve_generations = a.coevolve_generations.unwrap_or(cfg.coevolve_generations);
    cfg.fitness_games = a.fitness_games.unwrap_or(cfg.fitness_games);
    cfg.population = a.population.unwrap_or(cfg.population);
    cfg.eval_games = a.eval_games;
    cfg.seed = a.seed;
    let report = run(&cfg, !a.quiet)?;
    println!("{}", transfer_table(&report.cells));
    println!("{}", summary_table(&transfer_summaries(&report.cells)));
    println!("{}", cost_table(&report.trained));
    println!(
        "wrote {0}/transfer.csv, summary.csv, transfer.json, cost.csv, transfer-*.png ({1:.0} s)",
        cfg.out.display(),
        report.seconds
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct TttArgs {
    /// 1: learn on-line against RANDOM; 2: learn from a database of games a
    /// learning network played against EXPERT.
    #[arg(long)]
    exp: u8,
    /// Hidden layer sizes, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "40,60,80")]
    hidden: Vec<usize>,
    #[arg(long, default_value_t = 10)]
    sims: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Training examples (default 40,000 games for I, 160,000 for II).
    #[arg(long)]
    examples: Option<usize>,
    /// Equity measured every this many examples (default 2,000 / 10,000).
    #[arg(long)]
    eval_every: Option<usize>,
    /// Games against EXPERT per measurement.
    #[arg(long, default_value_t = 1000)]
    eval_games: usize,
    /// Games per database in Experiment II.
    #[arg(long, default_value_t = 40_000)]
    db_games: usize,
    /// Score finished positions by their result instead of by the network.
    #[arg(long)]
    exact_terminal: bool,
    #[arg(long)]
    lr: Option<f32>,
    #[arg(long)]
    lambda: Option<f32>,
    /// Output directory (default runs/ttt-exp<N>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    #[arg(long)]
    quiet: bool,
}

pub fn run(cmd: ExperimentCmd) -> anyhow::Result<ExitCode> {
    let a = match cmd {
        ExperimentCmd::Ttt(a) => a,
        ExperimentCmd::Pentago(a) => return super::experiment_pentago::run(a),
        ExperimentCmd::Mdrnn(a) => return run_mdrnn(a),
        ExperimentCmd::Amazons(a) => return super::experiment_amazons::run(*a),
    };
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("runs/ttt-exp{}", a.exp)));
    let mut cfg = TttExperimentConfig::published(a.exp, out);
    cfg.hidden = a.hidden;
    cfg.sims = a.sims;
    cfg.seed = a.seed;
    cfg.examples = a.examples.unwrap_or(cfg.examples);
    cfg.eval_every = a.eval_every.unwrap_or(cfg.eval_every);
    cfg.eval_games = a.eval_games;
    cfg.db_games = a.db_games;
    cfg.exact_terminal = a.exact_terminal;
    if let Some(lr) = a.lr {
        cfg.td.lr = lr;
    }
    if let Some(l) = a.lambda {
        cfg.td.lambda = l;
    }
    let report = run_ttt(&cfg, !(a.quiet || a.json)).map_err(|e| anyhow::anyhow!("{e}"))?;
    if a.json {
        let summary = serde_json::json!({
            "experiment": a.exp,
            "summary": report.summary,
            "published_best": report.published_best,
            "seconds": report.seconds,
            "outputs": cfg.out,
        });
        println!("{summary}");
    } else {
        println!("{}", summary_table(&report));
        for (who, v) in &report.published_best {
            println!("published best ({who}): {v:+.2}");
        }
        println!(
            "wrote {0}/equity_curve.csv, equity_runs.csv, summary.json, equity.png, equity.svg ({1:.0} s)",
            cfg.out.display(),
            report.seconds
        );
    }
    Ok(ExitCode::SUCCESS)
}
