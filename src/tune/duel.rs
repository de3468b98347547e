//! Games between two weight vectors of one weighted hand evaluator, each
//! played by the 1-ply greedy player (the paper's feature player), with
//! colours alternating and a random opening in every game.

use super::TuneError;
use crate::arena::{play_match_from, MatchResult, StartConfig};
use crate::games::GameSupport;
use crate::infer::hand::{FeatureSet, HandEval, LinearEval};
use crate::search::game_player::EvalGreedyPlayer;
use crate::search::scorer::Scorer;

/// The greedy player of `set` with `weights`, named `label`.
pub fn greedy_with<G: GameSupport>(
    set: FeatureSet<G>,
    weights: &[f32],
    label: &str,
) -> EvalGreedyPlayer<G> {
    let eval = LinearEval::new(set, weights.to_vec());
    let hand = HandEval::from_formula(set.name, set.scale, eval);
    EvalGreedyPlayer::new(Scorer::from_hand(hand), label)
}

/// `games` games of `a` against `b` (A first in the even ones), each from
/// `random_plies` random plies, game `i` on stream `i` of `seed`.
pub fn duel<G: GameSupport>(
    set: FeatureSet<G>,
    a: &[f32],
    b: &[f32],
    games: usize,
    random_plies: usize,
    seed: u64,
) -> Result<MatchResult, TuneError> {
    let pa = greedy_with(set, a, "a");
    let pb = greedy_with(set, b, "b");
    let start = StartConfig::standard::<G>().with_random_opening(random_plies);
    let starter = start.starter::<G>();
    let r = play_match_from(&pa, &pb, &starter, games, seed, None, None)?;
    Ok(r)
}
