//! `plies tune`: the weights of a weighted hand evaluator
//! ([`crate::infer::hand::FeatureSet`]: Pentago's `pentago-features`,
//! Gomoku's `gomoku-features`) tuned by play between two players on it:
//! 1-ply greedy ones (the paper's), or threat players (Gomoku).
//!
//! | file | what |
//! | --- | --- |
//! | `perturb.rs` | the paper's method: current weights against a perturbed copy, the winner's become current |
//! | `spsa.rs` | SPSA on the match score: `w + c Δ` against `w - c Δ`, a step along Δ by the result |
//! | `duel.rs` | the games between two weight vectors (greedy or threat players, colours alternating, random openings) |
//! | `run_state.rs` | the run's state after every iteration (resume), the progress rows, CSV and plot |
//!
//! Iteration `k` draws everything from stream `k` of the seed, and the
//! state is saved after each iteration, so a run stopped and started again
//! ends with the weights of a run never stopped. Every `eval_every`
//! iterations the current weights play the starting ones (the progress
//! curve) and `weights.json` is rewritten (and at the end of each
//! invocation).

mod duel;
mod perturb;
mod run_state;
mod spsa;

pub use duel::{duel, greedy_with};
pub use run_state::{ProgressRow, TuneState};
pub use spsa::SpsaGains;

use crate::arena::ArenaError;
use crate::game::Side;
use crate::games::GameSupport;
use crate::infer::hand::{FeatureSet, WeightsError, WeightsFile};
use crate::report::ReportError;
use crate::util::run_dir::{RunDir, RunDirError};
use crate::util::{derive_seed, seeded_rng};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// How the weights move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TuneMethod {
    /// The paper's: a perturbed copy replaces the current weights when it
    /// wins.
    Perturb,
    /// Simultaneous perturbation stochastic approximation.
    Spsa,
}

impl std::fmt::Display for TuneMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TuneMethod::Perturb => "perturb",
            TuneMethod::Spsa => "spsa",
        })
    }
}

/// The player both weight vectors play in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TunePlayer {
    /// One ply deep: the move whose position the evaluator likes best (the
    /// paper's feature player).
    #[default]
    Greedy,
    /// The `threats` player: wins, blocks and forced wins by fours first,
    /// then the evaluator among the moves that leave the opponent none
    /// (Gomoku, Tic-tac-toe).
    Threats,
}

impl std::fmt::Display for TunePlayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TunePlayer::Greedy => "greedy",
            TunePlayer::Threats => "threats",
        })
    }
}

/// A tuning run's settings (all but `iterations` must match on resume).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneConfig {
    /// The weighted evaluator (`pentago-features`).
    pub eval: String,
    pub method: TuneMethod,
    /// The player the weights are tuned in (runs saved before it existed
    /// read as greedy).
    #[serde(default)]
    pub player: TunePlayer,
    pub iterations: usize,
    /// Games per iteration (colours alternate).
    pub games: usize,
    /// Perturbation size in weight scales: the paper's deviation, SPSA's `c`.
    pub sigma: f64,
    /// SPSA's step size `a` (default: a first step of `sigma / 2` scales).
    pub spsa_a: Option<f64>,
    /// Random plies at the start of every game.
    pub random_opening: usize,
    /// Measure against the starting weights every this many iterations.
    pub eval_every: usize,
    /// Games of each measurement.
    pub eval_games: usize,
    pub seed: u64,
    /// Starting weights (a weights file); default the hand-set ones.
    pub start: Option<PathBuf>,
}

impl TuneConfig {
    /// The defaults for `eval`.
    pub fn new(eval: &str, method: TuneMethod) -> Self {
        TuneConfig {
            eval: eval.into(),
            method,
            player: TunePlayer::Greedy,
            iterations: match method {
                TuneMethod::Perturb => 1000,
                TuneMethod::Spsa => 300,
            },
            games: match method {
                TuneMethod::Perturb => 2,
                TuneMethod::Spsa => 8,
            },
            sigma: 0.2,
            spsa_a: None,
            random_opening: 4,
            eval_every: 50,
            eval_games: 200,
            seed: 1,
            start: None,
        }
    }

