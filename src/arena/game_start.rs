//! Where one game of a match starts: a root position and the opening moves
//! played from it before the players choose.

use crate::game::Game;

/// A game's start: the root (the standard position, or Arimaa's position
/// after its setups) and the opening moves played from it (random plies).
/// The players are told the opening move by move
/// ([`crate::search::GameSession::observe`]), so that a player which
/// rebuilds positions from the moves since the start (OpenSpiel's bot) can
/// play after any opening.
#[derive(Clone, Debug)]
pub struct GameStart<G: Game> {
    pub root: G,
    pub opening: Vec<G::Move>,
}

impl<G: Game> GameStart<G> {
    /// The position the players start from: the root after the opening.
    pub fn position(&self) -> G {
        let mut g = self.root.clone();
        for &m in &self.opening {
            g.play(m);
        }
        g
    }
}

/// A position with no opening moves before it.
impl<G: Game> From<G> for GameStart<G> {
    fn from(root: G) -> Self {
        GameStart {
            root,
            opening: Vec::new(),
        }
    }
}
