//! Subcommand definitions (clap derive) and their dispatch.

mod arena;
mod bench;
mod bench_conv;
mod bench_device;
mod bench_evaluator;
mod bench_loader;
mod bench_mcts;
mod bench_models;
mod bench_playouts;
mod bench_vs_spiel;
mod data;
mod dataset;
mod engine;
mod evaluate;
mod evolve;
mod experiment;
mod experiment_amazons;
mod experiment_pentago;
mod grid;
#[cfg(feature = "hub")]
mod hub;
mod import;
mod inspect;
mod loop_cmd;
mod matches;
mod records;
mod rules;
mod selfplay;
mod shared_args;
mod threads;
mod train;
mod train_mdp;
mod train_model;
mod tune;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "plies",
    version,
    about = "Learn board-game evaluation functions and play with them"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Rules engines: replay reference records move for move.
    #[command(subcommand)]
    Rules(rules::RulesCmd),
    /// Datasets of encoded positions: build from game records (filters,
    /// folds), generate by play (Tic-tac-toe), verify, stats, dump.
    /// `plies data` is the same command.
    #[command(subcommand, alias = "data")]
    Dataset(dataset::DatasetCmd),
    /// Train a model: `plies train --data DIR --model CONFIG --out CKPT`
    /// (any model, any dataset), or TD(lambda) / supervised Tic-tac-toe.
    Train(train_model::TrainArgs),
    /// Play a match between two players and report equity and Elo.
    Match(matches::MatchArgs),
    /// Play one game between two players and show it move by move.
    Play(matches::PlayArgs),
    /// Round-robin tournament: cross table, Elo ratings, CSV, JSON and a chart.
    Arena(arena::ArenaArgs),
    /// Speed measurements against a named reference, in one run.
    #[command(subcommand)]
    Bench(bench::BenchCmd),
    /// Serve a player to outside controllers (Arimaa: AEI).
    #[command(subcommand)]
    Engine(engine::EngineCmd),
    /// Reproduce a published experiment.
    #[command(subcommand)]
    Experiment(experiment::ExperimentCmd),
    /// Import game archives (arimaa.com) as JSONL records, replaying every game.
    Import(import::ImportArgs),
    /// A linear checkpoint's piece-square tables, printed and drawn
    /// (`--plot FILE`: one heatmap per piece type).
    Inspect(inspect::InspectArgs),
    /// Self-play: games between two players as resumable JSONL game records.
    Selfplay(selfplay::SelfplayArgs),
    /// Accuracy, MSE and the height plot of checkpoints and baselines on a dataset split.
    Evaluate(evaluate::EvaluateArgs),
    /// Tune the weights of a weighted hand evaluator (Pentago's 35
    /// features) by games between greedy players: the paper's perturbation
    /// self-play or SPSA; resumable, weights for `eval=NAME:FILE`.
    Tune(tune::TuneArgs),
    /// Cross-validated grid search over dropout, regulariser, learning rule
    /// and cnn3 kernel shape; the ranked table of Zaffetti's figure 4.
    Grid(grid::GridArgs),
    /// Share checkpoints and datasets through a Hugging Face-style hub
    /// (HF_ENDPOINT, HF_TOKEN, HF_HUB_CACHE); `ckpt:hf:ORG/NAME[@REV]` then
    /// reads a shared checkpoint wherever a checkpoint is accepted.
    #[cfg(feature = "hub")]
    #[command(subcommand)]
    Hub(hub::HubCmd),
    /// Evolve a network (MDRNN) by an evolution strategy, its fitness the
    /// score of games against a fixed opponent; resumable.
    Evolve(evolve::EvolveArgs),
    /// Host-parasite coevolution of two populations of networks (shared
    /// fitness, shared sampling, hall of fame); resumable.
    Coevolve(evolve::CoevolveArgs),
    /// The self-play improvement loop: generations of MCTS self-play with
    /// the current network, value+policy training on a replay window, a
    /// gate, Elo against fixed anchors; resumable (`--config FILE`, JSON).
    Loop(loop_cmd::LoopArgs),
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Rules(c) => rules::run(c),
        Command::Dataset(c) => dataset::run_cmd(c),
        Command::Train(c) => train_model::run(c),
        Command::Match(a) => matches::run_match(a),
        Command::Play(a) => matches::run_play(a),
        Command::Arena(a) => arena::run(a),
        Command::Experiment(c) => experiment::run(c),
        Command::Engine(c) => engine::run(c),
        Command::Bench(c) => bench::run(c),
        Command::Import(a) => import::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Selfplay(a) => selfplay::run(a),
        Command::Evaluate(a) => evaluate::run(a),
        Command::Grid(a) => grid::run(a),
        Command::Tune(a) => tune::run(a),
        #[cfg(feature = "hub")]
        Command::Hub(c) => hub::run(c),
        Command::Evolve(a) => evolve::run_evolve_cmd(a),
        Command::Coevolve(a) => evolve::run_coevolve_cmd(a),
        Command::Loop(a) => loop_cmd::run(a),
    }
}

/// Commands whose players, encoders or models exist only for Tic-tac-toe.
pub fn require_tictactoe(game: plies::games::GameKind) -> anyhow::Result<()> {
    Ok(game.require(plies::games::GameKind::TicTacToe, "this command")?)
}

/// Prints a stage's line on stderr, unless `quiet`.
pub fn say(quiet: bool) -> impl Fn(&str) {
    move |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    }
}

/// A progress bar on stderr, hidden when `quiet`.
pub fn progress(len: u64, msg: &str, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(len);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} ({eta})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(msg.to_string());
    pb
}
