//! One generation's self-play: games of the current network's MCTS (or,
//! before any network, UCT with random playouts) against itself, written
//! as a dataset whose rows carry the search's root visit shares as policy
//! targets; or, where the loop names another bootstrap player (alpha-beta),
//! that player's games, each target the move it chose.
//!
//! Game `i` draws everything (the search seeds, the Dirichlet noise, the
//! moves drawn at temperature 1) from `seeded_rng(seed, i)`, and each
//! search runs on one thread, so the games, and the dataset's bytes, do not
//! depend on how many games are played at once.

use super::{LoopError, SelfplaySettings};
use crate::dataset::{DatasetSpec, DatasetWriter, EncoderInfo, GameRows, PolicyTarget};
use crate::encode::Encoder;
use crate::game::Game;
use crate::games::GameSupport;
use crate::infer::Evaluator;
use crate::positions::{played_rows, GameHeader};
use crate::search::mcts::{best_move, run_search, Edge, MctsConfig, Node, Rollout, RootNoise};
use crate::search::Player;
use crate::util::{seeded_rng, SeededRng};
use rand::RngExt;
use rayon::prelude::*;
use std::path::Path;
use std::sync::Arc;

/// Who plays a generation's games.
pub enum GenerationPlayer<G: GameSupport> {
    /// MCTS: policy targets are the root's visit shares.
    Search(Searcher<G>),
    /// Any player (a bootstrap alpha-beta): random moves for the first
    /// `temperature_plies` plies, then its choices, each the target.
    Player(Arc<dyn Player<G>>),
}

impl<G: GameSupport> GenerationPlayer<G> {
    /// What plays, for progress bars and the dataset's provenance.
    pub fn describe(&self) -> String {
        match self {
            GenerationPlayer::Search(s) => s.cfg.to_string(),
            GenerationPlayer::Player(p) => p.name(),
        }
    }

    fn evaluator(&self) -> Option<String> {
        match self {
            GenerationPlayer::Search(s) => s.eval.as_ref().map(|e| e.name()),
            GenerationPlayer::Player(_) => None,
        }
    }

    fn play_one(
        &self,
        s: &SelfplaySettings,
        start: G,
        game_id: &str,
        encoder: &dyn Encoder<G>,
        seed: u64,
        index: u64,
    ) -> Result<Option<GameRows>, LoopError> {
        match self {
            GenerationPlayer::Search(searcher) => {
                play_one(searcher, s, start, game_id, encoder, seed, index)
            }
            GenerationPlayer::Player(player) => play_one_by_player(
                player.as_ref(),
                s.temperature_plies,
                start,
                game_id,
                encoder,
                seed,
                index,
            ),
        }
    }
}

/// The search that plays a generation's games.
pub struct Searcher<G: GameSupport> {
    pub cfg: MctsConfig,
    pub eval: Option<Arc<dyn Evaluator<G>>>,
}

impl<G: GameSupport> Searcher<G> {
    /// PUCT with `eval`'s value and policy and root noise, or, without an
    /// evaluator, the bootstrap: UCT with random playouts to the end.
    pub fn new(s: &SelfplaySettings, eval: Option<Arc<dyn Evaluator<G>>>) -> Self {
        let cfg = match &eval {
            Some(_) => MctsConfig {
                simulations: s.sims,
                rollout: Rollout::Plies(0),
                puct: Some(true),
                c: Some(s.c_puct),
                reuse: false,
                root_noise: Some(RootNoise {
                    alpha: s.dirichlet_alpha,
                    fraction: s.dirichlet_fraction,
                }),
                decisive: s.decisive,
                ..MctsConfig::default()
            },
            None => MctsConfig {
                simulations: s.bootstrap_sims,
                rollout: Rollout::ToEnd,
                reuse: false,
                decisive: s.decisive,
                ..MctsConfig::default()
            },
        };
        Searcher { cfg, eval }
    }
}

