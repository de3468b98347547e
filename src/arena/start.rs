//! Where the games of a match or tournament start: the standard position at
//! a board size, or for Arimaa the position after two setups drawn (as
//! self-play draws them) from the shipped arimaa.com archives, from a file
//! of imported records, or at random.

use super::ArenaError;
use crate::game::{Arimaa, Game};
use crate::selfplay::run::{setups_from_file, shipped_setups, Openings, SelfplayGame};
use crate::util::SeededRng;
use std::path::Path;
use std::sync::Arc;

/// The start of every game of a match: board size and openings.
#[derive(Clone, Debug)]
pub struct StartConfig {
    /// Board side length.
    pub size: usize,
    pub openings: Openings,
    /// How reports name the openings: `standard`, `archive:...`,
    /// `random`, `file:PATH`.
    pub openings_name: String,
}

impl StartConfig {
    /// The standard position of `G` at its standard size.
    pub fn standard<G: Game>() -> Self {
        StartConfig {
            size: G::DEFAULT_SIZE,
            openings: Openings::Standard,
            openings_name: "standard".into(),
        }
    }

    /// Checks `size` (default: the game's standard) against `G` and
    /// resolves the Arimaa setups: `None` for the shipped archives,
    /// `random`, `standard`, or a JSONL file of imported Arimaa records.
    /// Other games take no setups.
    pub fn for_game<G: SelfplayGame>(
        size: Option<usize>,
        setups: Option<&str>,
    ) -> Result<Self, ArenaError> {
        let size = size.unwrap_or(G::DEFAULT_SIZE);
        G::with_size(size).map_err(|e| ArenaError::Options(format!("--size {size}: {e}")))?;
        let (openings, openings_name) = if G::NAME == Arimaa::NAME {
            match setups {
                None => {
                    let (sampler, name) =
                        shipped_setups().map_err(|e| ArenaError::Options(e.to_string()))?;
                    (Openings::Setups(Arc::new(sampler)), name)
                }
                Some("random") => (Openings::RandomSetups, "random".into()),
                Some("standard") => (Openings::Standard, "standard".into()),
                Some(file) => {
                    let sampler = setups_from_file(Path::new(file))
                        .map_err(|e| ArenaError::Options(format!("--setups {file}: {e}")))?;
                    (Openings::Setups(Arc::new(sampler)), format!("file:{file}"))
                }
            }
        } else {
            if let Some(s) = setups {
                return Err(ArenaError::Options(format!(
                    "--setups {s}: setups are for Arimaa only, not {}",
                    G::NAME
                )));
            }
            (Openings::Standard, "standard".into())
        };
        Ok(StartConfig {
            size,
            openings,
            openings_name,
        })
    }

    /// The start of a game, drawing Arimaa setups from `rng` (the game's
    /// own stream, so starts do not depend on the thread count).
    pub fn start<G: SelfplayGame>(&self, rng: &mut SeededRng) -> Result<G, String> {
        G::selfplay_start(self.size, &self.openings, rng).map(|(g, _setups)| g)
    }

    /// `start` as a function for [`super::play_match_from`].
    pub fn starter<G: SelfplayGame>(
        &self,
    ) -> impl Fn(&mut SeededRng) -> Result<G, String> + Sync + '_ {
        move |rng| self.start::<G>(rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Amazons, Gomoku, TicTacToe};
    use crate::util::seeded_rng;

    #[test]
    fn sizes_are_checked_and_setups_are_arimaa_only() {
        let s = StartConfig::for_game::<Amazons>(Some(6), None).unwrap();
        let g: Amazons = s.start(&mut seeded_rng(1, 0)).unwrap();
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
        let a: Arimaa = s.start(&mut seeded_rng(5, 3)).unwrap();
        let b: Arimaa = s.start(&mut seeded_rng(5, 3)).unwrap();
        assert_eq!(a.to_text(), b.to_text());
        let differ = (0..20).any(|i| {
            let c: Arimaa = s.start(&mut seeded_rng(5, i)).unwrap();
            c.to_text() != a.to_text()
        });
        assert!(differ);
        let std = StartConfig::for_game::<Arimaa>(None, Some("standard")).unwrap();
        let g: Arimaa = std.start(&mut seeded_rng(1, 0)).unwrap();
        assert_eq!(g.to_text(), Arimaa::new().to_text());
        assert!(StartConfig::for_game::<Arimaa>(None, Some("/nonexistent.jsonl")).is_err());
    }
}
