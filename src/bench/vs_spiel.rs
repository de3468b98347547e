//! plies' MCTS against OpenSpiel's MCTS bot (C++, random rollouts, through
//! `scripts/spiel_mcts_bot.py`) at the same number of simulations and at
//! the same time per move: equity, Elo, thinking time and games/s, in one
//! run.
//!
//! Games are played one at a time so each side's time per move is its own.
//! OpenSpiel splits an Amazons move into three decisions (amazon,
//! destination, arrow) and searches each with the given simulations, so at
//! "the same simulations" it runs three times as many per Amazons move as
//! plies does.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::{BenchError, Notes, Result};
use crate::arena::{play_match_from, EloEstimate, MatchResult};
use crate::games::{GameKind, GameSupport};
use crate::search::game_player::{player_from_spec_in, PlayerContext};
use crate::search::mcts::{MctsConfig, MctsPlayer};
use crate::search::timed::TimedPlayer;
use crate::search::Player;

/// `GAME[:SIZE]` of a game OpenSpiel has.
#[derive(Clone, Copy, Debug)]
pub struct SpielGame {
    pub game: GameKind,
    /// `None` (or 0): the game's standard size.
    pub size: Option<usize>,
}

impl FromStr for SpielGame {
    type Err = BenchError;
    fn from_str(g: &str) -> Result<Self> {
        let (name, size) = match g.split_once(':') {
            Some((n, s)) => (
                n,
                Some(s.parse::<usize>().map_err(|_| {
                    BenchError::bad_option(
                        format!("--games {g}"),
                        format!("size '{s}' is not a number"),
                    )
                })?),
            ),
            None => (g, None),
        };
        let game: GameKind = name.parse()?;
        if with_game!(game, G => G::SPIEL_NAME.is_none()) {
            return Err(BenchError::bad_option(
                format!("--games {name}"),
                "OpenSpiel does not have it (amazons, gomoku, pentago, tictactoe, connect-four, atari-go)",
            ));
        }
        Ok(SpielGame { game, size })
    }
}

pub struct VsSpielOptions {
    pub games: Vec<SpielGame>,
    /// Simulations per decision of both sides in the first match;
    /// OpenSpiel's time per move at it sets plies' time in the second.
    pub sims: u64,
    /// Games per match (colours alternate).
    pub matches_games: usize,
    /// Extra plies MCTS options, e.g. `threads=2`.
    pub plies_options: String,
    pub seed: u64,
}

#[derive(Serialize)]
pub struct VsSpielRow {
    pub game: String,
    pub size: usize,
    /// The board as reports name it (`9x9`, `7x6`).
    pub board: String,
    pub condition: &'static str,
    pub plies: String,
    pub spiel: String,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub equity: f64,
    pub elo: Option<EloEstimate>,
    pub plies_ms_per_move: f64,
    pub spiel_ms_per_move: f64,
    pub plies_sims_per_move: f64,
    pub games_per_second: f64,
}

pub struct VsSpielReport {
    pub rows: Vec<VsSpielRow>,
}

/// Plays every game of `opts`; each match is announced to `notes`.
pub fn run(opts: &VsSpielOptions, notes: Notes) -> Result<VsSpielReport> {
    let mut rows = Vec::new();
    for g in &opts.games {
        rows.extend(with_game!(g.game, G => one_game::<G>(opts, g.size, &mut *notes)?));
    }
    Ok(VsSpielReport { rows })
}

fn mcts_config(text: String) -> Result<MctsConfig> {
    text.parse().map_err(|e: crate::search::OptionError| {
        BenchError::bad_option("--plies-options", e.to_string())
    })
}

fn one_game<G: GameSupport>(
    opts: &VsSpielOptions,
    size: Option<usize>,
    notes: Notes,
) -> Result<Vec<VsSpielRow>> {
    let size = size.filter(|&s| s > 0).unwrap_or(G::DEFAULT_SIZE);
    G::with_size(size)?;
    let ctx = PlayerContext {
        size,
        ..PlayerContext::default_for::<G>()
    };
    let extra = if opts.plies_options.is_empty() {
        String::new()
    } else {
        format!(",{}", opts.plies_options)
    };
    let spiel_spec = format!("spiel-mcts:sims={},seed={}", opts.sims, opts.seed);
    let spiel: Arc<dyn Player<G>> = player_from_spec_in::<G>(&spiel_spec, &ctx)?;
    let spiel = Arc::new(TimedPlayer::new(spiel));
    let mut play_at = |cfg: String, condition| {
        let cfg = mcts_config(cfg)?;
        play::<G>(opts, size, cfg, &spiel, condition, &mut *notes)
    };
    let first = play_at(format!("sims={}{extra}", opts.sims), "same simulations")?;
    let spiel_s = first.spiel_ms_per_move / 1000.0;
    let second = play_at(format!("time={spiel_s:.6}{extra}"), "same time per move")?;
    let mut rows = vec![first, second];
    if G::SPIEL_ACTIONS > 1 {
        // OpenSpiel searched each of its decisions of a move: give plies
        // as many simulations per move.
        let per_move = format!("sims={}{extra}", opts.sims * G::SPIEL_ACTIONS as u64);
        rows.push(play_at(per_move, "same sims per move")?);
    }
    Ok(rows)
}