/// The root's visit shares by policy index (moves sharing an index, as
/// Amazons' moves to one destination, add up); with `prune_forced`, of the
/// visits beyond the fewest any child got (all of them where every child
/// got as many). `None` when a move has no index or nothing was visited.
pub fn visit_target<G: Game>(
    state: &G,
    root: &Node<G::Move>,
    prune_forced: bool,
) -> Option<PolicyTarget> {
    let children = root.children()?;
    let visits = |e: &Edge<G::Move>| e.visits() as u64;
    let raw: u64 = children.iter().map(visits).sum();
    if raw == 0 {
        return None;
    }
    let least = children.iter().map(visits).min().unwrap_or(0);
    // Pruned only where some child got more than the fewest.
    let forced = if prune_forced && raw > least * children.len() as u64 {
        least
    } else {
        0
    };
    let total = raw - forced * children.len() as u64;
    let mut by_point: Vec<(u32, u64)> = Vec::new();
    for e in children {
        let point = state.policy_index(e.mv)? as u32;
        let v = visits(e) - forced;
        match by_point.iter_mut().find(|(p, _)| *p == point) {
            Some((_, n)) => *n += v,
            None => by_point.push((point, v)),
        }
    }
    by_point.retain(|&(_, v)| v > 0);
    by_point.sort_unstable();
    Some(PolicyTarget {
        index: by_point.iter().map(|&(p, _)| p).collect(),
        prob: by_point
            .iter()
            .map(|&(_, v)| (v as f64 / total as f64) as f32)
            .collect(),
    })
}

/// A move drawn in proportion to the root's visits.
fn sample_by_visits<M: Copy>(root: &Node<M>, rng: &mut crate::util::SeededRng) -> Option<M> {
    let children = root.children()?;
    let total: u64 = children.iter().map(|e| e.visits() as u64).sum();
    if total == 0 {
        return None;
    }
    let mut x = rng.random_range(0..total);
    for e in children {
        let v = e.visits() as u64;
        if x < v {
            return Some(e.mv);
        }
        x -= v;
    }
    None
}

/// One game of self-play: its rows, each position's policy target set.
pub fn play_one<G: GameSupport>(
    searcher: &Searcher<G>,
    s: &SelfplaySettings,
    start: G,
    game_id: &str,
    encoder: &dyn Encoder<G>,
    seed: u64,
    index: u64,
) -> Result<Option<GameRows>, LoopError> {
    let mut rng = seeded_rng(seed, index);
    let next = |g: &G, rng: &mut SeededRng| -> Result<_, LoopError> {
        let root = Node::default();
        let search_seed: u64 = rng.random();
        run_search(
            &root,
            g,
            &searcher.cfg,
            searcher.eval.as_deref(),
            search_seed,
            None,
        )?;
        let mv = if g.ply() < s.temperature_plies {
            sample_by_visits(&root, rng)
        } else {
            best_move(&root)
        };
        Ok(mv.map(|mv| (mv, visit_target(g, &root, s.prune_forced_visits))))
    };
    record_game(start, game_id, encoder, "selfplay:loop", &mut rng, next)
}

/// One game of `player` against itself: uniformly random moves for the
/// first `random_plies` plies (no policy target), then the player's own
/// choices, each position's target the move chosen (alpha-beta's best).
pub fn play_one_by_player<G: GameSupport>(
    player: &dyn Player<G>,
    random_plies: u32,
    start: G,
    game_id: &str,
    encoder: &dyn Encoder<G>,
    seed: u64,
    index: u64,
) -> Result<Option<GameRows>, LoopError> {
    let mut rng = seeded_rng(seed, index);
    let mut session = player.session();
    let mut scratch = Vec::new();
    let next = |g: &G, rng: &mut SeededRng| -> Result<_, LoopError> {
        let chosen = if g.ply() < random_plies {
            g.exploration_move(rng, &mut scratch).map(|mv| (mv, None))
        } else {
            let mv = session.choose(g, rng)?;
            Some((mv, g.policy_index(mv).map(|i| PolicyTarget::best(i as u32))))
        };
        if let Some((mv, _)) = chosen {
            session.observe(g, mv);
        }
        Ok(chosen)
    };
    let source = "selfplay:loop-bootstrap";
    record_game(start, game_id, encoder, source, &mut rng, next)
}

