//! `plies coevolve`: host-parasite competitive coevolution (Rosin & Belew,
//! 1997) with the three enhancements Schaul & Schmidhuber use: shared
//! fitness, shared sampling and a hall of fame.
//!
//! Two populations of networks, each with self-adaptive step sizes. Every
//! generation each population in turn is the hosts: every host plays
//! `games` games (starts alternating) against each of `sample` parasites
//! of the other population, picked by shared sampling, and `hall` members
//! of the other population's hall of fame, drawn at random.
//!
//! - *Shared fitness*: a host earns `1 / N_o` for each opponent `o` it
//!   beats (mean score above 0), `N_o` being the number of hosts that beat
//!   `o`: beating an opponent few others beat is worth more. Ties are
//!   broken by the host's mean score (added with weight 1/1000).
//! - *Shared sampling*: the parasites are picked one by one, each time the
//!   one whose wins of the last generation (the hosts it beat, by id) are
//!   least covered by those already picked (`sum over beaten k of
//!   1 / (1 + picked parasites that beat k)`), ties in a seeded random order.
//! - *Hall of fame*: each generation's best host of each population is kept
//!   for ever, and later hosts must beat a sample of it too.
//!
//! The best `mu` hosts of each population survive (with what they beat, for
//! shared sampling); the others are replaced by their mutated children.
//! The first population's best host is measured each generation against a
//! fixed opponent (`monitor`, naive by default): that score is the
//! learning curve, and its best network the `best/` checkpoint.

use super::fitness::{game_stream, score_game, scores_against, NetworkPlay};
use super::run::{
    check_same_run, initial_weights, read_state, save_best_and_final, write_curve, Evolved,
    STATE_FILE,
};
use super::{EvolveError, Individual};
use crate::games::GameSupport;
use crate::model::ModelConfig;
use crate::report::{write_json, Table};
use crate::search::evaluators::EvalContext;
use crate::search::game_player::{player_from_spec_in, PlayerContext};
use crate::search::Player;
use crate::util::run_dir::RunDir;
use crate::util::{seeded_rng, SeededRng};
use rand::seq::SliceRandom;
use rand::RngExt;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoevolveConfig {
    pub game: String,
    pub size: usize,
    pub encoder: String,
    pub model: ModelConfig,
    /// Networks in each population.
    pub population: usize,
    /// Survivors of each population a generation.
    pub mu: usize,
    /// Parasites each host meets (shared sampling).
    pub sample: usize,
    /// Hall-of-fame members each host meets.
    pub hall: usize,
    /// Games per pairing, starts alternating.
    pub games: usize,
    pub sigma: f64,
    pub temperature: f64,
    /// The fixed opponent the champion is measured against.
    pub monitor: String,
    pub monitor_games: usize,
    pub seed: u64,
    #[serde(skip)]
    pub generations: u64,
    #[serde(skip)]
    pub out: PathBuf,
}