fn play<G: GameSupport>(
    opts: &VsSpielOptions,
    size: usize,
    cfg: MctsConfig,
    spiel: &Arc<TimedPlayer<G>>,
    condition: &'static str,
    notes: Notes,
) -> Result<VsSpielRow> {
    // A network (`eval=ckpt:DIR` in the extra options) values the leaves.
    let eval = match &cfg.eval {
        Some(name) => Some(crate::search::evaluators::evaluator_by_name::<G>(
            name,
            size,
            &crate::search::evaluators::EvalContext::default(),
        )?),
        None => None,
    };
    let mcts = Arc::new(MctsPlayer::<G>::new(cfg, eval)?);
    let timed = TimedPlayer::new(mcts.clone() as Arc<dyn Player<G>>);
    let spiel_before = (spiel.moves(), spiel.seconds_per_move());
    notes(&format!(
        "{} {}: {} vs {} ({condition}, {} games)...",
        G::NAME,
        G::board_label(size),
        timed.name(),
        spiel.name(),
        opts.matches_games
    ));
    // One game at a time: each side's thinking time is its own.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let t = Instant::now();
    let r: MatchResult = pool.install(|| {
        play_match_from(
            &timed,
            spiel.as_ref(),
            &|_| {
                G::with_size(size)
                    .map(Into::into)
                    .map_err(crate::games::SupportError::from)
            },
            opts.matches_games,
            opts.seed,
            None,
            None,
        )
    })?;
    let elapsed = t.elapsed().as_secs_f64();
    // The spiel player's time in this match alone.
    let (n0, s0) = spiel_before;
    let n1 = spiel.moves();
    let spiel_ms = if n1 > n0 {
        (spiel.seconds_per_move() * n1 as f64 - s0 * n0 as f64) / (n1 - n0) as f64 * 1000.0
    } else {
        0.0
    };
    Ok(VsSpielRow {
        game: G::NAME.into(),
        size,
        board: G::board_label(size),
        condition,
        plies: r.a.clone(),
        spiel: r.b.clone(),
        games: r.total.games(),
        wins: r.total.wins,
        draws: r.total.draws,
        losses: r.total.losses,
        equity: r.total.equity(),
        elo: r.elo,
        plies_ms_per_move: timed.seconds_per_move() * 1000.0,
        spiel_ms_per_move: spiel_ms,
        plies_sims_per_move: mcts.simulations_per_search(),
        games_per_second: r.total.games() as f64 / elapsed,
    })
}

fn fmt_elo(e: &Option<EloEstimate>) -> String {
    match e {
        Some(e) => format!("{:+.0} [{:+.0}, {:+.0}]", e.elo, e.lo, e.hi),
        None => "-".into(),
    }
}

impl fmt::Display for VsSpielReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<12} {:<19} {:>5} {:>11} {:>7} {:>24} {:>9} {:>9} {:>10} {:>8}",
            "game",
            "condition",
            "games",
            "plies W/D/L",
            "equity",
            "Elo (plies - spiel) 95%",
            "plies ms",
            "spiel ms",
            "plies sims",
            "games/s"
        )?;
        for r in &self.rows {
            writeln!(
                f,
                "{:<12} {:<19} {:>5} {:>11} {:>+7.3} {:>24} {:>9.1} {:>9.1} {:>10.0} {:>8.2}",
                format!("{} {}", r.game, r.board),
                r.condition,
                r.games,
                format!("{}/{}/{}", r.wins, r.draws, r.losses),
                r.equity,
                fmt_elo(&r.elo),
                r.plies_ms_per_move,
                r.spiel_ms_per_move,
                r.plies_sims_per_move,
                r.games_per_second
            )?;
        }
        Ok(())
    }
}

impl VsSpielReport {
    pub fn csv(&self) -> String {
        let mut out = String::from(
            "game,size,condition,plies,spiel,games,wins,draws,losses,equity,elo,elo_lo,elo_hi,plies_ms_per_move,spiel_ms_per_move,plies_sims_per_move,games_per_second\n",
        );
        for r in &self.rows {
            let (e, lo, hi) = r
                .elo
                .map_or((f64::NAN, f64::NAN, f64::NAN), |e| (e.elo, e.lo, e.hi));
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{:.4},{:.1},{:.1},{:.1},{:.2},{:.2},{:.1},{:.3}\n",
                r.game,
                r.size,
                r.condition,
                r.plies,
                r.spiel,
                r.games,
                r.wins,
                r.draws,
                r.losses,
                r.equity,
                e,
                lo,
                hi,
                r.plies_ms_per_move,
                r.spiel_ms_per_move,
                r.plies_sims_per_move,
                r.games_per_second
            ));
        }
        out
    }
}

impl super::report::Report for VsSpielReport {
    /// The rows, pretty-printed.
    fn json(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(&self.rows)
    }
}
