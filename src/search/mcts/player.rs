//! MCTS as a [`Player`]: a fresh tree per call of [`Player::choose`], or,
//! through a [`MctsSession`], a tree kept across the moves of one game.

use super::search::{best_edge, run_search, SearchStats};
use super::tree::{discard, Node};
use super::MctsConfig;
use crate::games::GameSupport;
use crate::infer::Evaluator;
use crate::search::{legal_or_none, pick, Chosen, Found, Watch};
use crate::search::{
    tighter, Budget, GameSession, Player, Score, SearchError, SearchInfo, Searched, TreeInfo,
};
use crate::util::SeededRng;
use rand::RngExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// An MCTS player: a config and an optional evaluator.
pub struct MctsPlayer<G: GameSupport> {
    cfg: MctsConfig,
    eval: Option<Arc<dyn Evaluator<G>>>,
    label: String,
    last: Mutex<Option<SearchStats>>,
    searches: AtomicU64,
    simulations: AtomicU64,
}

impl<G: GameSupport> MctsPlayer<G> {
    /// Refuses a config that needs an evaluator when none is given.
    pub fn new(cfg: MctsConfig, eval: Option<Arc<dyn Evaluator<G>>>) -> Result<Self, SearchError> {
        if eval.is_none() && cfg.rollout != super::Rollout::ToEnd {
            return Err(SearchError::BadSpec {
                spec: cfg.to_string(),
                why: "playouts cut off before the end need an evaluator (eval=NAME)".into(),
            });
        }
        let label = cfg.to_string();
        Ok(MctsPlayer {
            cfg,
            eval,
            label,
            last: Mutex::new(None),
            searches: AtomicU64::new(0),
            simulations: AtomicU64::new(0),
        })
    }

    pub fn config(&self) -> &MctsConfig {
        &self.cfg
    }

    /// Mean simulations per search over every search so far.
    pub fn simulations_per_search(&self) -> f64 {
        let n = self.searches.load(Ordering::Relaxed);
        if n == 0 {
            0.0
        } else {
            self.simulations.load(Ordering::Relaxed) as f64 / n as f64
        }
    }

    /// The statistics of the last search any caller ran.
    pub fn last_stats(&self) -> Option<SearchStats> {
        self.last.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A session for one game (what [`Player::session`] boxes).
    pub fn game_session(&self) -> MctsSession<'_, G> {
        MctsSession {
            player: self,
            tree: None,
        }
    }

    /// Searches from `state` into `root` within `budget` (simulations and
    /// time, the tighter of the budget's and the config's; the budget's
    /// stop flag ends it early) and picks the most visited move; a random
    /// legal one when the search was stopped before its first simulation.
    fn run(
        &self,
        root: &Node<G::Move>,
        state: &G,
        budget: &Budget,
        rng: &mut SeededRng,
    ) -> Found<G> {
        if state.outcome().is_some() {
            return Err(SearchError::NoMoves);
        }
        let reused = root.visits();
        let seed: u64 = rng.random();
        let limited;
        let cfg = if *budget == Budget::UNLIMITED {
            &self.cfg
        } else {
            limited = MctsConfig {
                simulations: tighter(Some(self.cfg.simulations), budget.nodes)
                    .unwrap_or(self.cfg.simulations),
                // The budget's deadline as the time left now: the search
                // starts at once.
                time: tighter(self.cfg.time, budget.time_left(Instant::now())),
                ..self.cfg.clone()
            };
            &limited
        };
        let stats = run_search(
            root,
            state,
            cfg,
            self.eval.as_deref(),
            seed,
            budget.stop_flag(),
        )?;
        self.searches.fetch_add(1, Ordering::Relaxed);
        self.simulations
            .fetch_add(stats.simulations, Ordering::Relaxed);
        let simulations = stats.simulations;
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(stats);
        let best = best_edge(root).filter(|&(_, visits, _)| visits > 0);
        let Some((mv, best_visits, best_value)) = best else {
            let moves = legal_or_none(state)?;
            return Ok(Searched::plain(pick(&moves, rng)));
        };
        Ok(Searched {
            mv,
            info: SearchInfo {
                nodes: Some(simulations),
                score: Some(Score::Value(best_value)),
                tree: Some(TreeInfo {
                    reused,
                    best_visits,
                    best_value,
                }),
                ..SearchInfo::default()
            },
        })
    }
}

impl<G: GameSupport> Player<G> for MctsPlayer<G> {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn choose_within(&self, state: &G, budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        self.search(state, budget, rng, &mut |_| {}).map(|s| s.mv)
    }

    /// A fresh tree, freed after the answer (off this thread when big).
    fn search(&self, state: &G, budget: &Budget, rng: &mut SeededRng, _: Watch) -> Found<G> {
        let root: Box<Node<G::Move>> = Box::default();
        let searched = self.run(&root, state, budget, rng);
        discard(root);
        searched
    }

    fn session(&self) -> Box<dyn GameSession<G> + '_> {
        Box::new(self.game_session())
    }
}

/// One game's search tree, kept between moves when `reuse` is on.
pub struct MctsSession<'a, G: GameSupport> {
    player: &'a MctsPlayer<G>,
    /// The root's position key and the root.
    tree: Option<(u64, Box<Node<G::Move>>)>,
}

impl<G: GameSupport> MctsSession<'_, G> {
    /// Visits already in the tree for `state` (0 without a reusable tree).
    pub fn reused_visits(&self, state: &G) -> u32 {
        match &self.tree {
            Some((key, root)) if *key == state.hash_key() => root.visits(),
            _ => 0,
        }
    }
}

impl<G: GameSupport> GameSession<G> for MctsSession<'_, G> {
    fn choose_within(&mut self, state: &G, budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        self.search(state, budget, rng, &mut |_| {}).map(|s| s.mv)
    }

    fn search(&mut self, state: &G, budget: &Budget, rng: &mut SeededRng, _: Watch) -> Found<G> {
        let key = state.hash_key();
        let root = match self.tree.take() {
            Some((k, root)) if k == key && self.player.cfg.reuse => root,
            Some((_, stale)) => {
                discard(stale);
                Box::default()
            }
            None => Box::default(),
        };
        let searched = self.player.run(&root, state, budget, rng)?;
        self.tree = Some((key, root));
        Ok(searched)
    }

    fn observe(&mut self, before: &G, mv: G::Move) {
        self.tree = match self.tree.take() {
            Some((k, mut root)) if k == before.hash_key() && self.player.cfg.reuse => {
                let kept = root.take_child(&mv).map(|child| {
                    let mut after = before.clone();
                    after.play(mv);
                    (after.hash_key(), child)
                });
                // The moves not played: freed off this thread when many.
                discard(root);
                kept
            }
            Some((_, stale)) => {
                discard(stale);
                None
            }
            None => None,
        };
    }
}

impl<G: GameSupport> Drop for MctsSession<'_, G> {
    /// A game's tree is freed off the engine's thread when big (a new game
    /// replaces the session).
    fn drop(&mut self) {
        if let Some((_, root)) = self.tree.take() {
            discard(root);
        }
    }
}
