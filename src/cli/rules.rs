use clap::{Args, Subcommand};
use plies::game::{GameKind, TicTacToe};
use plies::record::replay_file;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum RulesCmd {
    /// Replay oracle records (JSONL) and stop at the first difference.
    Replay(ReplayArgs),
}

#[derive(Args)]
pub struct ReplayArgs {
    #[arg(long)]
    game: GameKind,
    /// Records written by scripts/oracles/spiel_oracle.py.
    file: PathBuf,
}

pub fn run(cmd: RulesCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        RulesCmd::Replay(a) => {
            let summary = match a.game {
                GameKind::TicTacToe => replay_file::<TicTacToe>(&a.file),
            };
            match summary {
                Ok(s) => {
                    println!(
                        "{}: {} games, {} plies, {} legal moves: all agree",
                        a.file.display(),
                        s.games,
                        s.plies,
                        s.legal_moves_compared
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    eprintln!("difference: {e}");
                    Ok(ExitCode::FAILURE)
                }
            }
        }
    }
}
