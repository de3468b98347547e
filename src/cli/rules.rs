use anyhow::Context;
use clap::{Args, Subcommand};
use plies::game::arimaa::listing::{moves_digest_line, moves_listing, steps_listing};
use plies::game::arimaa::notation::parse_position_line;
use plies::game::arimaa::MoveGen;
use plies::games::{GameKind, GameSupport};
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum RulesCmd {
    /// Replay oracle records (JSONL) and stop at the first difference.
    Replay(ReplayArgs),
    /// The distinct full moves of each position line (`<side> <board>`), in
    /// the reference oracle's output format (Arimaa).
    Moves(MovesArgs),
    /// The legal single steps after a partial turn (`<side> <board> | steps`),
    /// in the reference oracle's output format (Arimaa).
    Steps(StepsArgs),
}

#[derive(Args)]
pub struct ReplayArgs {
    #[arg(long)]
    game: GameKind,
    /// Records written by scripts/oracles/spiel_oracle.py (or arimaa_oracle.py
    /// games); the board size comes from each record's parameters.
    file: PathBuf,
}

#[derive(Args)]
pub struct MovesArgs {
    #[arg(long, default_value = "arimaa")]
    game: GameKind,
    /// One line per position: `<side> <board>` (64 squares, rank 8 first).
    /// Blank lines and lines starting with '#' are skipped. `-` reads stdin.
    file: PathBuf,
    /// One line per position: `<side> <board> <count> <fnv>`.
    #[arg(long)]
    digest: bool,
}

#[derive(Args)]
pub struct StepsArgs {
    #[arg(long, default_value = "arimaa")]
    game: GameKind,
    /// One line per position: `<side> <board> [| <steps played this turn>]`.
    file: PathBuf,
}

fn require_arimaa(game: GameKind) -> anyhow::Result<()> {
    Ok(game.require(GameKind::Arimaa, "this command")?)
}

/// Non-comment lines with their 1-based line numbers.
fn position_lines(file: &Path) -> anyhow::Result<Vec<(usize, String)>> {
    let reader: Box<dyn BufRead> = if file.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(plies::util::text::open_text(file).with_context(|| format!("{}", file.display()))?)
    };
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("{}: line {}", file.display(), i + 1))?;
        let t = line.trim();
        if !t.is_empty() && !t.starts_with('#') {
            out.push((i + 1, t.to_string()));
        }
    }
    Ok(out)
}

fn moves(a: MovesArgs) -> anyhow::Result<ExitCode> {
    require_arimaa(a.game)?;
    let mut gen = MoveGen::new();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (k, (line_no, line)) in position_lines(&a.file)?.into_iter().enumerate() {
        let (pos, tail) = parse_position_line(&line)
            .with_context(|| format!("{}: line {line_no}", a.file.display()))?;
        if tail.is_some() {
            anyhow::bail!(
                "{}: line {line_no}: `moves` takes turn-start positions, without '| steps'",
                a.file.display()
            );
        }
        if a.digest {
            writeln!(out, "{}", moves_digest_line(&mut gen, &pos))?;
        } else {
            write!(out, "{}", moves_listing(&mut gen, &pos, k + 1))?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn steps(a: StepsArgs) -> anyhow::Result<ExitCode> {
    require_arimaa(a.game)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (k, (line_no, line)) in position_lines(&a.file)?.into_iter().enumerate() {
        let (pos, tail) = parse_position_line(&line)
            .with_context(|| format!("{}: line {line_no}", a.file.display()))?;
        let listing = steps_listing(&pos, tail.unwrap_or(""), k + 1)
            .with_context(|| format!("{}: line {line_no}", a.file.display()))?;
        write!(out, "{listing}")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

pub fn run(cmd: RulesCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        RulesCmd::Moves(a) => moves(a),
        RulesCmd::Steps(a) => steps(a),
        RulesCmd::Replay(a) => {
            let summary = plies::with_game!(a.game, G => G::replay_oracle(&a.file));
            match summary {
                Ok(s) => {
                    let legal = match s.legal_moves_compared {
                        0 => String::new(),
                        n => format!(", {n} legal moves"),
                    };
                    println!(
                        "{}: {} games, {} plies{legal}: all agree",
                        a.file.display(),
                        s.games,
                        s.plies,
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