/// Plays a game from `start`, `next` choosing each move and its policy
/// target, and returns its rows with their targets (none when the game
/// stopped without an outcome).
fn record_game<G: GameSupport>(
    start: G,
    game_id: &str,
    encoder: &dyn Encoder<G>,
    source: &str,
    rng: &mut SeededRng,
    mut next: impl FnMut(
        &G,
        &mut SeededRng,
    ) -> Result<Option<(G::Move, Option<PolicyTarget>)>, LoopError>,
) -> Result<Option<GameRows>, LoopError> {
    let mut g = start;
    let (mut states, mut moves, mut targets) = (vec![g.clone()], Vec::new(), Vec::new());
    while g.outcome().is_none() {
        let Some((mv, target)) = next(&g, rng)? else {
            break; // no move but not over: the rules' problem, not ours
        };
        targets.push(target);
        g.play(mv);
        moves.push(mv);
        states.push(g.clone());
    }
    let header = GameHeader {
        game_id: game_id.to_string(),
        source: source.to_string(),
        ..GameHeader::default()
    };
    Ok(played_rows(
        header,
        &states,
        &moves,
        encoder,
        Some(&targets),
    ))
}

/// What a generation's self-play made.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GenerationGames {
    pub games: u64,
    pub positions: u64,
    pub seconds: f64,
}

/// Plays `s.games` games on `threads` threads (0: all cores) and writes
/// them to the new dataset `out` (appearing whole or not at all).
#[allow(clippy::too_many_arguments)]
pub fn play_generation<G: GameSupport>(
    out: &Path,
    player: &GenerationPlayer<G>,
    s: &SelfplaySettings,
    start: &(dyn Fn() -> G + Sync),
    encoder: Arc<dyn Encoder<G>>,
    seed: u64,
    id_prefix: &str,
    threads: usize,
    progress: &indicatif::ProgressBar,
) -> Result<GenerationGames, LoopError> {
    let started = std::time::Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| LoopError::Pool(e.to_string()))?;
    let games: Vec<Option<GameRows>> = pool.install(|| {
        (0..s.games)
            .into_par_iter()
            .map(|i| {
                let id = format!("{id_prefix}-{i:06}");
                let rows = player.play_one(s, start(), &id, encoder.as_ref(), seed, i);
                progress.inc(1);
                rows
            })
            .collect::<Result<_, LoopError>>()
    })?;
    let es = encoder.spec();
    let spec = DatasetSpec::new(
        G::NAME,
        EncoderInfo {
            name: es.name.clone(),
            version: es.version,
            shape: es.shape,
            globals: es.globals,
        },
    );
    // A kill mid-write leaves shards without a manifest: start again.
    if out.exists() && !out.join(crate::dataset::MANIFEST_FILE).exists() {
        std::fs::remove_dir_all(out).map_err(|source| LoopError::Io {
            path: out.to_path_buf(),
            source,
        })?;
    }
    let mut w = DatasetWriter::create(out, spec)?;
    let mut positions = 0;
    for rows in games.iter().flatten() {
        w.push_game(rows)?;
        positions += rows.len() as u64;
    }
    w.finish(serde_json::json!({
        "command": "plies loop",
        "seed": seed,
        "games": s.games,
        "search": player.describe(),
        "evaluator": player.evaluator(),
    }))?;
    Ok(GenerationGames {
        games: s.games,
        positions,
        seconds: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;

    #[test]
    fn pruned_targets_keep_the_visits_beyond_the_fewest() {
        // UCT from the empty board: every child once, then the rest where
        // the search chose.
        let g = TicTacToe::new();
        let root = Node::default();
        let cfg = MctsConfig {
            simulations: 60,
            threads: 1,
            rollout: Rollout::ToEnd,
            reuse: false,
            ..MctsConfig::default()
        };
        run_search(&root, &g, &cfg, None, 3, None).unwrap();
        let children = root.children().unwrap();
        let visits: Vec<u64> = children.iter().map(|e| e.visits() as u64).collect();
        let least = *visits.iter().min().unwrap();
        assert!(least >= 1, "{visits:?}");
        let raw = visit_target(&g, &root, false).unwrap();
        let pruned = visit_target(&g, &root, true).unwrap();
        let total: u64 = visits.iter().map(|v| v - least).sum();
        for (e, v) in children.iter().zip(&visits) {
            let i = g.policy_index(e.mv).unwrap() as u32;
            let p = |t: &PolicyTarget| {
                t.index
                    .iter()
                    .position(|&k| k == i)
                    .map_or(0.0, |k| t.prob[k])
            };
            let all: u64 = visits.iter().sum();
            assert!((p(&raw) - *v as f32 / all as f32).abs() < 1e-6);
            assert!((p(&pruned) - (v - least) as f32 / total as f32).abs() < 1e-6);
        }
        assert!((pruned.prob.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        // The least visited moves drop out of the pruned target.
        assert!(pruned.index.len() < raw.index.len());
    }
}
