//! Positions from game records: replay each record through the game's rules,
//! filter games and positions, and build a dataset of encoded positions.
//!
//! * [`filter`]: which games (termination, ratings) and which positions
//!   (the last K of each game) are kept;
//! * [`from_record`]: one record -> one [`PositionRow`](crate::dataset::PositionRow)
//!   per position, labelled with the result for the side to move;
//! * [`GameRowsBuilder`]: the one row builder, for records and for games
//!   just played ([`played_rows`]);
//! * [`PolicyTargets`]: the policy target a position gets (none, or the
//!   move played where the player chose it);
//! * [`build`]: record files -> a sharded dataset, in parallel, with a report;
//! * [`children`]: a row's position and every legal move's position, encoded,
//!   for ranking the move played (comparison training, move prediction);
//! * [`search_labels`]: a dataset relabelled with a search's values of its
//!   positions (search-value targets).

pub mod build;
pub mod children;
mod error;
pub mod filter;
pub mod from_record;
mod game_rows;
mod policy_targets;
pub mod search_labels;

pub use build::{
    build_dataset, first_record_info, BuildOptions, BuildReport, DroppedByFilter, StageSeconds,
};
pub use error::PositionsError;
pub use filter::{DropReason, Dropped, Filters, Terminations};
pub use from_record::{record_outcome, record_rows, StageTimes};
pub use game_rows::{played_rows, GameHeader, GameRowsBuilder};
pub use policy_targets::PolicyTargets;
pub use search_labels::{label_by_search, SearchLabelReport, SearchLabels};
