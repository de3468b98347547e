//! `plies experiment amazons`.

use super::shared_args::JobArgs;
use clap::Args;
use plies::experiment::amazons::{
    equity_table, error_table, run as run_amazons, AmazonsExperimentConfig,
};
use std::path::PathBuf;
use std::process::ExitCode;

/// The default budget (docs/amazons.md states what is known of its time);
/// `--quick` runs every stage on a small budget. Other flags override either.
#[derive(Args)]
pub struct AmazonsArgs {
    /// Output directory (resumed when it holds an earlier run's files).
    #[arg(long, default_value = "runs/amazons")]
    out: PathBuf,
    /// The seed of every game and network. It defines the database, so a
    /// folder keeps the one it was started with.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Board side (the thesis: 10).
    #[arg(long)]
    size: Option<usize>,
    /// The small budget: 96 database games, 1 run of 1,000 TD games per
    /// network, 1 epoch per value network, 10 games per equity cell,
    /// alpha-beta depth 1, MCTS 50 simulations (5-6 minutes on 2 cores).
    #[arg(long)]
    quick: bool,
    /// Games played for the database.
    #[arg(long)]
    db_games: Option<usize>,
    /// Players of the database games (drawn per side and game), `;`-separated specs.
    #[arg(long, value_delimiter = ';')]
    db_players: Option<Vec<String>>,
    /// Games still running after this many plies are adjudicated.
    #[arg(long)]
    db_max_plies: Option<usize>,
    /// Database games per chunk file, the unit of resumption (default 16).
    #[arg(long)]
    db_chunk: Option<usize>,
    /// The good player: the reference of table 4, and the loser's side
    /// when adjudicating (default alphabeta:depth=2,eval=lieberum).
    #[arg(long)]
    good: Option<String>,
    /// The simple player: the reference of table 5, and the leader's side
    /// when adjudicating (default greedy:eval=mindist).
    #[arg(long)]
    simple: Option<String>,
    /// Hidden sizes of the networks.
    #[arg(long, value_delimiter = ',')]
    hidden: Option<Vec<usize>>,
    /// Encoders of the networks.
    #[arg(long, value_delimiter = ',')]
    encoders: Option<Vec<String>>,
    /// TD(lambda) runs per configuration (the thesis: 10).
    #[arg(long)]
    runs: Option<usize>,
    /// TD(lambda) games per run (the thesis: 200,000).
    #[arg(long)]
    examples: Option<usize>,
    /// Games per equity cell.
    #[arg(long)]
    equity_games: Option<usize>,
    /// The alpha-beta search of the tables (`,eval=E` is appended).
    #[arg(long)]
    alphabeta: Option<String>,
    /// The MCTS search of the tables (`,eval=E` is appended).
    #[arg(long)]
    mcts: Option<String>,
    /// The searches of the equity tables played: no-lookahead, alpha-beta,
    /// mcts (default all).
    #[arg(long, value_delimiter = ',')]
    searches: Option<Vec<String>>,
    /// Beyond the thesis: value networks fitted on the database in
    /// `amazons-territory`, augmented: `plies train` presets or `elliott-H`
    /// (the thesis' network by regression), each fitted on the game results,
    /// or with `+search` on search-value targets (`elliott-80+search`), or
    /// with `+searchN` on the same search's values over the `+search(N-1)`
    /// network (`elliott-80+search2`: bootstrapped, one relabelling a round);
    /// `+compare` last fits by comparison training (the played move ranked
    /// above 64 sampled others, plus the value loss) (default resnet-tiny,elliott-80,resnet-tiny+search,elliott-80+search;
    /// `none` for none).
    #[arg(long, value_delimiter = ',')]
    value_nets: Option<Vec<String>>,
    /// The evaluator of the search that labels positions for `+search`
    /// networks (default lieberum).
    #[arg(long)]
    label_eval: Option<String>,
    /// Its alpha-beta depth (default 2, the good player's).
    #[arg(long)]
    label_depth: Option<u32>,
    /// Share of the label from the search, the rest the game's result
    /// (default 1).
    #[arg(long)]
    label_mix: Option<f32>,
    /// Epochs of the value networks (default 8; `--quick` 1).
    #[arg(long)]
    value_epochs: Option<usize>,
    /// The searches the value networks play (default no-lookahead,mcts);
    /// `elliott-H` networks run on the plain-Rust MLP and play every one.
    #[arg(long, value_delimiter = ',')]
    value_net_searches: Option<Vec<String>>,
    #[command(flatten)]
    job: JobArgs,
}

