use super::progress;
use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use plies::arena::play_match;
use plies::checkpoint::{self, CheckpointConfig, TrainingInfo};
use plies::dataset::{Dataset, Split};
use plies::encode::{tictactoe_encoder, Encoder};
use plies::game::{Game, TicTacToe};
use plies::games::GameKind;
use plies::infer::NativeEvaluator;
use plies::model::{Activation, MlpConfig, ModelConfig, NativeMlp, WeightInit};
use plies::report::Table;
use plies::search::{ExpertPlayer, GreedyPlayer};
use plies::train::grid::Rule;
use plies::train::{rows_to_td_game, train_supervised, SupervisedConfig, TdConfig, TdLearner};
use plies::util::{derive_seed, seeded_rng};
use rand::seq::SliceRandom;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Subcommand)]
pub enum TrainCmd {
    /// TD(lambda) over the games of a dataset's train split (the
    /// Tic-tac-toe study's Experiment II), on the plain-Rust MLP.
    Td(TdArgs),
    /// Supervised regression on the labels of a dataset, with candle.
    Supervised(SupervisedArgs),
    /// The training engine: any model on any dataset (the same as `plies
    /// train --data ...`).
    Fit(Box<super::train_model::FitArgs>),
    /// The bucketed MDP learner of Heon & Oetting (2012) by self-play
    /// (Pentago, Tic-tac-toe, Connect Four): the model file `mdp:FILE` plays.
    Mdp(super::train_mdp::MdpArgs),
}

#[derive(Args)]
pub struct Common {
    #[arg(long, default_value = "tictactoe")]
    game: GameKind,
    /// Dataset directory (from `plies data generate`).
    #[arg(long)]
    data: PathBuf,
    /// Where to write the checkpoint.
    #[arg(long)]
    out: PathBuf,
    /// Hidden units of the one-hidden-layer Elliott MLP.
    #[arg(long, default_value_t = 80)]
    hidden: usize,
    /// Elliott steepness.
    #[arg(long, default_value_t = 5.0)]
    beta: f64,
    /// Initial weights uniform in [-init, init].
    #[arg(long, default_value_t = 0.2)]
    init: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Games against EXPERT for each equity measurement (0: none).
    #[arg(long, default_value_t = 1000)]
    eval_games: usize,
    #[arg(long)]
    quiet: bool,
}

#[derive(Args)]
pub struct TdArgs {
    #[command(flatten)]
    common: Common,
    /// Games drawn (in shuffled passes) from the train split.
    #[arg(long, default_value_t = 160_000)]
    examples: usize,
    /// Measure equity against EXPERT after every this many games.
    #[arg(long, default_value_t = 10_000)]
    eval_every: usize,
    #[arg(long, default_value_t = 0.8)]
    lambda: f32,
    #[arg(long, default_value_t = 0.00105)]
    lr: f32,
}

#[derive(Clone, Copy, ValueEnum)]
enum OptKind {
    Sgd,
    Momentum,
    Nesterov,
    Rmsprop,
}

#[derive(Args)]
pub struct SupervisedArgs {
    #[command(flatten)]
    common: Common,
    #[arg(long, value_enum, default_value_t = OptKind::Nesterov)]
    optimizer: OptKind,
    #[arg(long, default_value_t = 0.01)]
    lr: f64,
    #[arg(long, default_value_t = 0.9)]
    momentum: f64,
    #[arg(long, default_value_t = 0.0)]
    weight_decay: f64,
    #[arg(long, default_value_t = 20)]
    epochs: usize,
    #[arg(long, default_value_t = 64)]
    batch: usize,
}

fn open(c: &Common) -> anyhow::Result<(Dataset, Arc<dyn Encoder<TicTacToe>>)> {
    super::require_tictactoe(c.game)?;
    let ds = Dataset::open(&c.data)?;
    let spec = ds.spec();
    if spec.game != TicTacToe::NAME {
        bail!(
            "{}: dataset is for game '{}', not tictactoe",
            c.data.display(),
            spec.game
        );
    }
    let enc: Arc<dyn Encoder<TicTacToe>> = Arc::from(tictactoe_encoder(&spec.encoder.name)?);
    Ok((ds, enc))
}

fn mlp(c: &Common, inputs: usize) -> MlpConfig {
    MlpConfig {
        inputs,
        hidden: vec![c.hidden],
        activation: Activation::Elliott { beta: c.beta },
        init: WeightInit::Uniform { a: c.init },
    }
}

fn equity(
    net: &NativeMlp,
    enc: &Arc<dyn Encoder<TicTacToe>>,
    games: usize,
    seed: u64,
) -> anyhow::Result<plies::arena::MatchResult> {
    let player = GreedyPlayer::new(
        Arc::new(NativeEvaluator::new(enc.clone(), net.clone())),
        false,
    );
    Ok(play_match::<TicTacToe>(
        &player,
        &ExpertPlayer,
        games,
        seed,
        None,
    )?)
}

