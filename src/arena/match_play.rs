use super::match_journal::{JournalGame, MatchJournal};
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
    play_match_journaled(a, b, start, games, seed, max_plies, progress, None)
}

/// [`play_match_from`] that, given a `journal`, records every finished
/// game there and plays only the games it lacks: an interrupted match goes
/// on where it stopped and ends with the uninterrupted result. The result
/// is written to the journal's folder too.
#[allow(clippy::too_many_arguments)]
pub fn play_match_journaled<G: Game>(
    a: &dyn Player<G>,
    b: &dyn Player<G>,
    start: &StartFn<'_, G>,
    games: usize,
    seed: u64,
    max_plies: Option<usize>,
    progress: Option<&indicatif::ProgressBar>,
    journal: Option<&MatchJournal>,
) -> Result<MatchResult, ArenaError> {
    let match_ = Match {
        a,
        b,
        start,
        seed,
        max_plies,
    };
    let result = match_.play(games, progress, journal)?;
    if let Some(j) = journal {
        j.finish(&result)?;
    }
    Ok(result)
}

/// What every game of a match shares.
struct Match<'a, 's, G: Game> {
    a: &'a dyn Player<G>,
    b: &'a dyn Player<G>,
    start: &'a StartFn<'s, G>,
    seed: u64,
    max_plies: Option<usize>,
}

impl<G: Game> Match<'_, '_, G> {
    /// Game `i`, from stream `i` of the seed: A moves first when `i` is even.
    fn play_one(&self, i: usize) -> Result<JournalGame, ArenaError> {
        let mut rng = seeded_rng(self.seed, i as u64);
        let a_first = i.is_multiple_of(2);
        let (first, second) = if a_first {
            (self.a, self.b)
        } else {
            (self.b, self.a)
        };
        let s = (self.start)(&mut rng).map_err(|source| ArenaError::Start { game: i, source })?;
        let g = play_game_from(s, first, second, i, &mut rng, self.max_plies)?;
        Ok(JournalGame {
            game: i,
            a_first,
            outcome: g.outcome,
            plies: g.moves.len(),
        })
    }

    /// Games `0..games` but those `journal` has, in parallel, each recorded
    /// as it ends; the result adds every game in index order.
    fn play(
        &self,
        games: usize,
        progress: Option<&indicatif::ProgressBar>,
        journal: Option<&MatchJournal>,
    ) -> Result<MatchResult, ArenaError> {
        let done = journal.map(MatchJournal::done);
        if let (Some(p), Some(d)) = (progress, done) {
            p.inc(d.range(..games).count() as u64);
        }
        let played: Vec<JournalGame> = (0..games)
            .into_par_iter()
            .filter(|i| !done.is_some_and(|d| d.contains_key(i)))
            .map(|i| {
                let g = self.play_one(i)?;
                if let Some(j) = journal {
                    j.record(&g)?;
                }
                if let Some(p) = progress {
                    p.inc(1);
                }
                Ok(g)
            })
            .collect::<Result<_, ArenaError>>()?;
        let mut all: Vec<JournalGame> = done
            .map(|d| d.range(..games).map(|(_, g)| *g).collect())
            .unwrap_or_default();
        all.extend(played);
        all.sort_by_key(|g| g.game);
        let mut result = MatchResult::new(self.a.name(), self.b.name(), self.seed);
        for g in all {
            result.add_game(g.a_first, g.outcome, g.plies);
        }
        Ok(result)
    }
}
