//! Matches and tournaments between players, for every game: games in
//! parallel with colours alternating and seeds fixed, from the standard
//! start at any board size or, for Arimaa, from sampled setups; results as
//! wins/losses/draws, equity and Elo differences with 95% intervals, and
//! for round robins one rating per player fitted on all games.

mod elo;
mod error;
mod game_loop;
mod game_start;
mod match_journal;
mod match_play;
mod players;
mod rating_chart;
mod rating_fit;
mod result;
mod round_robin;
mod start;
mod tournament_tables;

pub use elo::{elo_from_score, EloEstimate};
pub use error::ArenaError;
pub use game_loop::{play_game, play_game_from, PlayedGame};
pub use game_start::GameStart;
pub use match_journal::{JournalGame, MatchJournal};
pub use match_play::{play_match, play_match_from, play_match_journaled, StartFn};
pub use players::build_players;
pub use rating_chart::{write_ratings_png, RatingBar};
pub use rating_fit::{fit_ratings, Anchor, FitOptions, FittedRating, PairScore, RatingFitError};
pub use result::{fmt_elo, wilson_interval, MatchResult, Wdl};
pub use round_robin::{
    result_text, round_robin, schedule, GameLog, PairResult, PlayerRating, RoundRobin,
    RoundRobinConfig,
};
pub use start::StartConfig;
