//! Arimaa: bitboards, steps (with pushes, pulls, freezing and captures),
//! distinct full-turn generation, notation, setups and the game itself,
//! whole turns ([`Arimaa`]) or one step at a time ([`ArimaaSteps`]).
//!
//! ```
//! use plies::game::{Game, arimaa::Arimaa};
//! let g = Arimaa::new();
//! let mut moves = Vec::new();
//! g.legal_moves(&mut moves);
//! assert_eq!(moves.len(), 3353); // the standard opening
//! ```

pub mod bitboard;
pub mod capture;
mod game;
pub mod goal;
pub mod listing;
mod movegen;
mod moves;
pub mod notation;
mod piece;
mod position;
pub mod random_steps;
mod setup;
mod step;
mod steps_game;
mod termination;
mod zobrist;

pub use game::{with_movegen, Arimaa};
pub use movegen::MoveGen;
pub use moves::Move;
pub use piece::{parse_side, side_letter, side_name, Piece, PieceType};
pub use position::Position;
pub use setup::{Setup, SetupError, SetupSampler};
pub use step::{IllegalStep, Step, StepKind, TurnState};
pub use steps_game::{ArimaaSteps, StepMove, STEP_POLICY_PLANES};
pub use termination::Termination;
