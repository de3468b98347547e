//! What the loader serves: [`StreamBatch`] (plain vectors),
//! [`TensorBatch`] (tensors on a device) and the per-row [`RowText`].

use candle_core::Tensor;

/// One batch as plain vectors, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamBatch {
    /// `len * C*H*W` values (empty when the planes stay int8, below).
    pub planes: Vec<f32>,
    /// The same values as stored, int8, when the batch goes to a GPU as
    /// int8
    /// ([`StreamLoader::epoch_tensors_via_int8`](super::StreamLoader::epoch_tensors_via_int8));
    /// empty otherwise.
    pub planes_int8: Vec<i8>,
    /// `len * G` values.
    pub globals: Vec<f32>,
    /// Result for the side to move, one per row.
    pub labels: Vec<f32>,
    /// 0 = first player, one per row.
    pub side_to_move: Vec<u8>,
    /// Plies played before the position, one per row.
    pub ply: Vec<u32>,
    /// Plies from the position to the end of the game, one per row.
    pub plies_to_end: Vec<u32>,
    /// Rows in this batch.
    pub len: usize,
    /// Per row, with [`StreamConfig::with_text`](super::StreamConfig::with_text);
    /// empty otherwise.
    pub text: Vec<RowText>,
    /// `len * policy_len` target probabilities
    /// ([`StreamConfig::policy_len`](super::StreamConfig::policy_len)).
    pub policy: Vec<f32>,
    /// Each row's weight in the loss, with
    /// [`StreamConfig::source_weights`](super::StreamConfig::source_weights);
    /// empty otherwise.
    pub weights: Vec<f32>,
}

/// A row's text fields: what its position was and which move was played.
#[derive(Clone, Debug, PartialEq)]
pub struct RowText {
    pub game_id: String,
    pub position: String,
    /// `None` at a game's final position.
    pub move_played: Option<String>,
}

/// One batch as tensors on a device, plus the side fields as vectors.
#[derive(Clone, Debug)]
pub struct TensorBatch {
    /// `[B, C, H, W]` f32.
    pub planes: Tensor,
    /// `[B, G]` f32; `None` when the encoder has no global features.
    pub globals: Option<Tensor>,
    /// `[B, 1]` f32.
    pub labels: Tensor,
    pub side_to_move: Vec<u8>,
    pub ply: Vec<u32>,
    pub plies_to_end: Vec<u32>,
    pub len: usize,
    /// Per row, with [`StreamConfig::with_text`](super::StreamConfig::with_text);
    /// empty otherwise.
    pub text: Vec<RowText>,
    /// `[B, policy_len]` target probabilities, with
    /// [`StreamConfig::policy_len`](super::StreamConfig::policy_len); rows
    /// without a target are zeros.
    pub policy: Option<Tensor>,
    /// `[B]` f32 weights of the rows in the loss, with
    /// [`StreamConfig::source_weights`](super::StreamConfig::source_weights);
    /// `None`: every row weighs 1.
    pub weights: Option<Tensor>,
}
