//! Where the games of a match or tournament start: the standard position at
//! a board size, or for Arimaa the position after two setups drawn (as
//! self-play draws them) from the shipped arimaa.com archives, from a file
//! of imported records, or at random ([`GameSupport::openings`]); then, for
//! every game, optionally a number of uniformly random plies
//! (`--random-opening N`, [`random_opening`]).

use super::{ArenaError, GameStart};
use crate::game::Game;
use crate::games::{random_opening, GameSupport, Openings, SupportError};
use crate::util::SeededRng;

/// The start of every game of a match: board size and openings.
#[derive(Clone, Debug)]
pub struct StartConfig {
    /// Board side length.
    pub size: usize,
    pub openings: Openings,
    /// How reports name the openings: `standard`, `archive:...`,
    /// `random`, `file:PATH`, then `+ N random plies` when there are some.
    pub openings_name: String,
    /// Uniformly random plies played from the start before the players
    /// move (none that ends the game).
    pub random_plies: usize,
}

impl StartConfig {
    /// The standard position of `G` at its standard size.
    pub fn standard<G: Game>() -> Self {
        StartConfig {
            size: G::DEFAULT_SIZE,
            openings: Openings::Standard,
            openings_name: "standard".into(),
            random_plies: 0,
        }
    }

    /// The same starts followed by `plies` random plies.
    pub fn with_random_opening(mut self, plies: usize) -> Self {
        self.random_plies = plies;
        if plies > 0 {
            self.openings_name = format!("{} + {plies} random plies", self.openings_name);
        }
        self
    }

    /// Checks `size` (default: the game's standard) against `G` and
    /// resolves `--setups` ([`GameSupport::openings`]).
    pub fn for_game<G: GameSupport>(
        size: Option<usize>,
        setups: Option<&str>,
    ) -> Result<Self, ArenaError> {
        let size = size.unwrap_or(G::DEFAULT_SIZE);
        G::with_size(size).map_err(|e| ArenaError::Options(format!("--size {size}: {e}")))?;
        let choice = G::openings(setups).map_err(|e| ArenaError::Options(e.to_string()))?;
        Ok(StartConfig {
            size,
            openings: choice.openings,
            openings_name: choice.name,
            random_plies: 0,
        })
    }

    /// The start of a game, drawing Arimaa setups and the random opening
    /// from `rng` (the game's own stream, so starts do not depend on the
    /// thread count).
    pub fn start<G: GameSupport>(&self, rng: &mut SeededRng) -> Result<GameStart<G>, SupportError> {
        let (root, _setups) = G::start(self.size, &self.openings, rng)?;
        let opening = random_opening(&root, self.random_plies, rng);
        Ok(GameStart { root, opening })
    }

    /// `start` as a function for [`super::play_match_from`].
    pub fn starter<G: GameSupport>(
        &self,
    ) -> impl Fn(&mut SeededRng) -> Result<GameStart<G>, SupportError> + Sync + '_ {
        move |rng| self.start::<G>(rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Amazons, Arimaa, Gomoku, Pentago, TicTacToe};
    use crate::util::seeded_rng;

    #[test]
    fn sizes_are_checked_and_setups_are_arimaa_only() {
        let s = StartConfig::for_game::<Amazons>(Some(6), None).unwrap();
        let g: Amazons = s.start(&mut seeded_rng(1, 0)).unwrap().position();
        assert_eq!(g.size(), 6);
        let e = StartConfig::for_game::<TicTacToe>(Some(4), None).unwrap_err();
        assert!(e.to_string().contains("--size 4"), "{e}");
        let e = StartConfig::for_game::<Gomoku>(None, Some("random")).unwrap_err();
        assert!(e.to_string().contains("Arimaa only"), "{e}");
    }

    #[test]
    fn arimaa_setups_come_from_the_archives_and_the_seed() {
        let s = StartConfig::for_game::<Arimaa>(None, None).unwrap();
        assert!(s.openings_name.starts_with("archive:"));
        let a: Arimaa = s.start(&mut seeded_rng(5, 3)).unwrap().position();
        let b: Arimaa = s.start(&mut seeded_rng(5, 3)).unwrap().position();
        assert_eq!(a.to_text(), b.to_text());
        let differ = (0..20).any(|i| {
            let c: Arimaa = s.start(&mut seeded_rng(5, i)).unwrap().position();
            c.to_text() != a.to_text()
        });
        assert!(differ);
        let std = StartConfig::for_game::<Arimaa>(None, Some("standard")).unwrap();
        let g: Arimaa = std.start(&mut seeded_rng(1, 0)).unwrap().position();
        assert_eq!(g.to_text(), Arimaa::new().to_text());
        assert!(StartConfig::for_game::<Arimaa>(None, Some("/nonexistent.jsonl")).is_err());
    }

    #[test]
    fn a_random_opening_follows_the_start_and_is_named() {
        let s = StartConfig::standard::<Pentago>().with_random_opening(6);
        assert_eq!(s.openings_name, "standard + 6 random plies");
        let a: Pentago = s.start(&mut seeded_rng(2, 7)).unwrap().position();
        let b: Pentago = s.start(&mut seeded_rng(2, 7)).unwrap().position();
        assert_eq!(a.ply(), 6);
        assert_eq!(a.to_text(), b.to_text());
        let plain: Pentago = StartConfig::standard::<Pentago>()
            .start(&mut seeded_rng(2, 7))
            .unwrap()
            .position();
        assert_eq!(plain.ply(), 0);
    }
}
