//! Game rules: the [`Game`] trait every rules engine implements, the
//! [`Side`] and [`Outcome`] vocabulary, and one module per game.
//!
//! Hot paths (search, self-play, encoding) are generic over `G: Game`, so
//! calls are statically dispatched; the game list above this module
//! (`games`) names each game on the command line.
//!
//! ```
//! use plies::game::{Game, TicTacToe};
//! let mut g = TicTacToe::new();
//! for m in ["b2", "a1", "c3"] {
//!     let mv = g.parse_move(m).unwrap();
//!     g.play(mv);
//! }
//! assert_eq!(g.ply(), 3);
//! assert!(g.outcome().is_none());
//! ```

pub mod amazons;
pub mod amazons_features;
pub mod arimaa;
pub mod atari_go;
pub mod connect_four;
mod error;
pub mod gomoku;
pub mod gomoku_patterns;
mod grid;
mod outcome;
pub mod pentago;
#[cfg(test)]
pub(crate) mod test_support;
mod tictactoe;

pub use amazons::{Amazons, AmazonsMove};
pub use arimaa::{Arimaa, ArimaaSteps};
pub use atari_go::{AtariGo, AtariGoMove};
pub use connect_four::{ConnectFour, ConnectFourMove};
pub use error::GameError;
pub use gomoku::{Gomoku, GomokuMove};
pub use grid::longest_line_through;
pub use outcome::{Outcome, Side};
pub use pentago::{Pentago, PentagoMove};
pub use tictactoe::{TicTacToe, TttMove};

use std::fmt::Debug;
use std::hash::Hash;

/// A two-player game state. Cloning is cheap; `play` mutates in place.
pub trait Game: Clone + Debug + Send + Sync + 'static {
    /// One full move (for Arimaa a whole turn).
    type Move: Copy + Eq + Hash + Debug + Send + Sync + 'static;

    /// Short machine name used on the command line and in files.
    const NAME: &'static str;

    /// Side length of the standard board.
    const DEFAULT_SIZE: usize;

    /// Planes of board points a policy head scores moves on
    /// ([`Game::policy_index`]): 1 where a move is known by one point, more
    /// where moves share a point (Pentago's eight rotations after one
    /// placement), so that every move has a logit of its own.
    const POLICY_PLANES: usize = 1;

    /// The standard starting position.
    fn new() -> Self;

    /// The starting position on a `size` x `size` board. Games played on
    /// one size accept only that size.
    fn with_size(size: usize) -> Result<Self, GameError> {
        if size == Self::DEFAULT_SIZE {
            Ok(Self::new())
        } else {
            Err(GameError::BadSize {
                game: Self::NAME,
                size,
                allowed: Self::DEFAULT_SIZE.to_string(),
            })
        }
    }

    /// Side length of this game's board.
    fn size(&self) -> usize {
        Self::DEFAULT_SIZE
    }
    /// The side whose turn it is.
    fn side_to_move(&self) -> Side;
    /// Number of moves played since the start.
    fn ply(&self) -> u32;
    /// Appends every legal move to `out` (which is cleared first).
    /// Empty when the game is over.
    fn legal_moves(&self, out: &mut Vec<Self::Move>);
    /// Plays a move that `legal_moves` returned.
    fn play(&mut self, mv: Self::Move);
    /// `Some` once the game has ended.
    fn outcome(&self) -> Option<Outcome>;
    /// The move in the game's text notation.
    fn move_to_string(&self, mv: Self::Move) -> String;
    /// Parses a move in this position; errors name the token and why.
    fn parse_move(&self, text: &str) -> Result<Self::Move, GameError>;
    /// The position as one line of text (round-trips through `from_text`).
    fn to_text(&self) -> String;
    /// Reads a position written by `to_text`.
    fn from_text(text: &str) -> Result<Self, GameError>;
    /// A multi-line picture for people.
    fn render(&self) -> String;

    /// A random legal move, `None` when there is none (the game is over).
    ///
    /// Uniform over the legal moves; games may override it with a faster
    /// sampler that has the same distribution. The default fills `scratch`
    /// with [`Game::legal_moves`] and picks one uniformly; overrides may use
    /// `scratch` as working space or ignore it.
    fn random_move(
        &self,
        rng: &mut crate::util::SeededRng,
        scratch: &mut Vec<Self::Move>,
    ) -> Option<Self::Move> {
        use rand::RngExt;
        self.legal_moves(scratch);
        if scratch.is_empty() {
            None
        } else {
            Some(scratch[rng.random_range(0..scratch.len())])
        }
    }

    /// Parses and plays a move, refusing an illegal one.
    fn play_str(&mut self, text: &str) -> Result<Self::Move, GameError> {
        let mv = self.parse_move(text)?;
        self.play(mv);
        Ok(mv)
    }

    /// Whether `mv` may be played here. The default looks it up in
    /// [`Game::legal_moves`] (`scratch` is working space); Arimaa, whose
    /// list holds one step order per resulting board, checks the steps.
    fn is_legal(&self, mv: Self::Move, scratch: &mut Vec<Self::Move>) -> bool {
        self.legal_moves(scratch);
        scratch.contains(&mv)
    }

    /// `mv` in the game's notation where it can be written, else as the
    /// program sees it (an Arimaa move with an impossible step).
    fn describe_move(&self, mv: Self::Move) -> String {
        self.move_to_string(mv)
    }

    /// A 64-bit key of what an evaluator sees: the board and the side to
    /// move (not the move history). Equal positions have equal keys; search
    /// caches and transposition tables index by it. The default hashes
    /// [`Game::to_text`]; games override it with something cheaper.
    fn hash_key(&self) -> u64 {
        hash_of(&self.to_text())
    }

    /// The policy logit a policy head scores `mv` by:
    /// `plane * size * size + point`, the point `row * size + col` (row 0 at
    /// the top) and the plane below [`Game::POLICY_PLANES`]: the stone's
    /// point for placement games, the destination for Amazons, the
    /// placement on the rotation's plane for Pentago. `None` for games whose
    /// moves have no single point (Arimaa): searches then give their moves
    /// equal priors.
    fn policy_index(&self, _mv: Self::Move) -> Option<usize> {
        None
    }
}

/// A fixed-seed hash of any hashable value: the same in every run of the
/// same build, so searches that key by it are reproducible.
pub fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x0070_6c69_6573).hash_one(value)
}
