//! `plies`: learn board-game evaluation functions from played games and
//! self-play, and serve them to game-tree search.
//!
//! The crate follows one chain, each stage a module:
//! game rules ([`game`]) -> players ([`search`]) -> records ([`record`]) ->
//! encoders ([`encode`]) -> Arrow datasets ([`dataset`]) -> candle models
//! ([`model`]) trained with [`optim`] by [`train`] -> checkpoints
//! ([`checkpoint`]) -> evaluators ([`infer`]) -> matches ([`arena`]) and
//! reports ([`report`]).

// First: its `with_game!` macro is used by the modules after it.
#[macro_use]
pub mod games;

pub mod arena;
pub mod bench;
pub mod checkpoint;
pub mod dataset;
pub mod encode;
pub mod eval;
pub mod evolve;
pub mod experiment;
pub mod game;
pub mod hub;
pub mod improve;
pub mod infer;
pub mod model;
pub mod optim;
pub mod positions;
pub mod protocol;
pub mod record;
pub mod report;
pub mod search;
pub mod selfplay;
pub mod train;
pub mod tune;
pub mod util;