fn run_td(a: TdArgs) -> anyhow::Result<ExitCode> {
    let c = &a.common;
    let (ds, enc) = open(c)?;
    let games = ds
        .games(Some(Split::Train))?
        .iter()
        .map(|rows| rows_to_td_game(rows, enc.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    if games.is_empty() {
        bail!("{}: the train split has no games", c.data.display());
    }
    let inputs = enc.plane_len() + enc.spec().globals;
    let cfg = mlp(c, inputs);
    let mut rng = seeded_rng(c.seed, 0);
    let mut net = NativeMlp::new(&cfg, &mut rng)?;
    let td_cfg = TdConfig {
        lambda: a.lambda,
        lr: a.lr,
    };
    let mut td = TdLearner::new(td_cfg, &net);
    let mut order: Vec<usize> = (0..games.len()).collect();
    let mut table = Table::with_headers([
        "games seen",
        "equity vs expert",
        "wins",
        "draws",
        "losses",
        "td mse",
    ]);
    let pb = progress(a.examples as u64, "games", c.quiet);
    let (mut mse_sum, mut mse_n) = (0.0f64, 0usize);
    let mut last_equity = None;
    for k in 0..a.examples {
        if k % games.len() == 0 {
            order.shuffle(&mut rng);
        }
        mse_sum += td.learn_game(&mut net, &games[order[k % games.len()]]) as f64;
        mse_n += 1;
        pb.inc(1);
        let at_end = k + 1 == a.examples;
        if c.eval_games > 0 && ((k + 1) % a.eval_every.max(1) == 0 || at_end) {
            let r = equity(&net, &enc, c.eval_games, derive_seed(c.seed, k as u64))?;
            table.push_row([
                (k + 1).to_string(),
                format!("{:+.3}", r.equity),
                r.total.wins.to_string(),
                r.total.draws.to_string(),
                r.total.losses.to_string(),
                format!("{:.4}", mse_sum / mse_n as f64),
            ]);
            (mse_sum, mse_n) = (0.0, 0);
            last_equity = Some(r.equity);
        }
    }
    pb.finish_and_clear();
    println!("{table}");
    let training = TrainingInfo {
        method: "td_lambda_from_dataset".into(),
        seed: Some(c.seed),
        dataset_manifest_sha256: Some(ds.manifest_sha256().to_string()),
        dataset: Some(c.data.display().to_string()),
        examples: a.examples as u64,
        hyperparameters: serde_json::json!({"lambda": a.lambda, "lr": a.lr, "beta": c.beta, "init": c.init}),
        metrics: serde_json::json!({"equity_vs_expert": last_equity, "eval_games": c.eval_games}),
    };
    let ck = CheckpointConfig::new(
        TicTacToe::NAME,
        enc.spec(),
        ModelConfig::Mlp(cfg.into()),
        training,
    );
    checkpoint::save(&c.out, &ck, &net.to_tensors(&candle_core::Device::Cpu)?)?;
    println!("checkpoint written to {}", c.out.display());
    Ok(ExitCode::SUCCESS)
}

fn run_supervised(a: SupervisedArgs) -> anyhow::Result<ExitCode> {
    let c = &a.common;
    let (ds, enc) = open(c)?;
    let inputs = enc.plane_len() + enc.spec().globals;
    let cfg = mlp(c, inputs);
    let rule = match a.optimizer {
        OptKind::Sgd => Rule::Sgd,
        OptKind::Momentum => Rule::Momentum,
        OptKind::Nesterov => Rule::Nesterov,
        OptKind::Rmsprop => Rule::Rmsprop,
    };
    let optimizer = rule.optimizer(a.lr, a.momentum, a.weight_decay);
    let scfg = SupervisedConfig {
        model: ModelConfig::Mlp(cfg.clone().into()),
        optimizer,
        epochs: a.epochs,
        batch_size: a.batch,
        seed: c.seed,
        perspective: enc.spec().perspective,
    };
    let device = candle_core::Device::Cpu;
    let pb = progress(a.epochs as u64, "epochs", c.quiet);
    let (varmap, report) = train_supervised(&ds, &scfg, &device, Some(&pb))?;
    pb.finish_and_clear();
    let mut table = Table::with_headers(["epoch", "train mse", "valid mse", "valid accuracy"]);
    for m in &report.epochs {
        table.push_row([
            m.epoch.to_string(),
            format!("{:.4}", m.train_mse),
            m.valid_mse
                .map(|v| format!("{v:.4}"))
                .unwrap_or_else(|| "-".into()),
            m.valid_accuracy
                .map(|v| format!("{:.1}%", 100.0 * v))
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    println!("{table}");
    let tensors = varmap
        .data()
        .lock()
        .map_err(|_| anyhow::anyhow!("variable map lock poisoned"))?
        .iter()
        .map(|(k, v)| (k.clone(), v.as_tensor().clone()))
        .collect();
    let mut equity_v = None;
    if c.eval_games > 0 {
        let net = NativeMlp::from_tensors(&cfg, &tensors).context("reading trained weights")?;
        let r = equity(&net, &enc, c.eval_games, derive_seed(c.seed, 99))?;
        println!(
            "equity against expert over {} games: {:+.3}",
            c.eval_games, r.equity
        );
        equity_v = Some(r.equity);
    }
    let training = TrainingInfo {
        method: "supervised".into(),
        seed: Some(c.seed),
        dataset_manifest_sha256: Some(ds.manifest_sha256().to_string()),
        dataset: Some(c.data.display().to_string()),
        examples: report.train_positions * a.epochs as u64,
        hyperparameters: serde_json::to_value(&scfg)?,
        metrics: serde_json::json!({"epochs": report.epochs, "equity_vs_expert": equity_v}),
    };
    let ck = CheckpointConfig::new(
        TicTacToe::NAME,
        enc.spec(),
        ModelConfig::Mlp(cfg.into()),
        training,
    );
    checkpoint::save(&c.out, &ck, &tensors)?;
    println!("checkpoint written to {}", c.out.display());
    Ok(ExitCode::SUCCESS)
}

pub fn run(cmd: TrainCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        TrainCmd::Td(a) => run_td(a),
        TrainCmd::Supervised(a) => run_supervised(a),
        TrainCmd::Fit(a) => super::train_model::run_fit(*a),
        TrainCmd::Mdp(a) => super::train_mdp::run(a),
    }
}
