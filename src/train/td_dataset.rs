//! TD(lambda) over the games of a database, for any game: the network, the
//! settings of the published studies as presets, the 0/1 error of the
//! predicted winner on held-out games, and N seeded runs in parallel of
//! which the one with the lowest held-out error is kept (Fugers 2017,
//! table 3: "the simulation in which the network has the lowest error").

use super::{rows_to_td_game, TdConfig, TdGame, TdLearner, TrainError};
use crate::dataset::{Dataset, Split};
use crate::encode::Encoder;
use crate::eval::GroupedMetrics;
use crate::game::Game;
use crate::model::{Activation, MlpConfig, NativeMlp, WeightInit};
use crate::util::{derive_seed, seeded_rng, SeededRng};
use rand::seq::SliceRandom;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// One network's TD(lambda) training: a one-hidden-layer Elliott MLP with
/// a linear output, weights drawn uniformly in `[-init, init]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TdNetConfig {
    pub hidden: usize,
    /// Elliott steepness of the hidden units.
    pub beta: f64,
    pub init: f64,
    pub td: TdConfig,
    /// Games drawn, in shuffled passes, from the training games.
    pub examples: usize,
}

/// The presets by name, the default first.
pub const TD_PRESETS: &[&str] = &["patist-ttt", "fugers-amazons"];

impl TdNetConfig {
    /// A preset: `patist-ttt` (the Tic-tac-toe study's Experiment II:
    /// beta 5, lambda 0.8, lr 0.00105, 160,000 games, 80 hidden) or
    /// `fugers-amazons` (Fugers 2017 table 3: beta 3, lambda 0.9, lr 0.0005,
    /// 200,000 games, 80 hidden of the thesis' 40/80/160).
    pub fn preset(name: &str) -> Option<TdNetConfig> {
        match name {
            "patist-ttt" => Some(TdNetConfig {
                hidden: 80,
                beta: 5.0,
                init: 0.2,
                td: TdConfig {
                    lambda: 0.8,
                    lr: 0.00105,
                },
                examples: 160_000,
            }),
            "fugers-amazons" => Some(TdNetConfig {
                hidden: 80,
                beta: 3.0,
                init: 0.2,
                td: TdConfig {
                    lambda: 0.9,
                    lr: 0.0005,
                },
                examples: 200_000,
            }),
            _ => None,
        }
    }

    pub fn mlp(&self, inputs: usize) -> MlpConfig {
        MlpConfig {
            inputs,
            hidden: vec![self.hidden],
            activation: Activation::Elliott { beta: self.beta },
            init: WeightInit::Uniform { a: self.init },
        }
    }
}

/// The seed of run `run` of a training seeded `seed` (run 0 is `seed`
/// itself, so one run is the single-network training).
pub fn run_seed(seed: u64, run: usize) -> u64 {
    if run == 0 {
        seed
    } else {
        derive_seed(seed, 1_000 + run as u64)
    }
}

/// A fresh network and the random stream its training shuffles with.
pub fn fresh_network(
    cfg: &TdNetConfig,
    inputs: usize,
    seed: u64,
) -> Result<(NativeMlp, SeededRng), TrainError> {
    let mut rng = seeded_rng(seed, 0);
    let net = NativeMlp::new(&cfg.mlp(inputs), &mut rng)?;
    Ok((net, rng))
}

/// Trains `net` on `examples` games drawn from `games` (a new shuffled
/// pass each time the games run out); `after` is called after every
/// example with the count so far and the TD mean squared error of that
/// game, and may stop the run by returning an error.
pub fn td_examples<E>(
    net: &mut NativeMlp,
    rng: &mut SeededRng,
    games: &[TdGame],
    td: TdConfig,
    examples: usize,
    mut after: impl FnMut(&NativeMlp, usize, f32) -> Result<(), E>,
) -> Result<(), E> {
    if games.is_empty() {
        return Ok(());
    }
    let mut learner = TdLearner::new(td, net);
    let mut order: Vec<usize> = (0..games.len()).collect();
    for k in 0..examples {
        if k % games.len() == 0 {
            order.shuffle(rng);
        }
        let mse = learner.learn_game(net, &games[order[k % games.len()]]);
        after(net, k + 1, mse)?;
    }
    Ok(())
}

/// The 0/1 error (and the rest of the figures) of `net`'s predicted winner
/// on every position of `games`: the first player's value `> 0` calls a win
/// for the first player. Keys are the position's index in its game (its
/// ply when the game's rows start at ply 0) and the positions to its end.
pub fn td_error(net: &NativeMlp, games: &[TdGame]) -> GroupedMetrics {
    games
        .par_iter()
        .map(|g| {
            let mut m = GroupedMetrics::default();
            let label = (g.result + 1.0) / 2.0;
            let n = g.inputs.len();
            for (i, (x, sign)) in g.inputs.iter().zip(&g.signs).enumerate() {
                let v = sign * net.value(x);
                let p = ((v + 1.0) / 2.0).clamp(0.0, 1.0);
                m.push(p, label, i as u32, (n - i) as u32);
            }
            m
        })
        .reduce(GroupedMetrics::default, |mut a, b| {
            a.merge(&b);
            a
        })
}

