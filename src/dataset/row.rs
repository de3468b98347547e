//! One row of a dataset: one position of one game.

use serde::{Deserialize, Serialize};

/// One position of a played game, encoded, with its label and source fields.
///
/// The split is not a field: it is a function of `game_id` (see
/// [`SplitRule::split_of`](super::SplitRule::split_of)) and is stored in its
/// own column by the writer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PositionRow {
    /// Unique per game; all rows of a game share it.
    pub game_id: String,
    /// Plies played before this position (0 at the start).
    pub ply: u32,
    /// Plies from this position to the end of the game (0 at the final position).
    pub plies_to_end: u32,
    /// 0 = first player, 1 = second player.
    pub side_to_move: u8,
    /// The position as text, so it can be re-encoded by another encoder.
    pub position: String,
    /// Encoded planes, `C*H*W` values, from the side to move's point of view.
    pub planes: Vec<i8>,
    /// Global features, `G` values.
    pub globals: Vec<f32>,
    /// Result for the side to move: 1 win, 0 loss, 0.5 draw.
    pub label: f32,
    /// The move played from this position; `None` at the final position.
    pub move_played: Option<String>,
    /// Where the game came from, e.g. `selfplay:network-vs-expert` or a file name.
    pub source: String,
    /// How the game ended (e.g. `checkmate`, `time`), where known.
    pub termination: Option<String>,
    pub white_rating: Option<u32>,
    pub black_rating: Option<u32>,
}
