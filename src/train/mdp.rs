//! `plies train mdp`: the bucketed MDP learner ([`crate::search::mdp`])
//! learns by self-play, one model per seat: each game both seats move to
//! their best-valued bucket or, with chance epsilon, at random; after the
//! game each seat counts its transitions between afterstate buckets (the
//! last to the winner's bucket) and re-solves its values by value
//! iteration, warm-started from the last ones.
//!
//! Game `g` draws from stream `g` of the seed and the model is saved
//! (atomically) every `save_every` games with the number of games it has
//! learned from, so a run stopped and started again ends with the model
//! of a run never stopped.

use crate::game::{Outcome, Side};
use crate::games::GameSupport;
use crate::search::mdp::{mdp_move, win_bucket, MdpError, MdpModel, MdpSettings};
use crate::search::SearchError;
use crate::util::run_dir::{first_difference, Depth, Difference, RunDir, RunDirError};
use crate::util::seeded_rng;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A training run: the model's settings and the self-play.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MdpTrainConfig {
    pub settings: MdpSettings,
    /// Self-play games in all (a resumed run plays the rest).
    pub games: usize,
    /// The chance of a random move in training.
    pub epsilon: f64,
    pub seed: u64,
    /// Save the model every this many games.
    pub save_every: usize,
}

impl Default for MdpTrainConfig {
    /// The paper's best: 1,500 buckets, 2,000 games, gamma 0.9, tolerance
    /// 0.001, epsilon 0.2, reward +-10.
    fn default() -> Self {
        MdpTrainConfig {
            settings: MdpSettings::default(),
            games: 2000,
            epsilon: 0.2,
            seed: 1,
            save_every: 100,
        }
    }
}

