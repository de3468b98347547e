//! One batch as the objectives read it: its labels from the encoder's
//! perspective, and its rows with a move played for comparison training.

use candle_core::Tensor;

use crate::dataset::TensorBatch;
use crate::encode::Perspective;
use crate::positions::children::MoveRow;

/// Seed streams of the comparison objective's move sampling.
pub(super) const SAMPLE_STREAM: u64 = 0x636f_6d70;
pub(super) const VALID_SAMPLE_STREAM: u64 = 0x7661_6c69;

/// The batch's rows that have a move played, for comparison training.
pub(super) fn move_rows(b: &TensorBatch) -> Vec<MoveRow> {
    b.text
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            Some(MoveRow {
                game_id: t.game_id.clone(),
                ply: b.ply[i],
                plies_to_end: b.plies_to_end[i],
                position: t.position.clone(),
                played: t.move_played.clone()?,
            })
        })
        .collect()
}

pub(super) fn labels_for(
    b: &TensorBatch,
    perspective: Perspective,
) -> Result<Tensor, candle_core::Error> {
    let flat = b.labels.flatten_all()?;
    match perspective {
        Perspective::SideToMove => Ok(flat),
        Perspective::FirstPlayer => {
            let v: Vec<f32> = flat
                .to_vec1::<f32>()?
                .into_iter()
                .zip(&b.side_to_move)
                .map(|(l, &s)| if s == 0 { l } else { 1.0 - l })
                .collect();
            Tensor::from_vec(v, b.len, b.labels.device())
        }
    }
}
