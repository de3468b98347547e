//! Players built from specs, for any game: the one place a spec becomes
//! a player.

use super::spec::{bad, in_spec, GamePlayerSpec};
use super::{AlphaBetaPlayer, EvalGreedyPlayer, RandomStepsPlayer};
use crate::checkpoint::CheckpointSource;
use crate::game::Side;
use crate::games::GameSupport;
use crate::search::evaluators::checkpoint_evaluator;
use crate::search::evaluators::PlayerContext;
use crate::search::mcts::MctsPlayer;
use crate::search::mdp::MdpPlayer;
use crate::search::scorer::{mcts_evaluator, Scorer};
use crate::search::spiel_bot::{spiel_mcts_player, SpielMctsOptions};
use crate::search::{
    ExpertPlayer, GreedyPlayer, NaivePlayer, Player, PolicyPlayer, RandomPlayer, SearchError,
};
use std::sync::Arc;

/// The evaluator a spec names, or the game's default; the error names the
/// game and its evaluators.
fn resolve_eval<G: GameSupport>(
    spec: &GamePlayerSpec,
    eval: Option<&str>,
    ctx: &PlayerContext,
) -> Result<(String, Scorer<G>), SearchError> {
    let names = G::HAND_EVALS;
    let name = match eval {
        Some(n) => n,
        None => names.first().copied().ok_or_else(|| {
            bad(
                &spec.to_string(),
                format!(
                    "{} has no hand evaluator; give eval=random or eval=ckpt:PATH, or use random, naive or mcts",
                    G::NAME
                ),
            )
        })?,
    };
    let scorer = Scorer::by_name(name, ctx).map_err(in_spec(spec))?;
    Ok((name.to_string(), scorer))
}

/// Builds the player a spec describes for game `G` on the standard board,
/// checkpoints on the CPU.
pub fn build_player<G: GameSupport>(
    spec: &GamePlayerSpec,
) -> Result<Arc<dyn Player<G>>, SearchError> {
    build_player_in(spec, &PlayerContext::default_for::<G>())
}

/// Builds the player a spec describes for game `G` in `ctx`. Its
/// [`Player::name`] is the spec with the evaluator filled in.
pub fn build_player_in<G: GameSupport>(
    spec: &GamePlayerSpec,
    ctx: &PlayerContext,
) -> Result<Arc<dyn Player<G>>, SearchError> {
    Ok(match spec {
        GamePlayerSpec::Random => Arc::new(RandomPlayer),
        GamePlayerSpec::Naive => Arc::new(NaivePlayer),
        GamePlayerSpec::AlphaBeta {
            depth,
            time,
            nodes,
            eval,
        } => {
            let (name, eval) = resolve_eval::<G>(spec, eval.as_deref(), ctx)?;
            Arc::new(AlphaBetaPlayer {
                depth: *depth,
                time: *time,
                nodes: *nodes,
                eval,
                label: GamePlayerSpec::AlphaBeta {
                    depth: *depth,
                    time: *time,
                    nodes: *nodes,
                    eval: Some(name),
                }
                .to_string(),
            })
        }
        GamePlayerSpec::Greedy { eval } => {
            let (name, eval) = resolve_eval::<G>(spec, eval.as_deref(), ctx)?;
            Arc::new(EvalGreedyPlayer {
                eval,
                label: GamePlayerSpec::Greedy { eval: Some(name) }.to_string(),
            })
        }
        GamePlayerSpec::RandomSteps { end } if G::RANDOM_STEPS => {
            Arc::new(RandomStepsPlayer { end: *end })
        }
        GamePlayerSpec::RandomSteps { .. } => {
            return Err(bad(
                &spec.to_string(),
                format!("random-steps is an Arimaa player, not one for {}", G::NAME),
            ))
        }
        GamePlayerSpec::Steps(steps) => {
            crate::search::steps::player::step_search_player_for::<G>(steps, ctx)
                .unwrap_or_else(|| {
                    Err(bad(
                        &spec.to_string(),
                        format!("steps is an Arimaa player, not one for {}", G::NAME),
                    ))
                })
                .map_err(in_spec(spec))?
        }
        GamePlayerSpec::Expert => {
            if G::new().immediate_wins(Side::First).is_none() {
                return Err(bad(
                    &spec.to_string(),
                    format!("expert plays tictactoe and gomoku, not {}", G::NAME),
                ));
            }
            Arc::new(ExpertPlayer)
        }
        GamePlayerSpec::Network {
            checkpoint,
            exact_terminal,
        } => {
            let source = CheckpointSource::parse(&checkpoint.to_string_lossy())
                .map_err(|e| in_spec(spec)(e.into()))?;
            let eval =
                checkpoint_evaluator::<G>(&source, ctx.size, &ctx.eval).map_err(in_spec(spec))?;
            Arc::new(GreedyPlayer::new(eval, *exact_terminal))
        }
        GamePlayerSpec::Policy {
            checkpoint,
            temperature,
        } => {
            let eval = checkpoint_evaluator::<G>(
                &crate::checkpoint::CheckpointSource::Dir(checkpoint.clone()),
                ctx.size,
                &ctx.eval,
            )
            .map_err(in_spec(spec))?;
            Arc::new(PolicyPlayer::new(eval, *temperature, spec.to_string())?)
        }
        GamePlayerSpec::Mcts(cfg) => {
            let eval = mcts_evaluator::<G>(cfg, ctx).map_err(in_spec(spec))?;
            Arc::new(MctsPlayer::new(cfg.clone(), eval)?)
        }
        GamePlayerSpec::Mdp { model } => Arc::new(MdpPlayer::load::<G>(model)?),
        GamePlayerSpec::SpielMcts(opts) => {
            let pairs: Vec<(&str, &str)> =
                opts.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            if G::SPIEL_NAME.is_none() {
                return Err(bad(
                    &spec.to_string(),
                    format!(
                        "OpenSpiel's MCTS plays amazons, pentago, gomoku, tictactoe, connect-four and atari-go, not {}",
                        G::NAME
                    ),
                ));
            }
            spiel_player::<G>(&pairs)?
        }
    })
}

/// OpenSpiel's MCTS bot from `spiel-mcts` options.
fn spiel_player<G: GameSupport>(
    options: &[(&str, &str)],
) -> Result<Arc<dyn Player<G>>, SearchError> {
    let opts = SpielMctsOptions::from_pairs(options).map_err(|why| {
        let parts: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        bad(&format!("spiel-mcts:{}", parts.join(",")), why.to_string())
    })?;
    spiel_mcts_player::<G>(opts)
}

/// Parses and builds in one go, on the standard board.
pub fn player_from_spec<G: GameSupport>(text: &str) -> Result<Arc<dyn Player<G>>, SearchError> {
    build_player(&text.parse()?)
}

/// Parses and builds in one go, in `ctx`.
pub fn player_from_spec_in<G: GameSupport>(
    text: &str,
    ctx: &PlayerContext,
) -> Result<Arc<dyn Player<G>>, SearchError> {
    build_player_in(&text.parse()?, ctx)
}
