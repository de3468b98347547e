use super::progress;
use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use plies::arena::play_match;
use plies::checkpoint::{self, CheckpointConfig, TrainingInfo};
use plies::dataset::Dataset;
use plies::encode::{tictactoe_encoder, Encoder};
use plies::game::{Game, TicTacToe};
use plies::games::{GameKind, GameSupport};
use plies::infer::mlp_evaluator;
use plies::model::{Activation, MlpConfig, ModelConfig, NativeMlp, WeightInit};
use plies::report::Table;
use plies::search::game_player::player_from_spec;
use plies::search::{ExpertPlayer, GreedyPlayer, Player};
use plies::train::grid::Rule;
use plies::train::{
    run_td_job, train_supervised, Equity, EquityProbe, SupervisedConfig, TdJob, TdNetConfig,
    TrainError, TD_PRESETS,
};
use plies::util::derive_seed;
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
    #[arg(long, default_value = "tictactoe")]
    game: GameKind,
    /// Dataset directory (`plies dataset generate`, `plies selfplay
    /// --dataset`, `plies dataset build`): its train split is learned from.
    #[arg(long, alias = "dataset")]
    data: PathBuf,
    /// Where to write the checkpoint (the best run's network).
    #[arg(long)]
    out: PathBuf,
    /// The settings the other flags start from: patist-ttt (the
    /// Tic-tac-toe study) or fugers-amazons (Fugers 2017, table 3).
    #[arg(long, default_value = "patist-ttt")]
    preset: String,
    /// Encoder the positions are re-encoded with (default: the dataset's).
    #[arg(long)]
    encoder: Option<String>,
    /// Hidden units of the one-hidden-layer Elliott MLP.
    #[arg(long)]
    hidden: Option<usize>,
    /// Elliott steepness.
    #[arg(long)]
    beta: Option<f64>,
    /// Initial weights uniform in [-init, init].
    #[arg(long)]
    init: Option<f64>,
    /// Games drawn (in shuffled passes) from the train split.
    #[arg(long)]
    examples: Option<usize>,
    #[arg(long)]
    lambda: Option<f32>,
    #[arg(long)]
    lr: Option<f32>,
    /// Networks trained in parallel from seeds derived from --seed (run 0
    /// uses --seed itself); the one with the lowest 0/1 error on the valid
    /// split (the test split when there is no valid one) is kept.
    #[arg(long, default_value_t = 1)]
    runs: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Opponent of the greedy network in the equity measurements (any
    /// player spec); default: `expert` for games that have one, else none.
    #[arg(long)]
    eval_against: Option<String>,
    /// Games for each equity measurement (0: none).
    #[arg(long, default_value_t = 1000)]
    eval_games: usize,
    /// With one run: measure after every this many games.
    #[arg(long, default_value_t = 10_000)]
    eval_every: usize,
    #[arg(long)]
    quiet: bool,
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
    let player = GreedyPlayer::new(Arc::new(mlp_evaluator(enc.clone(), net)), false);
    Ok(play_match::<TicTacToe>(
        &player,
        &ExpertPlayer,
        games,
        seed,
        None,
    )?)
}

fn td_settings(a: &TdArgs) -> anyhow::Result<TdNetConfig> {
    let mut cfg = TdNetConfig::preset(&a.preset).with_context(|| {
        format!(
            "--preset {}: expected one of {}",
            a.preset,
            TD_PRESETS.join(", ")
        )
    })?;
    cfg.hidden = a.hidden.unwrap_or(cfg.hidden);
    cfg.beta = a.beta.unwrap_or(cfg.beta);
    cfg.init = a.init.unwrap_or(cfg.init);
    cfg.examples = a.examples.unwrap_or(cfg.examples);
    cfg.td.lambda = a.lambda.unwrap_or(cfg.td.lambda);
    cfg.td.lr = a.lr.unwrap_or(cfg.td.lr);
    Ok(cfg)
}

