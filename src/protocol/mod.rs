//! Engine protocols: serving a player to outside controllers.
//!
//! [`aei`] is the Arimaa Engine Interface (as spoken by pyrimaa's
//! controllers, the arimaa.com gameroom client and Arimaa GUIs), serving
//! any Arimaa player of the one spec grammar ([`aei_spec`]) with the clock
//! handling of [`timecontrol`]; `plies engine aei` runs it on stdin/stdout
//! or a socket. [`gomocup`] serves any Gomoku player to Gomocup managers.

pub mod aei;
pub mod aei_spec;
pub mod clock;
pub mod gomocup;
mod line;
#[cfg(test)]
mod tests;
pub mod timecontrol;

pub use aei::{run_aei, run_aei_with, short_board, AeiConfig};
pub use aei_spec::EngineSpec;
pub use clock::{Reply, ReplyClock};
pub use gomocup::{run_gomocup, GomocupConfig};
pub use timecontrol::TimeControl;
