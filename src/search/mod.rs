//! Players: something that picks a move in a position.
//!
//! Players are `Send + Sync` and keep no per-game state: what a player
//! carries from one move to the next (a search tree, an outside program)
//! lives in a [`GameSession`], one per game. The randomness they use comes
//! from the caller's seeded generator, so a match is reproducible from its
//! seed whatever the number of threads.

pub mod alphabeta;
mod budget;
mod error;
pub mod evaluators;
mod expert;
pub mod game_player;
mod greedy;
pub mod mcts;
pub mod mdp;
pub mod naive;
mod option_error;
pub mod policy;
mod random;
mod report;
pub mod scorer;
pub mod spiel_bot;
pub mod steps;
pub mod timed;
pub mod tt;

pub use alphabeta::{search as alphabeta_search, PositionEval, SearchLimits, SearchResult};
pub use budget::{tighter, Budget, StopFlag, CRITICAL_SHARE};
pub use error::SearchError;
pub use expert::ExpertPlayer;
pub use greedy::greedy_choice;
pub use greedy::GreedyPlayer;
pub use naive::NaivePlayer;
pub use option_error::OptionError;
pub use policy::PolicyPlayer;
pub use random::RandomPlayer;
pub use report::{Score, SearchInfo, Searched, TreeInfo};

use crate::game::Game;
use crate::util::SeededRng;

/// A player's answer: a legal move, or why there is none.
pub type Chosen<G> = Result<<G as Game>::Move, SearchError>;

/// A player's answer with what its search saw.
pub type Found<G> = Result<Searched<<G as Game>::Move>, SearchError>;

/// Sees what a search has found so far (every finished alpha-beta
/// iteration), for an engine's live `info` lines.
pub type Watch<'a> = &'a mut dyn FnMut(&SearchInfo);

/// The legal moves of `state`; none (the game is over) is
/// [`SearchError::NoMoves`].
pub fn legal_or_none<G: Game>(state: &G) -> Result<Vec<G::Move>, SearchError> {
    let mut moves = Vec::new();
    state.legal_moves(&mut moves);
    if moves.is_empty() {
        Err(SearchError::NoMoves)
    } else {
        Ok(moves)
    }
}

pub trait Player<G: Game>: Send + Sync {
    /// A short name for reports.
    fn name(&self) -> String;
    /// Picks a legal move within `budget` and the player's own limits;
    /// the game must not be over.
    fn choose_within(&self, state: &G, budget: &Budget, rng: &mut SeededRng) -> Chosen<G>;

    /// [`Player::choose_within`] with no budget beyond the player's own
    /// limits.
    fn choose(&self, state: &G, rng: &mut SeededRng) -> Chosen<G> {
        self.choose_within(state, &Budget::UNLIMITED, rng)
    }

    /// [`Player::choose_within`], also saying what the search saw; players
    /// that search override it (and answer `choose_within` through it).
    fn search(&self, state: &G, budget: &Budget, rng: &mut SeededRng, _: Watch) -> Found<G> {
        self.choose_within(state, budget, rng).map(Searched::plain)
    }

    /// A session for one game. Game loops (matches, self-play) open one per
    /// player and game, tell it every move played, and ask it for moves;
    /// players that keep something between moves (a search tree to reuse,
    /// an outside program's game) override this. The default forwards to
    /// [`Player::choose`].
    fn session(&self) -> Box<dyn GameSession<G> + '_> {
        Box::new(StatelessSession { player: self })
    }
}

/// A player's view of one game, from its start position.
pub trait GameSession<G: Game>: Send {
    /// Picks a legal move in `state`, the position after every move
    /// [`GameSession::observe`] has seen.
    fn choose_within(&mut self, state: &G, budget: &Budget, rng: &mut SeededRng) -> Chosen<G>;

    /// [`GameSession::choose_within`] with no budget beyond the player's
    /// own limits.
    fn choose(&mut self, state: &G, rng: &mut SeededRng) -> Chosen<G> {
        self.choose_within(state, &Budget::UNLIMITED, rng)
    }

    /// [`GameSession::choose_within`], also saying what the search saw
    /// (see [`Player::search`]).
    fn search(&mut self, state: &G, budget: &Budget, rng: &mut SeededRng, _: Watch) -> Found<G> {
        self.choose_within(state, budget, rng).map(Searched::plain)
    }

    /// Told every move of the game, either side's, with the position it was
    /// played in.
    fn observe(&mut self, _before: &G, _mv: G::Move) {}
}

/// The session of a player that keeps nothing between moves.
pub struct StatelessSession<'a, P: ?Sized> {
    pub player: &'a P,
}

impl<G: Game, P: Player<G> + ?Sized> GameSession<G> for StatelessSession<'_, P> {
    fn choose_within(&mut self, state: &G, budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        self.player.choose_within(state, budget, rng)
    }

    fn search(
        &mut self,
        state: &G,
        budget: &Budget,
        rng: &mut SeededRng,
        watch: Watch,
    ) -> Found<G> {
        self.player.search(state, budget, rng, watch)
    }
}

/// Picks uniformly among `candidates` (non-empty).
pub(crate) fn pick<M: Copy>(candidates: &[M], rng: &mut SeededRng) -> M {
    use rand::RngExt;
    candidates[rng.random_range(0..candidates.len())]
}
