//! `plies engine`: serve a player to outside controllers.

use clap::{Args, Subcommand};
use plies::protocol::{run_aei, run_gomocup, AeiConfig, EngineSpec, GomocupConfig, GomocupPlayer};
use std::io::BufReader;
use std::net::TcpStream;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum EngineCmd {
    /// An Arimaa engine speaking AEI on stdin/stdout (or, with --server and
    /// --port, on a socket to a pyrimaa controller). Bad input is answered
    /// with `log Error: ...` and the engine keeps serving until `quit`.
    Aei(AeiArgs),
    /// A Gomoku brain speaking the Gomocup (Piskvork) protocol on
    /// stdin/stdout, boards 5x5 to 19x19. Bad input is answered with
    /// `ERROR ...` (or `UNKNOWN ...`) and the brain keeps serving until `END`.
    Gomocup(GomocupArgs),
}

#[derive(Args)]
pub struct GomocupArgs {
    /// naive (win at once, else block an immediate win, else random) or random
    #[arg(long, default_value = "naive")]
    player: GomocupPlayer,
    /// Seed of the random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Args)]
pub struct AeiArgs {
    /// random, or alphabeta[:depth=TURNS,time=SECS,nodes=N]; either may add
    /// setup=standard (default: a random setup)
    #[arg(long, default_value = "alphabeta")]
    player: EngineSpec,
    /// Seed of the random setups, random moves and tie-breaks.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Connect to a controller at this address instead of using stdio
    /// (pyrimaa's "socket" communication method passes it).
    #[arg(long, requires = "port")]
    server: Option<String>,
    #[arg(long, requires = "server")]
    port: Option<u16>,
}

pub fn run(cmd: EngineCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        EngineCmd::Gomocup(a) => {
            let config = GomocupConfig::new(a.player, a.seed);
            match run_gomocup(std::io::stdin().lock(), std::io::stdout(), &config) {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
                Err(e) => Err(e.into()),
            }
        }
        EngineCmd::Aei(a) => {
            let config = AeiConfig::new(a.player, a.seed);
            let served = match (a.server, a.port) {
                (Some(host), Some(port)) => {
                    let stream = TcpStream::connect((host.as_str(), port))?;
                    stream.set_nodelay(true)?;
                    let reader = BufReader::new(stream.try_clone()?);
                    run_aei(reader, stream, &config)
                }
                _ => run_aei(std::io::stdin().lock(), std::io::stdout(), &config),
            };
            // A controller that went away ends the session; that is no error.
            match served {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
                Err(e) => Err(e.into()),
            }
        }
    }
}
