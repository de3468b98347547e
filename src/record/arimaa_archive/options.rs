//! What an import keeps.

use crate::game::arimaa::Termination;
use serde::{Deserialize, Serialize};

/// What to keep. The default keeps every game that replays.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ImportOptions {
    /// Keep a game only if both players' ratings are known and at least this.
    pub min_rating: Option<i32>,
    /// Keep only games that ended in one of these ways (`None`: all).
    pub terminations: Option<Vec<Termination>>,
    /// Fail on the first game that does not replay instead of skipping it.
    pub stop_on_error: bool,
}
