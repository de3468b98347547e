//! Players for every game from one spec string: `random`, `naive`,
//! `expert` (games with immediate wins),
//! `alphabeta[:depth=D,time=SECS,nodes=N,eval=NAME]`,
//! `greedy[:eval=NAME]`, `greedy:CHECKPOINT_DIR` and
//! `greedy+:CHECKPOINT_DIR` (the published NETWORK player),
//! `mcts:sims=N[,threads=T,eval=NAME,...]` (see [`MctsConfig`]),
//! `spiel-mcts:sims=N[,rollouts=R,c=C,seed=S]` (OpenSpiel's MCTS bot),
//! `mdp:MODEL_FILE` (the bucketed MDP learner of `plies train mdp`),
//! `policy:ckpt=PATH[,temperature=T]` (moves drawn from a model's per-point
//! outputs) and, for Arimaa, `random-steps[:end=P]` and
//! `steps[:depth=S,time=SECS,nodes=N,eval=NAME]` (alpha-beta over single
//! steps, `depth` in steps; see [`crate::search::steps::player`]). Every consumer (match, arena, play,
//! self-play, both engines) builds its players here.
//!
//! A spec is a name, then optionally `:` and comma-separated `key=value`
//! options; an unknown key or a bad value is named in the error.
//! Evaluators ([`crate::search::evaluators`]): the game's hand-written
//! ones ([`GameSupport::HAND_EVALS`]: Arimaa `material`, Amazons `mindist`
//! and `lieberum`, Pentago `pentago-features`; the first is the default),
//! `random`, and `ckpt:PATH`, a trained checkpoint.
//!
//! ```
//! use plies::game::{Amazons, Game};
//! use plies::search::game_player::{build_player, GamePlayerSpec};
//! let spec: GamePlayerSpec = "alphabeta:depth=1,eval=mindist".parse().unwrap();
//! let player = build_player::<Amazons>(&spec).unwrap();
//! assert_eq!(player.name(), "alphabeta:depth=1,eval=mindist");
//! let g = Amazons::with_size(6).unwrap();
//! let mut rng = plies::util::seeded_rng(1, 0);
//! let mv = player.choose(&g, &mut rng).unwrap();
//! let mut legal = Vec::new();
//! g.legal_moves(&mut legal);
//! assert!(legal.contains(&mv));
//! ```

//!
//! | file | what |
//! | --- | --- |
//! | `spec.rs` | the grammar: [`GamePlayerSpec`], parsed and written back |
//! | `build.rs` | a spec to a player ([`build_player_in`]), evaluators resolved |
//! | `alphabeta_player.rs` | [`AlphaBetaPlayer`] |
//! | `greedy_player.rs` | [`EvalGreedyPlayer`] |
//! | `random_steps_player.rs` | [`RandomStepsPlayer`] |
//!
//! The other players live beside their searches (`mcts`, `steps`,
//! `spiel_bot`, `mdp`, `policy`) or in `search`'s own files.

mod alphabeta_player;
mod build;
mod greedy_player;
mod random_steps_player;
mod spec;
#[cfg(test)]
mod tests;

/// Players are built in a [`PlayerContext`] (defined beside the
/// evaluators it carries).
pub use super::evaluators::PlayerContext;
pub use alphabeta_player::AlphaBetaPlayer;
pub use build::{build_player, build_player_in, player_from_spec, player_from_spec_in};
pub use greedy_player::EvalGreedyPlayer;
pub use random_steps_player::RandomStepsPlayer;
pub use spec::{GamePlayerSpec, DEFAULT_DEPTH, DEFAULT_END_PROB};
