//! The self-play improvement loop (`plies loop`): search makes the data,
//! the data trains a value and policy network, the network searches the
//! next generation's games (AlphaZero's scheme).
//!
//! | file | concept |
//! | --- | --- |
//! | `config.rs` | [`LoopConfig`], the JSON file of a loop |
//! | `generation.rs` | one generation's self-play with policy targets |
//! | `run/mod.rs` | [`run_loop`]: the generations, the loop directory's claim and layout |
//! | `run/stages.rs` | a generation's stages, each resumable: self-play, the window, training, the gate, the anchors |
//! | `run/network.rs` | the matches' players as values: a network loaded once ([`Network`]), the bootstrap ([`LoopPlayer`]) |
//! | `run/summary.rs` | the gate's decision, the anchors' ratings, stage times and the reports made of them |
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
    decide, generation_dir, run_loop, AnchorResult, GateResult, LoopPlayer, LoopSummary, Network,
    StageTimes, CONFIG_FILE,
};