pub fn run(a: AmazonsArgs) -> anyhow::Result<ExitCode> {
    let mut cfg = if a.quick {
        AmazonsExperimentConfig::quick(a.out.clone())
    } else {
        AmazonsExperimentConfig::new(a.out.clone())
    };
    cfg.seed = a.seed;
    cfg.size = a.size.unwrap_or(cfg.size);
    cfg.db_chunk = a.db_chunk.unwrap_or(cfg.db_chunk);
    cfg.good = a.good.clone().unwrap_or(cfg.good);
    cfg.simple = a.simple.clone().unwrap_or(cfg.simple);
    cfg.db_games = a.db_games.unwrap_or(cfg.db_games);
    cfg.db_players = a.db_players.clone().unwrap_or(cfg.db_players);
    cfg.db_max_plies = a.db_max_plies.unwrap_or(cfg.db_max_plies);
    cfg.hidden = a.hidden.clone().unwrap_or(cfg.hidden);
    cfg.encoders = a.encoders.clone().unwrap_or(cfg.encoders);
    cfg.runs = a.runs.unwrap_or(cfg.runs);
    cfg.td.examples = a.examples.unwrap_or(cfg.td.examples);
    cfg.equity_games = a.equity_games.unwrap_or(cfg.equity_games);
    cfg.alphabeta = a.alphabeta.clone().unwrap_or(cfg.alphabeta);
    cfg.mcts = a.mcts.clone().unwrap_or(cfg.mcts);
    if let Some(names) = &a.searches {
        cfg.searches = search_indices("--searches", names)?;
    }
    if let Some(names) = &a.value_net_searches {
        cfg.value_net_searches = search_indices("--value-net-searches", names)?;
    }
    if let Some(models) = &a.value_nets {
        cfg.value_nets.models = models
            .iter()
            .filter(|m| m.as_str() != "none")
            .cloned()
            .collect();
    }
    cfg.value_nets.epochs = a.value_epochs.unwrap_or(cfg.value_nets.epochs);
    let labels = &mut cfg.value_nets.search_labels;
    labels.eval = a.label_eval.clone().unwrap_or(labels.eval.clone());
    labels.depth = a.label_depth.unwrap_or(labels.depth);
    labels.mix = a.label_mix.unwrap_or(labels.mix);
    let quiet = a.job.silent();
    let say = super::say(quiet);
    let progress = |len: u64, msg: &str| super::progress(len, msg, quiet);
    let go = || run_amazons(&cfg, &progress, &say).map_err(Box::new);
    let report = super::threads::on_threads(a.job.threads, go)?;
    if a.job.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "Figure 15: 0/1 error of the predicted winner\n{}",
            error_table(&report)
        );
        println!(
            "Table 4: equity against good ({}), 95% interval, (thesis)\n{}",
            cfg.good,
            equity_table(&report, "good")
        );
        println!(
            "Table 5: equity against simple ({}), 95% interval, (thesis)\n{}",
            cfg.simple,
            equity_table(&report, "simple")
        );
        println!(
            "wrote {0}/summary.json, errors.csv, error_by_ply.csv, equities.csv, error_by_ply.png|svg, train_vs_test.png|svg ({1:.0} s)",
            cfg.out.display(),
            report.seconds
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The columns of tables 4 and 5 named on the command line.
fn search_indices(flag: &str, names: &[String]) -> anyhow::Result<Vec<usize>> {
    names
        .iter()
        .map(|n| match n.as_str() {
            "no-lookahead" => Ok(0),
            "alpha-beta" => Ok(1),
            "mcts" => Ok(2),
            other => anyhow::bail!("{flag} {other}: expected no-lookahead, alpha-beta or mcts"),
        })
        .collect()
}
