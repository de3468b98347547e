//! Played games -> dataset rows, and databases of games made by players
//! (fixed or learning while they play).

pub mod chunks;
mod database;
mod learning_network;
pub mod run;
mod shard;

pub use database::{generate_database, DatabaseConfig, SideSpec};
pub use learning_network::{LearningNetwork, PlayedGame};
pub use shard::{Shard, ShardError};
