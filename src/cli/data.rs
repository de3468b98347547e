use super::progress;
use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use plies::dataset::{Dataset, SplitRule};
use plies::encode::tictactoe_encoder;
use plies::game::{GameKind, TicTacToe};
use plies::model::{Activation, MlpConfig, NativeMlp, WeightInit};
use plies::search::{build_tictactoe_player, PlayerSpec};
use plies::selfplay::{generate_database, DatabaseConfig, LearningNetwork, SideSpec};
use plies::train::TdConfig;
use plies::util::seeded_rng;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Subcommand)]
pub enum DataCmd {
    /// Play games between two players and store every position as a dataset.
    Generate(GenerateArgs),
    /// Check a dataset's shards against its manifest (counts, sha256, schema).
    Verify {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Summarise a dataset: rows, games, splits, labels, game lengths.
    Stats {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
pub struct GenerateArgs {
    #[arg(long)]
    game: GameKind,
    /// Player A: random, expert, greedy:CKPT, greedy+:CKPT, or td:HIDDEN (a
    /// fresh Elliott MLP that learns by TD(lambda) while it plays).
    #[arg(long)]
    a: String,
    /// Player B (random, expert, greedy:CKPT, greedy+:CKPT).
    #[arg(long)]
    b: String,
    #[arg(long)]
    games: usize,
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "tictactoe-9")]
    encoder: String,
    /// Share of games in the validation split (by hash of the game id).
    #[arg(long, default_value_t = 0.1)]
    valid: f64,
    #[arg(long, default_value_t = 0.1)]
    test: f64,
    #[arg(long, default_value_t = 100_000)]
    shard_rows: usize,
    #[arg(long)]
    quiet: bool,
}

fn generate(a: GenerateArgs) -> anyhow::Result<ExitCode> {
    super::require_tictactoe(a.game)?;
    let encoder: Arc<dyn plies::encode::Encoder<TicTacToe>> =
        Arc::from(tictactoe_encoder(&a.encoder)?);
    let device = candle_core::Device::Cpu;
    let side_a = if let Some(h) = a.a.strip_prefix("td:") {
        let hidden: usize = h
            .parse()
            .with_context(|| format!("--a '{}': expected td:HIDDEN with a number", a.a))?;
        let cfg = MlpConfig {
            inputs: encoder.plane_len() + encoder.spec().globals,
            hidden: vec![hidden],
            activation: Activation::Elliott { beta: 5.0 },
            init: WeightInit::Uniform { a: 0.2 },
        };
        let net = NativeMlp::new(&cfg, &mut seeded_rng(a.seed, u64::MAX))?;
        SideSpec::Learning(Box::new(LearningNetwork::new(
            net,
            encoder.clone(),
            TdConfig::default(),
            false,
        )))
    } else {
        SideSpec::Fixed(build_tictactoe_player(
            &a.a.parse::<PlayerSpec>()?,
            &device,
        )?)
    };
    let side_b = SideSpec::Fixed(build_tictactoe_player(
        &a.b.parse::<PlayerSpec>()?,
        &device,
    )?);
    let cfg = DatabaseConfig {
        games: a.games,
        seed: a.seed,
        split: SplitRule::new(a.valid, a.test)?,
        shard_rows: a.shard_rows,
    };
    let prov = serde_json::json!({
        "command": std::env::args().collect::<Vec<_>>().join(" "),
    });
    let pb = progress(a.games as u64, "games", a.quiet);
    let (manifest, wdl) = generate_database(&a.out, side_a, side_b, encoder, &cfg, prov, Some(&pb))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    pb.finish_and_clear();
    println!(
        "wrote {}: {} games, {} positions in {} shard(s); A ({}) won {}, drew {}, lost {}",
        a.out.display(),
        manifest.totals.games,
        manifest.totals.rows,
        manifest.shards.len(),
        a.a,
        wdl.wins,
        wdl.draws,
        wdl.losses
    );
    Ok(ExitCode::SUCCESS)
}

pub fn run(cmd: DataCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        DataCmd::Generate(a) => generate(a),
        DataCmd::Verify { dir, json } => {
            let ds = Dataset::open(&dir)?;
            match ds.verify() {
                Ok(r) => {
                    if json {
                        println!("{}", serde_json::to_string_pretty(&r)?);
                    } else {
                        println!("{r}");
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    eprintln!("verify failed: {e}");
                    Ok(ExitCode::FAILURE)
                }
            }
        }
        DataCmd::Stats { dir, json } => {
            let ds = Dataset::open(&dir)?;
            let s = ds.stats()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                println!("{s}");
            }
            if s.rows == 0 {
                bail!("{}: the dataset has no rows", dir.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