#[derive(Debug, Error)]
pub enum MdpTrainError {
    #[error("the bucketed MDP learner plays games on a grid of stones, not {game}")]
    NoGrid { game: &'static str },
    #[error("--{option} {value}: expected {expected}")]
    Option {
        option: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error(
        "{path}: cannot resume: `{}` was {}, this run asks for {}; use another --out",
        difference.field, difference.saved_text(), difference.given_text()
    )]
    Resume {
        path: PathBuf,
        difference: Box<Difference>,
    },
    #[error(transparent)]
    Model(#[from] MdpError),
    #[error("self-play: {0}")]
    Search(#[from] SearchError),
    /// Another writer holds the model file.
    #[error(transparent)]
    RunDir(Box<RunDirError>),
}

impl From<RunDirError> for MdpTrainError {
    fn from(e: RunDirError) -> Self {
        MdpTrainError::RunDir(Box::new(e))
    }
}

/// What a run did.
#[derive(Clone, Debug, Serialize)]
pub struct MdpTrainReport {
    pub config: MdpTrainConfig,
    pub game: String,
    /// Games the model has learned from.
    pub games_done: u64,
    /// Games this invocation played.
    pub games_run: u64,
    /// This invocation's self-play games won by the first seat, by the
    /// second, and drawn.
    pub first_wins: u64,
    pub second_wins: u64,
    pub draws: u64,
    /// Value-iteration sweeps, on average per game and seat.
    pub mean_sweeps: f64,
    pub model: PathBuf,
}

fn check(cfg: &MdpTrainConfig) -> Result<(), MdpTrainError> {
    let bad = |option, value: String, expected| {
        Err(MdpTrainError::Option {
            option,
            value,
            expected,
        })
    };
    let s = &cfg.settings;
    if s.buckets < 3 {
        return bad(
            "buckets",
            s.buckets.to_string(),
            "at least 3 (two are the wins)",
        );
    }
    if !(0.0..1.0).contains(&s.gamma) {
        return bad("gamma", s.gamma.to_string(), "a discount in [0, 1)");
    }
    if !(s.tolerance > 0.0 && s.tolerance.is_finite()) {
        return bad("tolerance", s.tolerance.to_string(), "a positive number");
    }
    if !(0.0..=1.0).contains(&cfg.epsilon) {
        return bad(
            "epsilon",
            cfg.epsilon.to_string(),
            "a probability in [0, 1]",
        );
    }
    if !(s.prior >= 0.0 && s.prior.is_finite()) {
        return bad("prior", s.prior.to_string(), "0 or more transitions");
    }
    if !(s.reward > 0.0 && s.reward.is_finite()) {
        return bad("reward", s.reward.to_string(), "a positive number");
    }
    if cfg.save_every == 0 {
        return bad("save-every", "0".into(), "at least 1");
    }
    Ok(())
}

/// The model at `path` to go on from, or a new one; refused when it was
/// made with other settings, naming the first that differs.
fn resume_or_new<G: GameSupport>(
    cfg: &MdpTrainConfig,
    path: &Path,
) -> Result<MdpModel, MdpTrainError> {
    if !path.exists() {
        let mut m = MdpModel::new(G::NAME, cfg.settings);
        m.training = training_info(cfg);
        return Ok(m);
    }
    let m = MdpModel::load(path, G::NAME)?;
    // What shapes the model: a run of other values would mix two learners.
    let shape = |settings: &MdpSettings, seed: Option<&serde_json::Value>, epsilon| serde_json::json!({"settings": settings, "seed": seed, "epsilon": epsilon});
    let stored = shape(
        &m.settings,
        m.training.get("seed"),
        m.training.get("epsilon").cloned(),
    );
    let asked = shape(
        &cfg.settings,
        Some(&cfg.seed.into()),
        Some(cfg.epsilon.into()),
    );
    if let Some(difference) = first_difference(&stored, &asked, Depth::Nested) {
        return Err(MdpTrainError::Resume {
            path: path.to_path_buf(),
            difference: Box::new(difference),
        });
    }
    Ok(m)
}

fn training_info(cfg: &MdpTrainConfig) -> serde_json::Value {
    serde_json::json!({
        "made_by": "plies train mdp",
        "seed": cfg.seed,
        "epsilon": cfg.epsilon,
    })
}

/// One self-play game `g` learned into `model`; returns the outcome and
/// the sweeps of both seats' value iteration.
pub fn learn_game<G: GameSupport>(
    model: &mut MdpModel,
    epsilon: f64,
    seed: u64,
    g: u64,
) -> Result<(Option<Outcome>, usize), MdpTrainError> {
    let mut rng = seeded_rng(seed, g);
    let mut codes = Vec::new();
    let mut state = G::new();
    let mut path: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    while state.outcome().is_none() {
        let seat = state.side_to_move().index();
        let (mv, bucket) = mdp_move(model, &state, epsilon, &mut rng, &mut codes)?;
        state.play(mv);
        path[seat].push(bucket);
    }
    let outcome = state.outcome();
    if let Some(Outcome::Win(w)) = outcome {
        let end = win_bucket(w);
        for p in &mut path {
            if p.last() != Some(&end) {
                p.push(end);
            }
        }
    }
    let settings = model.settings;
    let mut sweeps = 0;
    for (seat, side) in [Side::First, Side::Second].into_iter().enumerate() {
        let m = &mut model.seats[seat];
        for pair in path[seat].windows(2) {
            m.count(pair[0], pair[1]);
        }
        let rewards =
            crate::search::mdp::SeatModel::rewards(settings.buckets, side, settings.reward);
        sweeps += m.solve(&rewards, &settings);
    }
    model.games += 1;
    Ok((outcome, sweeps))
}

/// Trains (or goes on training) the model at `path` to `cfg.games` games;
/// `on_game` is told the games done after each one.
pub fn train_mdp<G: GameSupport>(
    cfg: &MdpTrainConfig,
    path: &Path,
    on_game: &dyn Fn(u64),
) -> Result<MdpTrainReport, MdpTrainError> {
    check(cfg)?;
    if !G::new().piece_codes(&mut Vec::new()) {
        return Err(MdpTrainError::NoGrid { game: G::NAME });
    }
    let _claim = RunDir::claim(path)?;
    let mut model = resume_or_new::<G>(cfg, path)?;
    let first = model.games;
    let mut wins = [0u64; 2];
    let mut draws = 0;
    let mut sweeps = 0usize;
    while (model.games as usize) < cfg.games {
        let g = model.games;
        let (outcome, s) = learn_game::<G>(&mut model, cfg.epsilon, cfg.seed, g)?;
        sweeps += s;
        match outcome {
            Some(Outcome::Win(w)) => wins[w.index()] += 1,
            _ => draws += 1,
        }
        if model.games % cfg.save_every as u64 == 0 {
            model.save(path)?;
        }
        on_game(model.games);
    }
    model.save(path)?;
    let run = model.games - first;
    Ok(MdpTrainReport {
        config: *cfg,
        game: G::NAME.into(),
        games_done: model.games,
        games_run: run,
        first_wins: wins[0],
        second_wins: wins[1],
        draws,
        mean_sweeps: sweeps as f64 / (2 * run.max(1)) as f64,
        model: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Pentago;
    use crate::util::scratch;

    fn small(games: usize) -> MdpTrainConfig {
        MdpTrainConfig {
            settings: MdpSettings {
                buckets: 200,
                ..MdpSettings::default()
            },
            games,
            save_every: 7,
            ..MdpTrainConfig::default()
        }
    }

    #[test]
    fn the_same_seed_trains_the_same_model_and_a_resumed_run_too() {
        let (_a, one) = scratch("one.json");
        let (_b, two) = scratch("two.json");
        let (_c, split) = scratch("split.json");
        train_mdp::<Pentago>(&small(30), &one, &|_| {}).unwrap();
        train_mdp::<Pentago>(&small(30), &two, &|_| {}).unwrap();
        let half = train_mdp::<Pentago>(&small(12), &split, &|_| {}).unwrap();
        assert_eq!(half.games_done, 12);
        let rest = train_mdp::<Pentago>(&small(30), &split, &|_| {}).unwrap();
        assert_eq!(rest.games_run, 18);
        let read = |p: &Path| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(&one), read(&two));
        assert_eq!(read(&one), read(&split));
        let m = MdpModel::load(&one, "pentago").unwrap();
        assert_eq!(m.games, 30);
        assert!(m.seats[0].values.iter().any(|&v| v != 0.0));
        let other = MdpTrainConfig {
            seed: 2,
            ..small(31)
        };
        let e = train_mdp::<Pentago>(&other, &one, &|_| {})
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`seed` was 1, this run asks for 2") && e.contains("--out"),
            "{e}"
        );
        let mut coarser = small(31);
        coarser.settings.buckets = 100;
        let e = train_mdp::<Pentago>(&coarser, &one, &|_| {})
            .unwrap_err()
            .to_string();
        assert!(e.contains("`settings.buckets` was 200"), "{e}");
        // While one run holds the model, a second is refused.
        let _held = RunDir::claim(&one).unwrap();
        let e = train_mdp::<Pentago>(&small(31), &one, &|_| {}).unwrap_err();
        assert!(matches!(e, MdpTrainError::RunDir(_)), "{e}");
    }
}
