use super::{play_game, ArenaError, MatchResult};
use crate::game::Game;
use crate::search::Player;
use crate::util::seeded_rng;
use rayon::prelude::*;

/// Plays `games` games of A against B on rayon: A moves first in the even
/// games. Game `i` draws from stream `i` of `seed`, so the result does not
/// depend on the number of threads.
pub fn play_match<G: Game>(
    a: &dyn Player<G>,
    b: &dyn Player<G>,
    games: usize,
    seed: u64,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<MatchResult, ArenaError> {
    let outcomes: Vec<_> = (0..games)
        .into_par_iter()
        .map(|i| {
            let mut rng = seeded_rng(seed, i as u64);
            let a_first = i % 2 == 0;
            let (first, second) = if a_first { (a, b) } else { (b, a) };
            let r = play_game(first, second, i, &mut rng).map(|(o, m)| (a_first, o, m.len()));
            if let Some(p) = progress {
                p.inc(1);
            }
            r
        })
        .collect::<Result<_, ArenaError>>()?;
    let mut result = MatchResult::new(a.name(), b.name(), seed);
    for (a_first, outcome, plies) in outcomes {
        result.add(a_first, outcome, plies);
    }
    Ok(result)
}
