//! The fitness of a network: Schaul & Schmidhuber's score of games against
//! an opponent, the games spread over rayon's threads, each seeded from the
//! run's seed and where it stands (generation, individual, opponent, game),
//! so a fitness is the same whatever the thread count.

use super::EvolveError;
use crate::arena::play_game_from;
use crate::game::{Outcome, Side};
use crate::games::GameSupport;
use crate::infer::{tensors_from_flat, weights_evaluator};
use crate::model::ModelConfig;
use crate::search::{Player, PolicyPlayer};
use crate::util::{derive_seed, seeded_rng};
use rayon::prelude::*;
use std::sync::Arc;

/// The paper's `p`: how much of a game's score its length can take away.
pub const LENGTH_WEIGHT: f64 = 0.2;

/// The score of one game for the network: a win `1 - p t`, a loss
/// `-1 + p t` and a draw 0, where `t = (M - Mmin) / (Mmax - Mmin)` is how
/// long the game (`moves`) was between the shortest and the longest
/// possible (clamped to `[0, 1]`; 0 where the bounds are not known). Quick
/// wins and slow losses score best.
pub fn game_score(outcome: Outcome, me: Side, moves: u32, bounds: Option<(u32, u32)>) -> f64 {
    let t = match bounds {
        Some((lo, hi)) if hi > lo => {
            ((moves as f64 - lo as f64) / (hi - lo) as f64).clamp(0.0, 1.0)
        }
        _ => 0.0,
    };
    match outcome {
        Outcome::Win(s) if s == me => 1.0 - LENGTH_WEIGHT * t,
        Outcome::Win(_) => -1.0 + LENGTH_WEIGHT * t,
        Outcome::Draw => 0.0,
    }
}

/// The random stream of one game, from where it stands in the run.
pub fn game_stream(path: &[u64]) -> u64 {
    path.iter()
        .fold(0x6576_6f6c_7665, |acc, &p| derive_seed(acc, p))
}

/// How networks are played: the model, the board and the temperature.
#[derive(Clone, Debug)]
pub struct NetworkPlay {
    pub model: ModelConfig,
    pub encoder: String,
    pub size: usize,
    pub temperature: f64,
}

impl NetworkPlay {
    /// The policy player of the weights `flat` (in
    /// [`ModelConfig::expected_tensors`] order).
    pub fn player<G: GameSupport>(
        &self,
        flat: &[f64],
        label: &str,
    ) -> Result<Arc<dyn Player<G>>, EvolveError> {
        self.player_on::<G>(self.size, flat, label)
    }

    /// The policy player of the weights `flat` on boards of `size` (an
    /// MDRNN reads any size).
    pub fn player_on<G: GameSupport>(
        &self,
        size: usize,
        flat: &[f64],
        label: &str,
    ) -> Result<Arc<dyn Player<G>>, EvolveError> {
        let weights: Vec<f32> = flat.iter().map(|&w| w as f32).collect();
        let tensors = tensors_from_flat(&self.model, &weights)?;
        let encoder = G::encoder(&self.encoder, size)?;
        let eval = weights_evaluator(
            encoder,
            &self.model,
            &tensors,
            &candle_core::Device::Cpu,
            label,
        )?;
        Ok(Arc::new(PolicyPlayer::new(eval, self.temperature, label)?))
    }
}

/// One game of `a` against `b` on a fresh board of `size`, `a` first when
/// `a_first`; the score for `a`.
pub fn score_game<G: GameSupport>(
    a: &dyn Player<G>,
    b: &dyn Player<G>,
    a_first: bool,
    size: usize,
    seed: u64,
    stream: u64,
) -> Result<f64, EvolveError> {
    let mut rng = seeded_rng(seed, stream);
    let start = G::with_size(size).map_err(|e| EvolveError::option("size", e.to_string()))?;
    let (first, second, me) = if a_first {
        (a, b, Side::First)
    } else {
        (b, a, Side::Second)
    };
    let played = play_game_from(start, first, second, 0, &mut rng, None)?;
    let outcome = played.outcome.unwrap_or(Outcome::Draw);
    Ok(game_score(
        outcome,
        me,
        played.moves.len() as u32,
        G::game_length_bounds(size),
    ))
}

/// The mean scores of `players` in `games` games each against `opponent`,
/// starts alternating (the network first in the even games); game `i` of
/// player `j` draws from `game_stream([key.., j, i])`.
pub fn scores_against<G: GameSupport>(
    players: &[Arc<dyn Player<G>>],
    opponent: &Arc<dyn Player<G>>,
    games: usize,
    size: usize,
    seed: u64,
    key: &[u64],
) -> Result<Vec<f64>, EvolveError> {
    let board = SizedPlayers {
        size,
        players: players.to_vec(),
        opponent: opponent.clone(),
    };
    scores_over_sizes(std::slice::from_ref(&board), games, seed, key)
}

/// The players of one board size: a network's player reads boards of one
/// size, so a fitness spread over sizes needs one set per size.
pub struct SizedPlayers<G: GameSupport> {
    pub size: usize,
    /// One per individual, in the same order on every board.
    pub players: Vec<Arc<dyn Player<G>>>,
    pub opponent: Arc<dyn Player<G>>,
}

/// The board size game `i` is played on when a fitness is spread over
/// `boards` sizes: the sizes take turns by pairs of games, so each size
/// gets games with both starts.
pub fn board_of_game(i: usize, boards: usize) -> usize {
    (i / 2) % boards.max(1)
}

/// [`scores_against`] with the games spread over the boards of `boards`
/// ([`board_of_game`]); one board is exactly [`scores_against`].
pub fn scores_over_sizes<G: GameSupport>(
    boards: &[SizedPlayers<G>],
    games: usize,
    seed: u64,
    key: &[u64],
) -> Result<Vec<f64>, EvolveError> {
    let individuals = boards.first().map_or(0, |b| b.players.len());
    let jobs: Vec<(usize, usize)> = (0..individuals)
        .flat_map(|j| (0..games).map(move |i| (j, i)))
        .collect();
    let scores = jobs
        .par_iter()
        .map(|&(j, i)| {
            let board = &boards[board_of_game(i, boards.len())];
            let mut path = key.to_vec();
            path.extend([j as u64, i as u64]);
            score_game(
                board.players[j].as_ref(),
                board.opponent.as_ref(),
                i % 2 == 0,
                board.size,
                seed,
                game_stream(&path),
            )
        })
        .collect::<Result<Vec<f64>, EvolveError>>()?;
    Ok(scores
        .chunks(games.max(1))
        .map(|c| c.iter().sum::<f64>() / c.len().max(1) as f64)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_wins_and_slow_losses_score_best() {
        let b = Some((9, 25));
        let me = Side::First;
        assert_eq!(game_score(Outcome::Win(me), me, 9, b), 1.0);
        assert!((game_score(Outcome::Win(me), me, 25, b) - 0.8).abs() < 1e-12);
        assert_eq!(game_score(Outcome::Win(me.other()), me, 9, b), -1.0);
        assert!((game_score(Outcome::Win(me.other()), me, 17, b) + 0.9).abs() < 1e-12);
        assert_eq!(game_score(Outcome::Draw, me, 25, b), 0.0);
        assert_eq!(game_score(Outcome::Win(me), me, 17, None), 1.0);
        assert_ne!(game_stream(&[1, 2, 3]), game_stream(&[1, 3, 2]));
    }
}