/// The games of `split` of `dataset` (every split for `None`), each
/// re-read from its positions' text and encoded with `encoder`, which may
/// differ from the one the dataset was written with.
pub fn td_games<G: Game>(
    dataset: &Dataset,
    split: Option<Split>,
    encoder: &dyn Encoder<G>,
) -> Result<Vec<TdGame>, TrainError> {
    dataset
        .games(split)?
        .par_iter()
        .map(|rows| rows_to_td_game(rows, encoder))
        .collect()
}

/// One of the runs of [`train_td_runs`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TdRunResult {
    pub run: usize,
    pub seed: u64,
    /// 0/1 error on the held-out games (`None` without any).
    pub error: Option<f64>,
    /// Mean squared TD error over the last pass of training.
    pub td_mse: f64,
}

/// `runs` networks trained in parallel from seeds [`run_seed`]`(seed, r)`;
/// returns every run's figures and the network of the run with the lowest
/// held-out error (the first run when there is none to compare on).
pub fn train_td_runs(
    cfg: &TdNetConfig,
    inputs: usize,
    train: &[TdGame],
    held_out: &[TdGame],
    runs: usize,
    seed: u64,
    on_example: &(dyn Fn() + Sync),
) -> Result<(Vec<TdRunResult>, NativeMlp, usize), TrainError> {
    if train.is_empty() {
        return Err(TrainError::Config("no training games".into()));
    }
    if runs == 0 {
        return Err(TrainError::Config("--runs must be at least 1".into()));
    }
    let trained: Vec<Result<(TdRunResult, NativeMlp), TrainError>> = (0..runs)
        .into_par_iter()
        .map(|run| {
            let seed = run_seed(seed, run);
            let (mut net, mut rng) = fresh_network(cfg, inputs, seed)?;
            let (mut sum, mut count) = (0.0f64, 0usize);
            let last_pass = cfg.examples.saturating_sub(train.len());
            td_examples(
                &mut net,
                &mut rng,
                train,
                cfg.td,
                cfg.examples,
                |_, k, mse| -> Result<(), TrainError> {
                    if k > last_pass {
                        sum += mse as f64;
                        count += 1;
                    }
                    on_example();
                    Ok(())
                },
            )?;
            let error = (!held_out.is_empty())
                .then(|| td_error(&net, held_out).overall.summary().error01)
                .flatten();
            let result = TdRunResult {
                run,
                seed,
                error,
                td_mse: if count == 0 { 0.0 } else { sum / count as f64 },
            };
            Ok((result, net))
        })
        .collect();
    let mut results = Vec::with_capacity(runs);
    let mut nets = Vec::with_capacity(runs);
    for t in trained {
        let (r, n) = t?;
        results.push(r);
        nets.push(n);
    }
    let best = results
        .iter()
        .min_by(|a, b| {
            let e = |r: &TdRunResult| r.error.unwrap_or(f64::INFINITY);
            e(a).total_cmp(&e(b)).then(a.run.cmp(&b.run))
        })
        .map(|r| r.run)
        .unwrap_or(0);
    let net = nets.swap_remove(best);
    Ok((results, net, best))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::SplitRule;
    use crate::game::{Amazons, Outcome, Side};
    use crate::games::GameSupport;
    use crate::positions::{build_dataset, BuildOptions, Terminations};
    use crate::record::{GameRecord, PerSide};
    use crate::util::scratch;
    use std::sync::Arc;

    /// Random 6x6 games with their states; every third one is cut after
    /// eight plies and given to the first player, as an adjudicated game.
    fn games() -> Vec<(GameRecord, Vec<Amazons>)> {
        let mut rng = seeded_rng(7, 0);
        let mut buf = Vec::new();
        (0..24)
            .map(|i| {
                let mut g = Amazons::with_size(6).unwrap();
                let mut states = vec![g];
                let mut moves = Vec::new();
                let cut = i % 3 == 0;
                while g.outcome().is_none() && !(cut && moves.len() == 8) {
                    let mv = g.exploration_move(&mut rng, &mut buf).unwrap();
                    moves.push(g.move_to_string(mv));
                    g.play(mv);
                    states.push(g);
                }
                let (result, termination) = match g.outcome() {
                    Some(Outcome::Win(w)) => (w, g.termination_name().to_string()),
                    _ => (Side::First, "adjudicated".to_string()),
                };
                let rec = GameRecord {
                    game: Amazons::NAME.into(),
                    id: format!("g{i:03}"),
                    source: "test".into(),
                    event: String::new(),
                    players: PerSide::new("random".into(), "random".into()),
                    ratings: PerSide::new(None, None),
                    player_types: None,
                    setups: Vec::new(),
                    plies: moves.len() as u32,
                    moves,
                    result: Some(result),
                    termination,
                    rated: None,
                    start_time: None,
                    board_size: Some(6),
                    explored: Vec::new(),
                };
                (rec, states)
            })
            .collect()
    }

    fn database(games: &[(GameRecord, Vec<Amazons>)]) -> (tempfile::TempDir, Dataset) {
        let (tmp, dir) = scratch("td-dataset");
        std::fs::create_dir_all(&dir).unwrap();
        let records = dir.join("games.jsonl");
        let text: String = games
            .iter()
            .map(|(r, _)| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        std::fs::write(&records, text).unwrap();
        let mut options = BuildOptions::new::<Amazons>();
        options.filters.terminations = Terminations::All;
        options.split = SplitRule::new(0.0, 0.25).unwrap();
        options.strict = true;
        let enc: Arc<dyn Encoder<Amazons>> =
            Arc::from(Amazons::encoder("amazons-bits", 6).unwrap());
        build_dataset::<Amazons>(&[records], &dir.join("ds"), enc, 6, &options, None).unwrap();
        let ds = Dataset::open(dir.join("ds")).unwrap();
        (tmp, ds)
    }

    fn settings() -> TdNetConfig {
        TdNetConfig {
            hidden: 8,
            examples: 40,
            ..TdNetConfig::preset("fugers-amazons").unwrap()
        }
    }

    #[test]
    fn td_from_a_dataset_equals_the_per_game_learner() {
        let played = games();
        let (_tmp, ds) = database(&played);
        // Another encoder than the dataset's: positions are re-encoded.
        let enc = Amazons::encoder("amazons-mobility", 6).unwrap();
        let from_dataset = td_games(&ds, Some(Split::Train), enc.as_ref()).unwrap();
        let ids: Vec<String> = ds
            .games(Some(Split::Train))
            .unwrap()
            .iter()
            .map(|g| g[0].game_id.clone())
            .collect();
        assert!(ids.len() >= 12, "{} train games", ids.len());
        let adjudicated = ids.iter().filter(|id| {
            played
                .iter()
                .any(|(r, _)| &r.id == *id && r.termination == "adjudicated")
        });
        assert!(
            adjudicated.count() > 0,
            "no adjudicated game in the train split"
        );
        // The per-game learner on the games as played, in the same order.
        let per_game: Vec<TdGame> = ids
            .iter()
            .map(|id| {
                let (rec, states) = played.iter().find(|(r, _)| &r.id == id).unwrap();
                if rec.termination == "adjudicated" {
                    TdGame::from_decided(states, 1.0, enc.as_ref())
                } else {
                    TdGame::from_states(states, enc.as_ref()).unwrap()
                }
            })
            .collect();
        assert_eq!(from_dataset.len(), per_game.len());
        for (a, b) in from_dataset.iter().zip(&per_game) {
            assert_eq!(a.inputs, b.inputs);
            assert_eq!(a.signs, b.signs);
            assert_eq!(a.result, b.result);
        }
        let cfg = settings();
        let inputs = enc.plane_len() + enc.spec().globals;
        let (_, from_data, best) =
            train_td_runs(&cfg, inputs, &from_dataset, &[], 1, 5, &|| {}).unwrap();
        assert_eq!(best, 0);
        let mut rng = seeded_rng(5, 0);
        let mut net = NativeMlp::new(&cfg.mlp(inputs), &mut rng).unwrap();
        let mut learner = TdLearner::new(cfg.td, &net);
        let mut order: Vec<usize> = (0..per_game.len()).collect();
        for k in 0..cfg.examples {
            if k % per_game.len() == 0 {
                order.shuffle(&mut rng);
            }
            learner.learn_game(&mut net, &per_game[order[k % per_game.len()]]);
        }
        let fresh = fresh_network(&cfg, inputs, 5).unwrap().0;
        assert_ne!(fresh.params(), net.params(), "training changed nothing");
        assert_eq!(from_data.params(), net.params());
    }

    #[test]
    fn the_run_with_the_lowest_held_out_error_is_kept() {
        let played = games();
        let (_tmp, ds) = database(&played);
        let enc = Amazons::encoder("amazons-units", 6).unwrap();
        let train = td_games(&ds, Some(Split::Train), enc.as_ref()).unwrap();
        let test = td_games(&ds, Some(Split::Test), enc.as_ref()).unwrap();
        assert!(!test.is_empty());
        let inputs = enc.plane_len() + enc.spec().globals;
        let (runs, net, best) =
            train_td_runs(&settings(), inputs, &train, &test, 4, 3, &|| {}).unwrap();
        assert_eq!(runs.len(), 4);
        let errors: Vec<f64> = runs.iter().map(|r| r.error.unwrap()).collect();
        let lowest = errors.iter().cloned().fold(f64::INFINITY, f64::min);
        assert_eq!(errors[best], lowest);
        assert_eq!(
            td_error(&net, &test).overall.summary().error01,
            Some(lowest)
        );
        // Runs are seeded apart: their networks differ.
        assert_ne!(runs[0].seed, runs[1].seed);
        let seeds: Vec<u64> = runs.iter().map(|r| r.seed).collect();
        assert_eq!(seeds[0], 3);
    }
}
