use super::progress;
use clap::Args;
use plies::arena::{play_game, play_match};
use plies::game::{Game, GameKind, TicTacToe};
use plies::search::{build_tictactoe_player, PlayerSpec};
use plies::util::seeded_rng;
use std::process::ExitCode;

#[derive(Args)]
pub struct MatchArgs {
    #[arg(long)]
    game: GameKind,
    /// random, expert, greedy:CHECKPOINT or greedy+:CHECKPOINT
    #[arg(long)]
    a: PlayerSpec,
    #[arg(long)]
    b: PlayerSpec,
    #[arg(long, default_value_t = 1000)]
    games: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the result as one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    #[arg(long)]
    quiet: bool,
}

#[derive(Args)]
pub struct PlayArgs {
    #[arg(long)]
    game: GameKind,
    #[arg(long)]
    a: PlayerSpec,
    #[arg(long)]
    b: PlayerSpec,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run_match(a: MatchArgs) -> anyhow::Result<ExitCode> {
    super::require_tictactoe(a.game)?;
    let device = candle_core::Device::Cpu;
    let pa = build_tictactoe_player(&a.a, &device)?;
    let pb = build_tictactoe_player(&a.b, &device)?;
    let bar = progress(a.games as u64, "games", a.quiet || a.json);
    let r = play_match::<TicTacToe>(pa.as_ref(), pb.as_ref(), a.games, a.seed, Some(&bar))?;
    bar.finish_and_clear();
    if a.json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!("{r}");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run_play(a: PlayArgs) -> anyhow::Result<ExitCode> {
    super::require_tictactoe(a.game)?;
    let device = candle_core::Device::Cpu;
    let pa = build_tictactoe_player(&a.a, &device)?;
    let pb = build_tictactoe_player(&a.b, &device)?;
    let mut rng = seeded_rng(a.seed, 0);
    let (outcome, moves) = play_game::<TicTacToe>(pa.as_ref(), pb.as_ref(), 0, &mut rng)?;
    let mut g = TicTacToe::new();
    println!("x = {} (A), o = {} (B)\n", pa.name(), pb.name());
    for (i, m) in moves.iter().enumerate() {
        let who = if i % 2 == 0 { "x" } else { "o" };
        println!("{}. {who} plays {}", i + 1, g.move_to_string(*m));
        g.play(*m);
        println!("{}", g.render());
    }
    println!("result: {outcome:?}");
    Ok(ExitCode::SUCCESS)
}