fn run_td(a: TdArgs) -> anyhow::Result<ExitCode> {
    plies::with_game!(a.game, G => run_td_for::<G>(a))
}

/// An equity probe's opponent: its name and the player.
type Opponent<G> = (String, Arc<dyn Player<G>>);

/// The opponent of the equity measurements: `--eval-against`, else
/// `expert` where the game has one.
fn td_opponent<G: GameSupport>(a: &TdArgs) -> anyhow::Result<Option<Opponent<G>>> {
    if a.eval_games == 0 {
        return Ok(None);
    }
    match &a.eval_against {
        Some(spec) => Ok(Some((spec.clone(), player_from_spec::<G>(spec)?))),
        None => Ok(player_from_spec::<G>("expert")
            .ok()
            .map(|p| ("expert".to_string(), p))),
    }
}

fn run_td_for<G: GameSupport>(a: TdArgs) -> anyhow::Result<ExitCode> {
    let ds = Dataset::open(&a.data)?;
    let spec = ds.spec();
    if spec.game != G::NAME {
        bail!(
            "{}: dataset is for game '{}', not {}",
            a.data.display(),
            spec.game,
            G::NAME
        );
    }
    let encoder_name = a.encoder.clone().unwrap_or(spec.encoder.name.clone());
    let encoder: Arc<dyn Encoder<G>> = Arc::from(G::encoder(&encoder_name, spec.encoder.shape[2])?);
    let net = td_settings(&a)?;
    // The greedy network against the opponent, in the arena.
    let probe = td_opponent::<G>(&a)?.map(|(against, opponent)| {
        let encoder = encoder.clone();
        let games = a.eval_games;
        EquityProbe {
            against,
            measure: Box::new(move |net: &NativeMlp, seed: u64| {
                let player =
                    GreedyPlayer::new(Arc::new(mlp_evaluator(encoder.clone(), net)), false);
                let r = play_match::<G>(&player, opponent.as_ref(), games, seed, None)
                    .map_err(|e| TrainError::Equity(e.to_string()))?;
                Ok(Equity {
                    equity: r.equity,
                    wins: r.total.wins,
                    draws: r.total.draws,
                    losses: r.total.losses,
                })
            }),
        }
    });
    let against = probe
        .as_ref()
        .map_or("-".to_string(), |p| p.against.clone());
    let pb = progress((net.examples * a.runs.max(1)) as u64, "games", a.quiet);
    let tick = || pb.inc(1);
    let job = TdJob {
        data: a.data.clone(),
        out: a.out.clone(),
        preset: a.preset.clone(),
        net,
        runs: a.runs,
        seed: a.seed,
        eval_every: a.eval_every,
        eval_games: a.eval_games,
        encoder,
        probe,
        tick: &tick,
    };
    let report = run_td_job(&job, &ds)?;
    pb.finish_and_clear();
    if job.probe.is_some() {
        let mut table = Table::with_headers([
            "games seen".to_string(),
            format!("equity vs {against}"),
            "wins".into(),
            "draws".into(),
            "losses".into(),
            "td mse".into(),
        ]);
        for p in &report.equity {
            table.push_row([
                p.seen.to_string(),
                format!("{:+.3}", p.equity.equity),
                p.equity.wins.to_string(),
                p.equity.draws.to_string(),
                p.equity.losses.to_string(),
                p.td_mse.map_or("-".into(), |m| format!("{m:.4}")),
            ]);
        }
        println!("{table}");
    }
    let mut runs_table = Table::with_headers([
        "run".to_string(),
        "seed".into(),
        format!("{} 0/1 error", report.held_out_split),
    ]);
    for r in &report.runs {
        runs_table.push_row([
            r.run.to_string(),
            r.seed.to_string(),
            r.error.map_or("-".into(), |e| format!("{e:.4}")),
        ]);
    }
    println!("{runs_table}");
    println!("checkpoint written to {}", report.checkpoint.display());
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
