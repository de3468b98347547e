//! The self-play improvement loop (`plies loop`): search makes the data,
//! the data trains a value and policy network, the network searches the
//! next generation's games (AlphaZero's scheme).
//!
//! | file | concept |
//! | --- | --- |
//! | `config.rs` | [`LoopConfig`], the JSON file of a loop |
//! | `generation.rs` | one generation's self-play with policy targets |
//! | `run.rs` | the generations and their stages, resumable; the gate, the anchors, the reports |
//! | `error.rs` | [`LoopError`] |
//!
//! The policy is over the game's policy indices ([`Game::policy_index`]);
//! a game whose moves have no single point (Arimaa's turns) gets the
//! search's visit shares only once its moves are steps with points (see
//! `docs/loop.md`).
//!
//! [`Game::policy_index`]: crate::game::Game::policy_index

mod config;
mod error;
pub mod generation;
mod run;

pub use config::{AnchorSettings, GateSettings, LoopConfig, SelfplaySettings, TrainSettings};
pub use error::LoopError;
pub use run::{
    decide, generation_dir, network_spec, run_loop, AnchorResult, GateResult, LoopSummary,
    StageTimes, CONFIG_FILE,
};
