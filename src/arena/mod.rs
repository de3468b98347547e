//! Matches between two players: games in parallel with colours
//! alternating and seeds fixed; results as wins/losses/draws, equity and an
//! Elo difference with a 95% interval.

mod elo;
mod error;
mod game_loop;
mod match_play;
mod result;

pub use elo::{elo_from_score, EloEstimate};
pub use error::ArenaError;
pub use game_loop::play_game;
pub use match_play::play_match;
pub use result::{MatchResult, Wdl};
