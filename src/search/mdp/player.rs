//! `mdp:MODEL_FILE`: the bucketed MDP learner's move: among the boards the
//! legal moves reach, one whose bucket its seat's model values most (ties
//! broken at random); in training, a random move with chance epsilon.

use super::{BucketHash, MdpModel};
use crate::games::GameSupport;
use crate::search::{legal_or_none, pick, Budget, Chosen, Player, SearchError};
use crate::util::SeededRng;
use rand::RngExt;

/// The afterstate buckets of `state`'s legal moves, with the moves.
pub fn successor_buckets<G: GameSupport>(
    state: &G,
    hash: &BucketHash,
    codes: &mut Vec<u8>,
) -> Result<Vec<(G::Move, usize)>, SearchError> {
    let moves = legal_or_none(state)?;
    Ok(moves
        .into_iter()
        .map(|m| {
            let mut next = state.clone();
            next.play(m);
            next.piece_codes(codes);
            (m, hash.of(next.outcome(), codes))
        })
        .collect())
}

/// The move to the best-valued bucket for the side to move, or with chance
/// `epsilon` a uniformly random one; returns the move and its bucket.
pub fn mdp_move<G: GameSupport>(
    model: &MdpModel,
    state: &G,
    epsilon: f64,
    rng: &mut SeededRng,
    codes: &mut Vec<u8>,
) -> Result<(G::Move, usize), SearchError> {
    let hash = BucketHash::new(model.settings.buckets).ok_or_else(|| SearchError::BadSpec {
        spec: "mdp".into(),
        why: format!(
            "a model needs at least 3 buckets, not {}",
            model.settings.buckets
        ),
    })?;
    let options = successor_buckets(state, &hash, codes)?;
    if epsilon > 0.0 && rng.random_bool(epsilon) {
        return Ok(options[rng.random_range(0..options.len())]);
    }
    let values = &model.seat(state.side_to_move()).values;
    let best = options
        .iter()
        .map(|&(_, b)| values[b])
        .fold(f64::NEG_INFINITY, f64::max);
    let ties: Vec<(G::Move, usize)> = options
        .into_iter()
        .filter(|&(_, b)| values[b] == best)
        .collect();
    Ok(pick(&ties, rng))
}

/// The trained learner as a player.
pub struct MdpPlayer {
    model: MdpModel,
    label: String,
}

impl MdpPlayer {
    /// The model of `path` for game `G`; refuses a game without piece
    /// codes and a file that is not a model of `G`, naming the file.
    pub fn load<G: GameSupport>(path: &std::path::Path) -> Result<Self, SearchError> {
        let label = format!("mdp:{}", path.display());
        let bad = |why: String| SearchError::BadSpec {
            spec: label.clone(),
            why,
        };
        if !G::new().piece_codes(&mut Vec::new()) {
            return Err(bad(format!(
                "the bucketed MDP learner does not play {}",
                G::NAME
            )));
        }
        let model = MdpModel::load(path, G::NAME).map_err(|e| bad(e.to_string()))?;
        Ok(MdpPlayer { model, label })
    }
}

impl<G: GameSupport> Player<G> for MdpPlayer {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn choose_within(&self, state: &G, _budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        mdp_move(&self.model, state, 0.0, rng, &mut Vec::new()).map(|(m, _)| m)
    }
}
