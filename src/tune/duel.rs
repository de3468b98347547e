//! Games between two weight vectors of one weighted hand evaluator, each
//! played by the run's [`TunePlayer`] (the paper's 1-ply greedy feature
//! player, or the threat player for the games where the point that would
//! win is the point that blocks it), with colours alternating and a random
//! opening in every game.

use super::{TuneError, TunePlayer};
use crate::arena::{play_match_from, MatchResult, StartConfig};
use crate::games::GameSupport;
use crate::infer::hand::{FeatureSet, HandEval, LinearEval};
use crate::search::game_player::{EvalGreedyPlayer, ThreatsPlayer};
use crate::search::scorer::Scorer;
use crate::search::Player;

/// The scorer of `set` with `weights`.
fn scorer_with<G: GameSupport>(set: FeatureSet<G>, weights: &[f32]) -> Scorer<G> {
    let eval = LinearEval::new(set, weights.to_vec());
    Scorer::from_hand(HandEval::from_formula(set.name, set.scale, eval))
}

/// The greedy player of `set` with `weights`, named `label`.
pub fn greedy_with<G: GameSupport>(
    set: FeatureSet<G>,
    weights: &[f32],
    label: &str,
) -> EvalGreedyPlayer<G> {
    EvalGreedyPlayer::new(scorer_with(set, weights), label)
}

/// `player` on `set` with `weights`, named `label`.
fn player_with<G: GameSupport>(
    player: TunePlayer,
    set: FeatureSet<G>,
    weights: &[f32],
    label: &str,
) -> Box<dyn Player<G>> {
    match player {
        TunePlayer::Greedy => Box::new(greedy_with(set, weights, label)),
        TunePlayer::Threats => {
            Box::new(ThreatsPlayer::with_scorer(scorer_with(set, weights), label))
        }
    }
}

/// `games` games of `a` against `b` (A first in the even ones), each from
/// `random_plies` random plies, game `i` on stream `i` of `seed`.
pub fn duel<G: GameSupport>(
    player: TunePlayer,
    set: FeatureSet<G>,
    a: &[f32],
    b: &[f32],
    games: usize,
    random_plies: usize,
    seed: u64,
) -> Result<MatchResult, TuneError> {
    let pa = player_with(player, set, a, "a");
    let pb = player_with(player, set, b, "b");
    let start = StartConfig::standard::<G>().with_random_opening(random_plies);
    let starter = start.starter::<G>();
    let r = play_match_from(pa.as_ref(), pb.as_ref(), &starter, games, seed, None, None)?;
    Ok(r)
}
