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
    /// What the search that chose the move thought of the moves (format 3;
    /// `None` for games without a search behind them and older datasets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyTarget>,
}

/// A search's distribution over the moves of one position: policy indices
/// (the game's [`Game::policy_index`](crate::game::Game::policy_index), the
/// index a policy head scores a move by) with their probabilities, summing
/// to 1. MCTS gives its root visit shares, alpha-beta its best move alone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PolicyTarget {
    pub index: Vec<u32>,
    pub prob: Vec<f32>,
}

impl PolicyTarget {
    /// All the probability on one index (a search that names a best move).
    pub fn best(index: u32) -> Self {
        PolicyTarget {
            index: vec![index],
            prob: vec![1.0],
        }
    }

    /// Why the target is not a distribution (`None`: it is): equal lengths,
    /// at least one entry, finite non-negative probabilities summing to 1
    /// within 1e-3, no index twice.
    pub fn problem(&self) -> Option<String> {
        if self.index.len() != self.prob.len() {
            return Some(format!(
                "{} indices but {} probabilities",
                self.index.len(),
                self.prob.len()
            ));
        }
        if self.index.is_empty() {
            return Some("no entries".into());
        }
        if let Some(p) = self.prob.iter().find(|p| !(p.is_finite() && **p >= 0.0)) {
            return Some(format!("probability {p}"));
        }
        let sum: f32 = self.prob.iter().sum();
        if (sum - 1.0).abs() > 1e-3 {
            return Some(format!("probabilities summing to {sum}"));
        }
        let mut seen = self.index.clone();
        seen.sort_unstable();
        if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
            return Some(format!("index {} twice", w[0]));
        }
        None
    }
}

impl PositionRow {
    /// A row for unit tests: position `ply` of a `len`-ply game, source
    /// `unit`, label 0.5, no planes, globals, move or game details.
    #[cfg(test)]
    pub(crate) fn for_tests(game_id: String, ply: u32, len: u32) -> Self {
        PositionRow {
            game_id,
            ply,
            plies_to_end: len - 1 - ply,
            side_to_move: (ply % 2) as u8,
            position: String::new(),
            planes: Vec::new(),
            globals: Vec::new(),
            label: 0.5,
            move_played: None,
            source: "unit".into(),
            termination: None,
            white_rating: None,
            black_rating: None,
            policy: None,
        }
    }
}

/// The rows of one game in columnar form: the game's fields once, the
/// per-position fields as flat vectors. [`DatasetWriter::push_game`](super::DatasetWriter::push_game)
/// takes it without a heap allocation per position.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GameRows {
    pub game_id: String,
    pub source: String,
    pub termination: Option<String>,
    pub white_rating: Option<u32>,
    pub black_rating: Option<u32>,
    /// Per position: ply, plies to end, side to move (0 or 1), label.
    pub ply: Vec<u32>,
    pub plies_to_end: Vec<u32>,
    pub side_to_move: Vec<u8>,
    pub label: Vec<f32>,
    /// The positions' texts, concatenated; position `i` ends at `position_ends[i]`.
    pub positions: String,
    pub position_ends: Vec<usize>,
    /// The moves played, concatenated; `None` in `move_ends` for no move.
    pub moves: String,
    pub move_ends: Vec<Option<usize>>,
    /// `C*H*W` planes per position, concatenated.
    pub planes: Vec<i8>,
    /// `G` globals per position, concatenated.
    pub globals: Vec<f32>,
    /// Per position, the search's policy target; empty: none for any.
    pub policies: Vec<Option<PolicyTarget>>,
}

impl GameRows {
    /// Number of positions.
    pub fn len(&self) -> usize {
        self.ply.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ply.is_empty()
    }

    /// Text of position `i`.
    pub fn position(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.position_ends[i - 1] };
        &self.positions[start..self.position_ends[i]]
    }

    /// The move played from position `i`, if any.
    pub fn move_played(&self, i: usize) -> Option<&str> {
        let end = self.move_ends[i]?;
        let start = self.move_ends[..i]
            .iter()
            .rev()
            .find_map(|e| *e)
            .unwrap_or(0);
        Some(&self.moves[start..end])
    }

    /// The policy target of position `i`, if any.
    pub fn policy(&self, i: usize) -> Option<&PolicyTarget> {
        self.policies.get(i).and_then(Option::as_ref)
    }

    /// Appends one position (game fields are set by the caller).
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        ply: u32,
        plies_to_end: u32,
        side_to_move: u8,
        position: &str,
        move_played: Option<&str>,
        planes: &[i8],
        globals: &[f32],
    ) {
        self.ply.push(ply);
        self.plies_to_end.push(plies_to_end);
        self.side_to_move.push(side_to_move);
        self.label.push(0.0);
        self.positions.push_str(position);
        self.position_ends.push(self.positions.len());
        self.move_ends.push(move_played.map(|m| {
            self.moves.push_str(m);
            self.moves.len()
        }));
        self.planes.extend_from_slice(planes);
        self.globals.extend_from_slice(globals);
    }

    /// The rows one by one (`planes_len` and `globals_len` per position).
    pub fn rows(&self, planes_len: usize, globals_len: usize) -> Vec<PositionRow> {
        (0..self.len())
            .map(|i| PositionRow {
                game_id: self.game_id.clone(),
                ply: self.ply[i],
                plies_to_end: self.plies_to_end[i],
                side_to_move: self.side_to_move[i],
                position: self.position(i).to_string(),
                planes: self.planes[i * planes_len..(i + 1) * planes_len].to_vec(),
                globals: self.globals[i * globals_len..(i + 1) * globals_len].to_vec(),
                label: self.label[i],
                move_played: self.move_played(i).map(str::to_string),
                source: self.source.clone(),
                termination: self.termination.clone(),
                white_rating: self.white_rating,
                black_rating: self.black_rating,
                policy: self.policy(i).cloned(),
            })
            .collect()
    }
}
