//! `plies engine`: serve a player to outside controllers.

use super::shared_args::EvalDeviceArgs;
use clap::{Args, Subcommand};
use plies::protocol::{run_aei_with, run_gomocup, AeiConfig, EngineSpec, GomocupConfig};
use plies::util::fresh_seed;
use std::io::BufReader;
use std::net::TcpStream;
use std::process::ExitCode;

/// The AEI engine's player when `--player` is not given: the engine
/// ladder's best (`scripts/engine_ladder.sh arimaa`).
pub const DEFAULT_AEI_PLAYER: &str = "alphabeta:eval=builtin:arimaa";

/// The Gomocup engine's player when `--player` is not given: the top of
/// Gomoku's ladder (docs/checkpoints.md), the threat player on the
/// pattern weights it learned by self-play.
pub const DEFAULT_GOMOCUP_PLAYER: &str = "threats:eval=gomoku-tuned";

#[derive(Subcommand)]
pub enum EngineCmd {
    /// An Arimaa engine speaking AEI on stdin/stdout (or, with --server and
    /// --port, on a socket to a pyrimaa controller). Bad input is answered
    /// with `log Error: ...` and the engine keeps serving until `quit`.
    Aei(Box<AeiArgs>),
    /// A Gomoku brain speaking the Gomocup (Piskvork) protocol on
    /// stdin/stdout, boards 5x5 to 19x19. Bad input is answered with
    /// `ERROR ...` (or `UNKNOWN ...`) and the brain keeps serving until `END`.
    Gomocup(GomocupArgs),
}

#[derive(Args)]
pub struct GomocupArgs {
    /// Any player spec of `plies match --game gomoku`: threats[:depth=D,
    /// width=K,eval=E] (wins, blocks, forced wins by fours, else the best
    /// valued move that leaves the opponent none; the default on
    /// gomoku-tuned, the line patterns with learned weights), naive,
    /// random, expert, alphabeta:depth=D[,eval=E], greedy[:eval=E],
    /// mcts:sims=N[,threads=T,eval=E,...]; E: gomoku-tuned, patterns,
    /// random, builtin:gomoku, ckpt:PATH or ckpt:hf:ORG/NAME[@REV] (a
    /// checkpoint for the board size START names). The manager's
    /// timeout_turn and time_left bound every search.
    #[arg(long, default_value = DEFAULT_GOMOCUP_PLAYER)]
    player: String,
    #[command(flatten)]
    eval: EvalDeviceArgs,
    /// Seed of the random choices (default: drawn afresh and printed on
    /// stderr, so that every session plays differently and any can be
    /// replayed).
    #[arg(long)]
    seed: Option<u64>,
}

#[derive(Args)]
pub struct AeiArgs {
    /// Any player spec of `plies match --game arimaa`: random,
    /// random-steps[:end=P], alphabeta[:depth=TURNS,time=SECS,nodes=N,eval=E],
    /// greedy[:eval=E], greedy:CKPT, greedy+:CKPT, or
    /// mcts[:sims=N,time=SECS,threads=T,eval=E,rollout=K|end,puct=on|off,
    /// c=C,vloss=V,reuse=on|off,batch=B]. E: material (when a spec names none),
    /// random, or ckpt:PATH or ckpt:hf:ORG/NAME[@REV], a trained Arimaa checkpoint (loaded, and
    /// refused if missing or of another game, before the engine answers
    /// anything), or builtin:arimaa. Any of them may add setup=standard (default: a random
    /// setup). The controller's clock bounds every search. The default,
    /// alpha-beta over whole turns on the shipped comparison-trained table
    /// (builtin:arimaa), is the best rated player of the engine ladder
    /// (scripts/engine_ladder.sh arimaa). Example:
    /// mcts:sims=2000,threads=2,eval=ckpt:runs/quickstart/arimaa-cnn3/best
    #[arg(long, default_value = DEFAULT_AEI_PLAYER, verbatim_doc_comment)]
    player: EngineSpec,
    #[command(flatten)]
    eval: EvalDeviceArgs,
    /// Seed of the random setups, random moves and tie-breaks (default:
    /// drawn afresh and printed on stderr, so that every game gets its own
    /// setup and any can be replayed).
    #[arg(long)]
    seed: Option<u64>,
    /// Connect to a controller at this address instead of using stdio
    /// (pyrimaa's "socket" communication method passes it).
    #[arg(long, requires = "port")]
    server: Option<String>,
    #[arg(long, requires = "server")]
    port: Option<u16>,
}

/// The seed of one engine session: the user's, or a fresh one said on
/// stderr (the protocols' stdout belongs to the controller).
fn session_seed(engine: &str, seed: Option<u64>) -> u64 {
    seed.unwrap_or_else(|| {
        let seed = fresh_seed();
        eprintln!("plies engine {engine}: seed {seed} (--seed {seed} replays this session)");
        seed
    })
}

pub fn run(cmd: EngineCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        EngineCmd::Gomocup(a) => {
            let mut config = GomocupConfig::new(&a.player, session_seed("gomocup", a.seed));
            config.context = a.eval.player_context(15)?;
            // A spec that cannot be read is refused before the engine
            // answers anything.
            a.player
                .parse::<plies::search::game_player::GamePlayerSpec>()
                .map_err(|e| anyhow::anyhow!("cannot start the engine: {e}"))?;
            match run_gomocup(std::io::stdin().lock(), std::io::stdout(), &config) {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
                Err(e) => Err(e.into()),
            }
        }
        EngineCmd::Aei(a) => {
            let mut config = AeiConfig::new(a.player, session_seed("aei", a.seed));
            config.context = a.eval.player_context(8)?;
            // A checkpoint that cannot play is refused before the engine
            // answers anything (the controller sees it exit).
            let player = config
                .player()
                .map_err(|e| anyhow::anyhow!("cannot start the engine: {e}"))?;
            let served = match (a.server, a.port) {
                (Some(host), Some(port)) => {
                    let stream = TcpStream::connect((host.as_str(), port))?;
                    stream.set_nodelay(true)?;
                    let reader = BufReader::new(stream.try_clone()?);
                    run_aei_with(reader, stream, &config, player.as_ref())
                }
                _ => run_aei_with(
                    std::io::stdin().lock(),
                    std::io::stdout(),
                    &config,
                    player.as_ref(),
                ),
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
