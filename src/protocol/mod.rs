//! Engine protocols: serving a player to outside controllers.
//!
//! [`aei`] is the Arimaa Engine Interface (as spoken by pyrimaa's
//! controllers, the arimaa.com gameroom client and Arimaa GUIs), with the
//! players of [`player`] (`random`, `alphabeta`, `greedy` and `mcts`, with
//! `material`, `random` or a trained checkpoint as evaluator) and the
//! clock handling of [`timecontrol`]. `plies engine aei` runs it on
//! stdin/stdout or a socket.

pub mod aei;
pub mod gomocup;
pub mod player;
#[cfg(test)]
mod tests;
pub mod timecontrol;

pub use aei::{run_aei, run_aei_with, short_board, AeiConfig};
pub use gomocup::{run_gomocup, GomocupConfig};
pub use player::{EngineKind, EnginePlayer, EngineSpec, SearchTree};
pub use timecontrol::TimeControl;
