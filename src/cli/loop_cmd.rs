//! `plies loop`: the self-play improvement loop.

use anyhow::Context;
use clap::Args;
use plies::games::{GameKind, GameSupport};
use plies::improve::{run_loop, LoopConfig};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct LoopArgs {
    /// The game (must match the configuration's `game`).
    #[arg(long)]
    game: GameKind,
    /// The loop's configuration (JSON; see docs/loop.md).
    #[arg(long)]
    config: PathBuf,
    /// The loop's directory; a loop there with the same configuration is
    /// resumed where it stopped.
    #[arg(long)]
    out: PathBuf,
    #[arg(long)]
    json: bool,
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: LoopArgs) -> anyhow::Result<ExitCode> {
    let cfg = LoopConfig::read(&a.config)?;
    let named: GameKind = cfg
        .game
        .parse()
        .map_err(|e| anyhow::anyhow!("{}: `game`: {e}", a.config.display()))?;
    anyhow::ensure!(
        named == a.game,
        "{}: `game` is {}, but --game is {}",
        a.config.display(),
        cfg.game,
        a.game
    );
    plies::with_game!(a.game, G => run_game::<G>(&a, &cfg))
}

fn run_game<G: GameSupport>(a: &LoopArgs, cfg: &LoopConfig) -> anyhow::Result<ExitCode> {
    let s = run_loop::<G>(&a.out, cfg, a.quiet || a.json)
        .with_context(|| format!("loop in {}", a.out.display()))?;
    if a.json {
        println!("{}", serde_json::to_string(&s)?);
    } else {
        println!("{}", s.table());
        println!("{}", s.elo_table());
        let best = s
            .best
            .as_ref()
            .map_or("none promoted".into(), |p| p.display().to_string());
        println!(
            "best network: {best}; wrote {}/generations.csv, elo.csv, elo.png",
            a.out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
