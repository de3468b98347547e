use super::{play_game_from, ArenaError, GameStart, MatchResult};
use crate::game::Game;
use crate::games::SupportError;
use crate::search::Player;
use crate::util::{seeded_rng, SeededRng};
use rayon::prelude::*;

/// The start of game `i`, drawn from that game's random stream (Arimaa
/// setups, random opening plies); the error says why there is none.
pub type StartFn<'a, G> = dyn Fn(&mut SeededRng) -> Result<GameStart<G>, SupportError> + Sync + 'a;

/// Plays `games` games of A against B from the standard start on rayon:
/// A moves first in the even games. Game `i` draws from stream `i` of
/// `seed`, so the result does not depend on the number of threads.
pub fn play_match<G: Game>(
    a: &dyn Player<G>,
    b: &dyn Player<G>,
    games: usize,
    seed: u64,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<MatchResult, ArenaError> {
    play_match_from(a, b, &|_| Ok(G::new().into()), games, seed, None, progress)
}

/// [`play_match`] from the positions `start` gives (drawn from each game's
/// stream before its first move), stopping games unfinished after
/// `max_plies` moves if given (they count as draws).
pub fn play_match_from<G: Game>(
    a: &dyn Player<G>,
    b: &dyn Player<G>,
    start: &StartFn<'_, G>,
    games: usize,
    seed: u64,
    max_plies: Option<usize>,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<MatchResult, ArenaError> {
    let outcomes: Vec<_> = (0..games)
        .into_par_iter()
        .map(|i| {
            let mut rng = seeded_rng(seed, i as u64);
            let a_first = i % 2 == 0;
            let (first, second) = if a_first { (a, b) } else { (b, a) };
            let s = start(&mut rng).map_err(|source| ArenaError::Start { game: i, source })?;
            let r = play_game_from(s, first, second, i, &mut rng, max_plies)
                .map(|g| (a_first, g.outcome, g.moves.len()));
            if let Some(p) = progress {
                p.inc(1);
            }
            r
        })
        .collect::<Result<_, ArenaError>>()?;
    let mut result = MatchResult::new(a.name(), b.name(), seed);
    for (a_first, outcome, plies) in outcomes {
        result.add_game(a_first, outcome, plies);
    }
    Ok(result)
}
