//! The players of a loop's matches, as values: a trained network loaded
//! once and handed to every stage that plays it (self-play, the gate, the
//! anchors), and the bootstrap player the networks are gated against until
//! the first one is promoted.

use super::super::LoopError;
use crate::checkpoint::CheckpointSource;
use crate::games::GameSupport;
use crate::infer::Evaluator;
use crate::search::evaluators::{checkpoint_evaluator, EvalContext};
use crate::search::mcts::{MctsConfig, MctsPlayer, Rollout};
use crate::search::Player;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A generation's network: its checkpoint folder and its evaluator.
pub struct Network<G: GameSupport> {
    pub path: PathBuf,
    pub eval: Arc<dyn Evaluator<G>>,
}

impl<G: GameSupport> Clone for Network<G> {
    fn clone(&self) -> Self {
        Network {
            path: self.path.clone(),
            eval: Arc::clone(&self.eval),
        }
    }
}

impl<G: GameSupport> Network<G> {
    /// Loads the checkpoint in `path` for boards of `size`.
    pub fn load(path: &Path, size: usize, ctx: &EvalContext) -> Result<Self, LoopError> {
        let source = CheckpointSource::Dir(path.to_path_buf());
        Ok(Network {
            path: path.to_path_buf(),
            eval: checkpoint_evaluator::<G>(&source, size, ctx)?,
        })
    }

    /// The network's match player: MCTS at `sims` simulations valuing
    /// leaves with the network, a fresh tree every move (so a match's
    /// games do not depend on each other), decisive moves as self-play
    /// has them. Its name (`mcts:sims=N,eval=ckpt:PATH,reuse=off`) is what
    /// the reports call it.
    pub fn mcts_player(&self, sims: u64, decisive: bool) -> Result<LoopPlayer<G>, LoopError> {
        let cfg = MctsConfig {
            simulations: sims,
            eval: Some(format!("ckpt:{}", self.path.display())),
            rollout: Rollout::Plies(0),
            reuse: false,
            decisive,
            ..MctsConfig::default()
        };
        let player: Arc<dyn Player<G>> = Arc::new(MctsPlayer::new(cfg, Some(self.eval.clone()))?);
        Ok(LoopPlayer::named(player))
    }
}

/// A player of the loop's matches and the name its results are stored
/// under.
pub struct LoopPlayer<G: GameSupport> {
    pub player: Arc<dyn Player<G>>,
    pub label: String,
}

impl<G: GameSupport> Clone for LoopPlayer<G> {
    fn clone(&self) -> Self {
        LoopPlayer {
            player: Arc::clone(&self.player),
            label: self.label.clone(),
        }
    }
}

impl<G: GameSupport> LoopPlayer<G> {
    /// `player` under its own name.
    pub fn named(player: Arc<dyn Player<G>>) -> Self {
        let label = player.name();
        LoopPlayer { player, label }
    }

    /// The default bootstrap: UCT with random playouts to the end at
    /// `sims` simulations (`mcts:sims=N`).
    pub fn bootstrap_search(sims: u64, decisive: bool) -> Result<Self, LoopError> {
        let cfg = MctsConfig {
            simulations: sims,
            decisive,
            ..MctsConfig::default()
        };
        let player: Arc<dyn Player<G>> = Arc::new(MctsPlayer::new(cfg, None)?);
        Ok(LoopPlayer::named(player))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Game, TicTacToe};
    use crate::search::game_player::{build_player, GamePlayerSpec};

    /// The values the loop builds name themselves as the specs that build
    /// the same players, so the reports of a loop read as before.
    #[test]
    fn loop_players_are_named_as_their_specs() {
        let boot = LoopPlayer::<TicTacToe>::bootstrap_search(48, false).unwrap();
        assert_eq!(boot.label, "mcts:sims=48");
        let boot = LoopPlayer::<TicTacToe>::bootstrap_search(48, true).unwrap();
        assert_eq!(boot.label, "mcts:sims=48,decisive=on");
        let spec: GamePlayerSpec = "mcts:sims=48,decisive=on".parse().unwrap();
        let built = build_player::<TicTacToe>(&spec).unwrap();
        assert_eq!(built.name(), boot.label);

        let dir = crate::checkpoint::builtin("tictactoe")
            .unwrap()
            .materialize()
            .unwrap();
        let net = Network::<TicTacToe>::load(&dir, 3, &EvalContext::default()).unwrap();
        let ours = net.mcts_player(24, false).unwrap();
        let spec = format!("mcts:sims=24,eval=ckpt:{},reuse=off", dir.display());
        assert_eq!(ours.label, spec);
        let parsed: GamePlayerSpec = spec.parse().unwrap();
        let built = build_player::<TicTacToe>(&parsed).unwrap();
        assert_eq!(built.name(), ours.label);
        // Both choose alike from the same seed: the same search.
        let g = TicTacToe::new();
        for seed in 0..4 {
            let mut a = crate::util::seeded_rng(seed, 0);
            let mut b = crate::util::seeded_rng(seed, 0);
            assert_eq!(
                ours.player.choose(&g, &mut a).unwrap(),
                built.choose(&g, &mut b).unwrap()
            );
        }
    }
}
