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

//! Each kind of player owns its file: its spec type (written back by its
//! `Display`), its names, its options and its construction, through
//! [`PlayerKind`]. The list below is the one place that names every kind;
//! adding a player is its file and one line in it.
//!
//! | file | what |
//! | --- | --- |
//! | `registry.rs` | [`PlayerKind`], and the macro that makes [`GamePlayerSpec`] from the list |
//! | `grammar.rs` | [`Options`]: `key=value` options read and refused alike for every kind |
//! | `build.rs` | a spec to a player ([`build_player_in`]); evaluators resolved by name |
//! | `plain.rs` | `random`, `naive`, `expert` |
//! | `alphabeta.rs` | `alphabeta`: [`AlphaBetaSpec`], [`AlphaBetaPlayer`] |
//! | `greedy.rs` | `greedy`, `greedy+`: [`GreedySpec`], [`EvalGreedyPlayer`] |
//! | `random_steps.rs` | `random-steps`: [`RandomStepsSpec`], [`RandomStepsPlayer`] |
//! | `steps.rs` | `steps` (the player lives in [`crate::search::steps::player`]) |
//! | `mcts.rs` | `mcts` ([`crate::search::mcts`]) |
//! | `spiel_mcts.rs` | `spiel-mcts` ([`crate::search::spiel_bot`]) |
//! | `mdp.rs` | `mdp` ([`crate::search::mdp`]) |
//! | `policy.rs` | `policy` ([`crate::search::PolicyPlayer`]) |
//! | `threats.rs` | `threats`: forced wins by threats, then the evaluator (Gomoku) |

#[macro_use]
mod registry;
mod build;
mod grammar;
#[cfg(test)]
mod tests;

// The kinds of players, in the order help and errors list their names.
player_kinds! {
    plain: Plain(PlainSpec),
    alphabeta: AlphaBeta(AlphaBetaSpec),
    greedy: Greedy(GreedySpec),
    random_steps: RandomSteps(RandomStepsSpec),
    steps: Steps(StepsSpec),
    mcts: Mcts(MctsConfig),
    spiel_mcts: SpielMcts(SpielMctsSpec),
    mdp: Mdp(MdpSpec),
    policy: Policy(PolicySpec),
    threats: Threats(ThreatsSpec),
}

/// Players are built in a [`PlayerContext`] (defined beside the
/// evaluators it carries).
pub use super::evaluators::PlayerContext;
pub use alphabeta::{AlphaBetaPlayer, DEFAULT_DEPTH};
pub use build::{build_player, build_player_in, player_from_spec, player_from_spec_in};
pub(crate) use grammar::bad;
pub use grammar::Options;
pub use grammar::SearchOptions;
pub use greedy::EvalGreedyPlayer;
pub use random_steps::{RandomStepsPlayer, DEFAULT_END_PROB};
pub use registry::PlayerKind;
pub use threats::ThreatsPlayer;