    fn gains(&self) -> SpsaGains {
        let mut g = SpsaGains::for_perturbation(self.sigma);
        if let Some(a) = self.spsa_a {
            g.a = a;
        }
        g
    }
}

#[derive(Debug, Error)]
pub enum TuneError {
    #[error("{game} has no weighted evaluator '{name}'; expected one of: {known}")]
    UnknownEval {
        game: &'static str,
        name: String,
        known: String,
    },
    #[error("--{option} {value}: {expected}")]
    Option {
        option: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("{path}: cannot resume: {field} was {found}, this run asks for {expected}; use another --out")]
    Resume {
        path: PathBuf,
        field: String,
        found: String,
        expected: String,
    },
    #[error("{path}: {why}")]
    State { path: PathBuf, why: String },
    #[error(transparent)]
    Arena(#[from] ArenaError),
    #[error(transparent)]
    Weights(#[from] WeightsError),
    #[error(transparent)]
    Report(#[from] ReportError),
    /// Another writer holds the output directory.
    #[error(transparent)]
    RunDir(#[from] RunDirError),
}

/// What a finished run returns.
#[derive(Clone, Debug, Serialize)]
pub struct TuneReport {
    pub config: TuneConfig,
    pub game: String,
    pub iterations_done: usize,
    /// Iterations this invocation ran (0 when the state was already done).
    pub iterations_run: usize,
    pub weights: Vec<f32>,
    pub progress: Vec<ProgressRow>,
    pub weights_file: PathBuf,
}

/// The weight scales: a perturbation of 1 moves each weight by its own
/// size, and weights near 0 by 0.1.
fn scales(start: &[f32]) -> Vec<f32> {
    start.iter().map(|w| w.abs().max(0.1)).collect()
}

fn check(cfg: &TuneConfig) -> Result<(), TuneError> {
    let bad = |option, value: String, expected| {
        Err(TuneError::Option {
            option,
            value,
            expected,
        })
    };
    if cfg.games == 0 || cfg.games % 2 == 1 {
        return bad(
            "games",
            cfg.games.to_string(),
            "expected an even number of games (colours alternate)",
        );
    }
    if !(cfg.sigma > 0.0 && cfg.sigma.is_finite()) {
        return bad("sigma", cfg.sigma.to_string(), "expected a positive number");
    }
    if cfg.eval_every == 0 {
        return bad("eval-every", "0".into(), "expected at least 1");
    }
    if cfg.spsa_a.is_some_and(|a| !(a > 0.0 && a.is_finite())) {
        return bad(
            "spsa-a",
            format!("{:?}", cfg.spsa_a),
            "expected a positive number",
        );
    }
    Ok(())
}

/// Refuses the threat player for a game whose winning point is not the
/// point that blocks it.
fn check_player<G: GameSupport>(cfg: &TuneConfig) -> Result<(), TuneError> {
    if cfg.player == TunePlayer::Threats && G::new().immediate_wins(Side::First).is_none() {
        return Err(TuneError::Option {
            option: "player",
            value: format!("threats (for {})", G::NAME),
            expected: "threats plays gomoku and tictactoe; expected greedy",
        });
    }
    Ok(())
}

/// The feature set `cfg.eval` names for `G`.
pub fn feature_set_of<G: GameSupport>(name: &str) -> Result<FeatureSet<G>, TuneError> {
    G::feature_set(name).ok_or_else(|| TuneError::UnknownEval {
        game: G::NAME,
        name: name.into(),
        known: if G::FEATURE_SETS.is_empty() {
            "none (this game has no weighted evaluator)".into()
        } else {
            G::FEATURE_SETS.join(", ")
        },
    })
}

/// Runs (or resumes) a tuning run in `out`: `tune-state.json` after every
/// iteration, `weights.json`, `progress.csv` and `progress.png|svg` at each
/// measurement and at the end. `on_iteration` is told each finished
/// iteration (progress bars).
pub fn tune<G: GameSupport>(
    cfg: &TuneConfig,
    out: &Path,
    on_iteration: &dyn Fn(usize),
) -> Result<TuneReport, TuneError> {
    check(cfg)?;
    check_player::<G>(cfg)?;
    let set = feature_set_of::<G>(&cfg.eval)?;
    std::fs::create_dir_all(out).map_err(|e| TuneError::State {
        path: out.to_path_buf(),
        why: format!("cannot create the directory: {e}"),
    })?;
    let _run_dir = RunDir::claim(out)?;
    let start_weights = match &cfg.start {
        Some(path) => WeightsFile::load(path, G::NAME, &set)?.weights().to_vec(),
        None => (set.default_weights)(),
    };
    let scales = scales(&start_weights);
    let mut state = TuneState::resume_or_new(out, cfg, G::NAME, &start_weights)?;
    let first = state.iteration;
    let gains = cfg.gains();
    if state.progress.is_empty() {
        let row = measure::<G>(cfg, set, &state, &start_weights)?;
        state.progress.push(row);
    }
    while state.iteration < cfg.iterations {
        let k = state.iteration;
        let mut rng = seeded_rng(cfg.seed, k as u64);
        let games_seed = derive_seed(cfg.seed, k as u64);
        let before = state.weights.clone();
        match cfg.method {
            TuneMethod::Perturb => {
                let challenger = perturb::perturbed(&state.weights, &scales, cfg.sigma, &mut rng);
                let r = duel(
                    cfg.player,
                    set,
                    &challenger,
                    &state.weights,
                    cfg.games,
                    cfg.random_opening,
                    games_seed,
                )?;
                if perturb::challenger_wins(r.a_points(), r.total.games()) {
                    state.weights = challenger;
                    state.accepted += 1;
                }
            }
            TuneMethod::Spsa => {
                let delta = spsa::signs(state.weights.len(), &mut rng);
                let (ak, ck) = gains.at(k);
                let [plus, minus] = spsa::sides(&state.weights, &scales, &delta, ck);
                let r = duel(
                    cfg.player,
                    set,
                    &plus,
                    &minus,
                    cfg.games,
                    cfg.random_opening,
                    games_seed,
                )?;
                state.weights =
                    spsa::step(&state.weights, &scales, &delta, r.total.score(), ak, ck);
                state.accepted += 1;
            }
        }
        state.games += cfg.games as u64;
        state.moved += before
            .iter()
            .zip(&state.weights)
            .zip(&scales)
            .map(|((a, b), s)| ((b - a) / s).powi(2) as f64)
            .sum::<f64>()
            .sqrt();
        state.iteration += 1;
        // Only at multiples, so a run stopped early and resumed measures
        // where an uninterrupted one does.
        if state.iteration % cfg.eval_every == 0 {
            let row = measure::<G>(cfg, set, &state, &start_weights)?;
            state.progress.push(row);
            state.write_outputs::<G>(out, cfg, set)?;
        }
        state.save(out)?;
        on_iteration(state.iteration);
    }
    state.save(out)?;
    state.write_outputs::<G>(out, cfg, set)?;
    Ok(TuneReport {
        config: cfg.clone(),
        game: G::NAME.into(),
        iterations_done: state.iteration,
        iterations_run: state.iteration - first,
        weights: state.weights.clone(),
        progress: state.progress.clone(),
        weights_file: out.join("weights.json"),
    })
}

/// The current weights against the starting ones: one progress row.
fn measure<G: GameSupport>(
    cfg: &TuneConfig,
    set: FeatureSet<G>,
    state: &TuneState,
    start: &[f32],
) -> Result<ProgressRow, TuneError> {
    let seed = derive_seed(cfg.seed ^ 0x6d65_6173_7572_6500, state.iteration as u64);
    let r = duel(
        cfg.player,
        set,
        &state.weights,
        start,
        cfg.eval_games,
        cfg.random_opening,
        seed,
    )?;
    let (lo, hi) = r.total.score_interval();
    Ok(ProgressRow {
        iteration: state.iteration,
        games: state.games,
        accepted: state.accepted,
        path_length: state.moved,
        score_vs_start: r.total.score(),
        score_lo: lo,
        score_hi: hi,
        wins: r.total.wins,
        draws: r.total.draws,
        losses: r.total.losses,
    })
}

#[cfg(test)]
mod tests;