/// A network with a name that outlives generations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Member {
    pub id: u64,
    pub net: Individual,
    /// The ids of the hosts of the other population it beat when it last
    /// was a host.
    pub beat: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HallEntry {
    pub id: u64,
    pub weights: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoevolveRecord {
    pub generation: u64,
    /// Best and mean shared fitness of the first population.
    pub best: f64,
    pub mean: f64,
    /// The champion's mean step size.
    pub step: f64,
    /// The first population's best host against the monitor opponent.
    pub monitor_score: f64,
    pub games: u64,
    pub seconds: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoevolveState {
    pub config: CoevolveConfig,
    pub generation: u64,
    pub next_id: u64,
    pub populations: [Vec<Member>; 2],
    pub halls: [Vec<HallEntry>; 2],
    /// The best monitor score so far, its generation and weights.
    pub champion: Option<(f64, u64, Vec<f64>)>,
    pub history: Vec<CoevolveRecord>,
}

impl CoevolveConfig {
    fn check(&self) -> Result<(), EvolveError> {
        if self.population < 2 {
            return Err(EvolveError::option("population", "must be at least 2"));
        }
        if self.mu == 0 || self.mu >= self.population {
            return Err(EvolveError::option(
                "mu",
                format!("must be in 1..{}", self.population),
            ));
        }
        if self.sample == 0 || self.games == 0 {
            return Err(EvolveError::option(
                "sample",
                "sample and games must be at least 1",
            ));
        }
        if !(self.sigma.is_finite() && self.sigma > 0.0) {
            return Err(EvolveError::option("sigma", "must be a number > 0"));
        }
        if !self.model.has_policy() {
            return Err(EvolveError::option(
                "model",
                format!(
                    "a {} has no per-point outputs to play by",
                    self.model.kind()
                ),
            ));
        }
        Ok(())
    }

    fn play(&self) -> NetworkPlay {
        NetworkPlay {
            model: self.model.clone(),
            encoder: self.encoder.clone(),
            size: self.size,
            temperature: self.temperature,
        }
    }
}

/// Picks `n` of `parasites` by shared sampling (see the module docs).
fn shared_sample(parasites: &[Member], n: usize, rng: &mut SeededRng) -> Vec<usize> {
    let mut order: Vec<usize> = (0..parasites.len()).collect();
    order.shuffle(rng);
    let mut picked: Vec<usize> = Vec::new();
    let mut covered: std::collections::HashMap<u64, usize> = Default::default();
    while picked.len() < n.min(parasites.len()) {
        let worth = |j: usize| -> f64 {
            parasites[j]
                .beat
                .iter()
                .map(|k| 1.0 / (1.0 + *covered.get(k).unwrap_or(&0) as f64))
                .sum()
        };
        let best = order.iter().copied().filter(|j| !picked.contains(j)).fold(
            None::<(usize, f64)>,
            |acc, j| {
                let w = worth(j);
                match acc {
                    Some((_, bw)) if bw >= w => acc,
                    _ => Some((j, w)),
                }
            },
        );
        let Some((j, _)) = best else { break };
        for k in &parasites[j].beat {
            *covered.entry(*k).or_insert(0) += 1;
        }
        picked.push(j);
    }
    picked
}

/// Shared fitness of hosts from their mean scores `scores[h][o]`.
fn shared_fitness(scores: &[Vec<f64>]) -> Vec<f64> {
    let opponents = scores.first().map_or(0, |r| r.len());
    let beaten_by: Vec<usize> = (0..opponents)
        .map(|o| scores.iter().filter(|row| row[o] > 0.0).count())
        .collect();
    scores
        .iter()
        .map(|row| {
            let shared: f64 = row
                .iter()
                .zip(&beaten_by)
                .filter(|(s, _)| **s > 0.0)
                .map(|(_, &n)| 1.0 / n as f64)
                .sum();
            let mean = row.iter().sum::<f64>() / row.len().max(1) as f64;
            shared + mean / 1000.0
        })
        .collect()
}

/// What one population's round as hosts gives: each host's shared fitness
/// and the ids of the opponents it beat.
struct HostRound {
    fitness: Vec<f64>,
    beat: Vec<Vec<u64>>,
    games: u64,
}

fn host_round<G: GameSupport>(
    cfg: &CoevolveConfig,
    play: &NetworkPlay,
    hosts: &[Member],
    opponents: &[(u64, Vec<f64>)],
    key: &[u64],
) -> Result<HostRound, EvolveError> {
    let host_players = hosts
        .iter()
        .map(|m| play.player::<G>(&m.net.x, &format!("host{}", m.id)))
        .collect::<Result<Vec<_>, _>>()?;
    let opponent_players = opponents
        .iter()
        .map(|(id, w)| play.player::<G>(w, &format!("opponent{id}")))
        .collect::<Result<Vec<_>, _>>()?;
    let jobs: Vec<(usize, usize, usize)> = (0..hosts.len())
        .flat_map(|h| {
            (0..opponents.len()).flat_map(move |o| (0..cfg.games).map(move |i| (h, o, i)))
        })
        .collect();
    let results = jobs
        .par_iter()
        .map(|&(h, o, i)| {
            let mut path = key.to_vec();
            path.extend([h as u64, o as u64, i as u64]);
            score_game(
                host_players[h].as_ref(),
                opponent_players[o].as_ref(),
                i % 2 == 0,
                cfg.size,
                cfg.seed,
                game_stream(&path),
            )
        })
        .collect::<Result<Vec<f64>, EvolveError>>()?;
    let per_pair: Vec<f64> = results
        .chunks(cfg.games)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    let scores: Vec<Vec<f64>> = per_pair
        .chunks(opponents.len().max(1))
        .map(|c| c.to_vec())
        .collect();
    let beat = scores
        .iter()
        .map(|row| {
            row.iter()
                .zip(opponents)
                .filter(|(s, _)| **s > 0.0)
                .map(|(_, (id, _))| *id)
                .collect()
        })
        .collect();
    Ok(HostRound {
        fitness: shared_fitness(&scores),
        beat,
        games: jobs.len() as u64,
    })
}

/// Indices from the best fitness down, ties by index.
fn by_fitness(f: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..f.len()).collect();
    order.sort_by(|&a, &b| f[b].total_cmp(&f[a]).then(a.cmp(&b)));
    order
}

#[derive(Clone, Debug, Serialize)]
pub struct CoevolveReport {
    pub state: CoevolveState,
    pub best_dir: PathBuf,
    pub final_dir: PathBuf,
}

/// Runs (or resumes) `cfg` up to `cfg.generations`.
pub fn run_coevolve<G: GameSupport>(
    cfg: &CoevolveConfig,
    progress: bool,
) -> Result<CoevolveReport, EvolveError> {
    cfg.check()?;
    std::fs::create_dir_all(&cfg.out).map_err(|e| EvolveError::State {
        path: cfg.out.clone(),
        why: e.to_string(),
    })?;
    let _run_dir = RunDir::claim(&cfg.out)?;
    let ctx = PlayerContext {
        size: cfg.size,
        eval: EvalContext::default(),
    };
    let monitor: Arc<dyn Player<G>> = player_from_spec_in::<G>(&cfg.monitor, &ctx)?;
    let play = cfg.play();
    let mut state = match read_state::<CoevolveState>(&cfg.out)? {
        Some(saved) => {
            check_same_run(&cfg.out, &saved.config, cfg)?;
            saved
        }
        None => {
            let mut id = 0;
            let mut population = |side: u64| -> Result<Vec<Member>, EvolveError> {
                (0..cfg.population)
                    .map(|i| {
                        let x = initial_weights(
                            &cfg.model,
                            crate::util::derive_seed(cfg.seed, side * 1_000_003 + i as u64),
                        )?;
                        id += 1;
                        Ok(Member {
                            id,
                            net: Individual {
                                sigmas: vec![cfg.sigma; x.len()],
                                x,
                            },
                            beat: Vec::new(),
                        })
                    })
                    .collect()
            };
            let first = population(0)?;
            let second = population(1)?;
            CoevolveState {
                config: CoevolveConfig {
                    generations: 0,
                    out: PathBuf::new(),
                    ..cfg.clone()
                },
                generation: 0,
                next_id: id + 1,
                populations: [first, second],
                halls: [Vec::new(), Vec::new()],
                champion: None,
                history: Vec::new(),
            }
        }
    };
    let resumed_seconds = state.history.last().map_or(0.0, |r| r.seconds);
    let started = Instant::now();
    while state.generation < cfg.generations {
        let g = state.generation;
        let mut games = state.history.last().map_or(0, |r| r.games);
        let mut rounds = Vec::new();
        for side in 0..2 {
            let mut rng = seeded_rng(cfg.seed, game_stream(&[g, side as u64, 0]));
            let other = &state.populations[1 - side];
            let mut opponents: Vec<(u64, Vec<f64>)> = shared_sample(other, cfg.sample, &mut rng)
                .into_iter()
                .map(|j| (other[j].id, other[j].net.x.clone()))
                .collect();
            let hall = &state.halls[1 - side];
            for _ in 0..cfg.hall.min(hall.len()) {
                let e = &hall[rng.random_range(0..hall.len())];
                opponents.push((e.id, e.weights.clone()));
            }
            let round = host_round::<G>(
                cfg,
                &play,
                &state.populations[side],
                &opponents,
                &[g, side as u64, 1],
            )?;
            games += round.games;
            rounds.push(round);
        }
        // Selection and reproduction, then the halls.
        let mut champion_step = 0.0;
        let mut champion_x = Vec::new();
        let (mut best, mut mean) = (0.0, 0.0);
        for (side, round) in rounds.into_iter().enumerate() {
            let order = by_fitness(&round.fitness);
            let population = &mut state.populations[side];
            for (h, beat) in round.beat.into_iter().enumerate() {
                population[h].beat = beat;
            }
            let top = population[order[0]].clone();
            if side == 0 {
                best = round.fitness[order[0]];
                mean = round.fitness.iter().sum::<f64>() / round.fitness.len() as f64;
                champion_step =
                    top.net.sigmas.iter().sum::<f64>() / top.net.sigmas.len().max(1) as f64;
                champion_x = top.net.x.clone();
            }
            state.halls[side].push(HallEntry {
                id: top.id,
                weights: top.net.x.clone(),
            });
            let survivors: Vec<Member> = order[..cfg.mu]
                .iter()
                .map(|&i| population[i].clone())
                .collect();
            let mut rng = seeded_rng(cfg.seed, game_stream(&[g, side as u64, 2]));
            let mut next = survivors.clone();
            for k in 0..cfg.population - cfg.mu {
                next.push(Member {
                    id: state.next_id,
                    net: survivors[k % cfg.mu].net.mutate(&mut rng),
                    beat: Vec::new(),
                });
                state.next_id += 1;
            }
            *population = next;
        }
        let champion_player = play.player::<G>(&champion_x, "champion")?;
        let monitor_score = if cfg.monitor_games > 0 {
            scores_against(
                &[champion_player],
                &monitor,
                cfg.monitor_games,
                cfg.size,
                cfg.seed,
                &[g, 3],
            )?[0]
        } else {
            0.0
        };
        games += cfg.monitor_games as u64;
        if state.champion.as_ref().is_none_or(|c| monitor_score > c.0) {
            state.champion = Some((monitor_score, g, champion_x.clone()));
        }
        state.generation += 1;
        state.history.push(CoevolveRecord {
            generation: g,
            best,
            mean,
            step: champion_step,
            monitor_score,
            games,
            seconds: resumed_seconds + started.elapsed().as_secs_f64(),
        });
        // Outputs before the state: a kill between the two reruns this
        // generation and rewrites them alike; the other order could leave
        // `final/` a generation behind a state that says it is done.
        write_outputs::<G>(cfg, &play, &state, &champion_x)?;
        write_json(cfg.out.join(STATE_FILE), &state)?;
        if progress {
            eprintln!(
                "generation {g}: shared fitness best {best:.3} mean {mean:.3}, champion vs {} {:.3} ({games} games)",
                cfg.monitor, monitor_score
            );
        }
    }
    Ok(CoevolveReport {
        state,
        best_dir: cfg.out.join("best"),
        final_dir: cfg.out.join("final"),
    })
}

pub fn coevolve_table(history: &[CoevolveRecord]) -> Table {
    let mut t = Table::with_headers([
        "generation",
        "best shared",
        "mean shared",
        "step",
        "champion vs monitor",
        "games",
        "seconds",
    ]);
    for r in history {
        t.push_row([
            r.generation.to_string(),
            format!("{:.4}", r.best),
            format!("{:.4}", r.mean),
            format!("{:.5}", r.step),
            format!("{:.4}", r.monitor_score),
            r.games.to_string(),
            format!("{:.1}", r.seconds),
        ]);
    }
    t
}

fn write_outputs<G: GameSupport>(
    cfg: &CoevolveConfig,
    play: &NetworkPlay,
    state: &CoevolveState,
    current: &[f64],
) -> Result<(), EvolveError> {
    coevolve_table(&state.history).write_csv(cfg.out.join("history.csv"))?;
    write_json(cfg.out.join("history.json"), &state.history)?;
    // The curve: the champion's score against the monitor, and its best so far.
    let mut so_far = f64::NEG_INFINITY;
    let rows: Vec<(f64, f64, f64)> = state
        .history
        .iter()
        .map(|r| {
            so_far = so_far.max(r.monitor_score);
            (r.generation as f64, so_far, r.monitor_score)
        })
        .collect();
    write_curve(
        &cfg.out,
        &format!(
            "{} {}x{}: coevolution, champion against {}",
            cfg.game, cfg.size, cfg.size, cfg.monitor
        ),
        &rows,
        "champion's score (best so far, this generation)",
    )?;
    let evolved = Evolved {
        method: "coevolve".into(),
        seed: cfg.seed,
        hyperparameters: serde_json::to_value(cfg).unwrap_or_default(),
        games: state.history.last().map_or(0, |r| r.games),
        generations: state.generation,
        score_name: "monitor_score",
    };
    let best = state
        .champion
        .as_ref()
        .map(|(score, _, weights)| (weights.as_slice(), *score));
    save_best_and_final::<G>(&cfg.out, play, &evolved, best, current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::AtariGo;
    use crate::model::MdrnnConfig;
    use crate::util::scratch;

    fn tiny(out: PathBuf, generations: u64) -> CoevolveConfig {
        CoevolveConfig {
            game: "atari-go".into(),
            size: 5,
            encoder: "stones-2".into(),
            model: ModelConfig::Mdrnn(MdrnnConfig::stones(5, 3)),
            population: 4,
            mu: 2,
            sample: 2,
            hall: 1,
            games: 2,
            sigma: 0.5,
            temperature: 0.0,
            monitor: "naive".into(),
            monitor_games: 4,
            seed: 3,
            generations,
            out,
        }
    }

    fn replayable(mut s: CoevolveState) -> CoevolveState {
        s.history.iter_mut().for_each(|r| r.seconds = 0.0);
        s
    }

    #[test]
    fn a_resumed_coevolution_ends_as_the_uninterrupted_one() {
        let (_a, whole) = scratch("whole");
        let (_b, parts) = scratch("parts");
        let full = run_coevolve::<AtariGo>(&tiny(whole.clone(), 3), false).unwrap();
        for g in [1, 3] {
            run_coevolve::<AtariGo>(&tiny(parts.clone(), g), false).unwrap();
        }
        let resumed: CoevolveState = read_state(&parts).unwrap().unwrap();
        assert_eq!(replayable(resumed), replayable(full.state.clone()));
        assert_eq!(full.state.halls[0].len(), 3);
        // Generation 2's hosts met generation 1's hall of fame.
        assert!(full.state.history.iter().all(|r| r.games > 0));
        assert!(full.best_dir.join("config.json").exists());
    }

    #[test]
    fn a_coevolution_with_other_options_is_not_resumed() {
        let (_a, out) = scratch("run");
        run_coevolve::<AtariGo>(&tiny(out.clone(), 1), false).unwrap();
        let mut cfg = tiny(out.clone(), 2);
        cfg.sample = 3;
        let e = run_coevolve::<AtariGo>(&cfg, false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("sample was 2, now 3") && e.contains("--out"),
            "{e}"
        );
        let held = RunDir::claim(&out).unwrap();
        let e = run_coevolve::<AtariGo>(&tiny(out.clone(), 2), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("another writer holds it"), "{e}");
        drop(held);
        let r = run_coevolve::<AtariGo>(&tiny(out, 2), false).unwrap();
        assert_eq!(r.state.generation, 2);
    }

    #[test]
    fn shared_fitness_rewards_rare_wins_and_sampling_spreads_over_them() {
        // Host 0 beats opponent 0 (which everyone beats), host 1 beats
        // opponent 1 (which nobody else beats).
        let f = shared_fitness(&[vec![0.5, -0.5], vec![0.5, 0.5], vec![0.5, -0.5]]);
        assert!(f[1] > f[0] && (f[0] - f[2]).abs() < 1e-12, "{f:?}");
        assert!((f[1] - (1.0 / 3.0 + 1.0) - 0.5 / 1000.0).abs() < 1e-12);
        let m = |id, beat: Vec<u64>| Member {
            id,
            net: Individual {
                x: vec![],
                sigmas: vec![],
            },
            beat,
        };
        // 0 and 1 beat the same three hosts, 2 two others: 0 or 1 first
        // (worth 3), then 2 (worth 2, the other's wins now worth 1.5).
        let parasites = [m(1, vec![7, 8, 9]), m(2, vec![7, 8, 9]), m(3, vec![10, 11])];
        let picked = shared_sample(&parasites, 2, &mut seeded_rng(1, 0));
        assert!(picked.contains(&2), "{picked:?}");
    }
}
