//! [`Rows`]: decoded rows kept column by column, planes still `i8`. The
//! decoders fill chunks of them and the assembler's shuffle buffer is one.

use super::RowText;
use crate::dataset::error::DatasetError;
use crate::dataset::schema::Columns;
use crate::dataset::source_weights::SourceWeights;

/// Rows of one shard's split, as decoded.
#[derive(Default)]
pub(super) struct Rows {
    pub(super) planes: Vec<i8>,
    pub(super) globals: Vec<f32>,
    pub(super) labels: Vec<f32>,
    pub(super) side_to_move: Vec<u8>,
    pub(super) ply: Vec<u32>,
    pub(super) plies_to_end: Vec<u32>,
    pub(super) text: Vec<RowText>,
    /// Dense policy targets, `policy_len` per row (empty without).
    pub(super) policy: Vec<f32>,
    /// Each row's weight in the loss (empty without source weights).
    pub(super) weights: Vec<f32>,
}

impl Rows {
    pub(super) fn len(&self) -> usize {
        self.labels.len()
    }

    pub(super) fn push_from(
        &mut self,
        cols: &Columns<'_>,
        i: usize,
        with_text: bool,
        policy_len: usize,
        weights: &SourceWeights,
    ) -> Result<(), DatasetError> {
        if !weights.is_empty() {
            self.weights.push(weights.weight_of(cols.source.value(i)));
        }
        if policy_len > 0 {
            let at = self.policy.len();
            self.policy.resize(at + policy_len, 0.0);
            if let Some(p) = cols.policy(i)? {
                for (&k, &q) in p.index.iter().zip(&p.prob) {
                    let slot = self.policy[at..].get_mut(k as usize).ok_or_else(|| {
                        cols.row_error(
                            i,
                            "policy_index",
                            format!("indices below {policy_len} (the policy head's size)"),
                            k.to_string(),
                        )
                    })?;
                    *slot = q;
                }
            }
        }
        if with_text {
            self.text.push(RowText {
                game_id: cols.game_id.value(i).to_string(),
                position: cols.position.value(i).to_string(),
                move_played: (!arrow_array::Array::is_null(cols.move_played, i))
                    .then(|| cols.move_played.value(i).to_string()),
            });
        }
        self.planes.extend_from_slice(cols.planes(i));
        self.globals.extend_from_slice(cols.globals(i));
        self.labels.push(cols.label.value(i));
        self.side_to_move.push(cols.side_to_move.value(i));
        self.ply.push(cols.ply.value(i));
        self.plies_to_end.push(cols.plies_to_end.value(i));
        Ok(())
    }

    pub(super) fn append(&mut self, mut other: Rows) {
        self.planes.append(&mut other.planes);
        self.globals.append(&mut other.globals);
        self.labels.append(&mut other.labels);
        self.side_to_move.append(&mut other.side_to_move);
        self.ply.append(&mut other.ply);
        self.plies_to_end.append(&mut other.plies_to_end);
        self.text.append(&mut other.text);
        self.policy.append(&mut other.policy);
        self.weights.append(&mut other.weights);
    }
}
