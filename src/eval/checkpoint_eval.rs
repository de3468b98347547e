//! Predictions of a checkpoint's model over a dataset split, in batches on
//! any candle device, gathered into [`GroupedMetrics`].

use super::{EvalError, GroupedMetrics};
use crate::checkpoint::Checkpoint;
use crate::dataset::{Dataset, Split, StreamConfig, StreamLoader};
use crate::encode::{plane_bridge, EncoderKey, Perspective, PlaneBridge};
use crate::model::OutputActivation;
use candle_core::Device;

/// Refuses a checkpoint whose game or encoder (name and version) is not the
/// dataset's, naming both.
pub fn check_compatible(ckpt: &Checkpoint, dataset: &Dataset) -> Result<(), EvalError> {
    let spec = dataset.spec();
    if ckpt.config.game != spec.game {
        return Err(EvalError::GameMismatch {
            what: format!("checkpoint {}", ckpt.dir.display()),
            expected: ckpt.config.game.clone(),
            dataset: dataset.dir().to_path_buf(),
            found: spec.game,
        });
    }
    let enc = &ckpt.config.encoder;
    if enc.name != spec.encoder.name || enc.version != spec.encoder.version {
        return Err(EvalError::EncoderMismatch {
            checkpoint: ckpt.dir.clone(),
            checkpoint_encoder: enc.name.clone(),
            checkpoint_version: enc.version,
            dataset: dataset.dir().to_path_buf(),
            dataset_encoder: spec.encoder.name,
            dataset_version: spec.encoder.version,
        });
    }
    Ok(())
}

/// How the checkpoint reads the dataset's planes for values: as they are
/// (`None`), or through the [`PlaneBridge`] from the dataset's game and
/// encoder to its own (whole-turn Arimaa positions for a network trained
/// one step at a time). Anything else is [`check_compatible`]'s error.
pub fn value_bridge(
    ckpt: &Checkpoint,
    dataset: &Dataset,
) -> Result<Option<PlaneBridge>, EvalError> {
    let exact = check_compatible(ckpt, dataset);
    if exact.is_ok() {
        return Ok(None);
    }
    let spec = dataset.spec();
    let bridge = plane_bridge(
        EncoderKey {
            game: &spec.game,
            encoder: &spec.encoder.name,
            version: spec.encoder.version,
        },
        EncoderKey {
            game: &ckpt.config.game,
            encoder: &ckpt.config.encoder.name,
            version: ckpt.config.encoder.version,
        },
    );
    match bridge {
        Some(b) => Ok(Some(b)),
        None => exact.map(|_| None),
    }
}

/// A model output on `output`'s scale as a probability of winning for the
/// side to move (`side_to_move` 0 = first player).
pub fn to_label_scale(
    value: f32,
    output: OutputActivation,
    perspective: Perspective,
    side_to_move: u8,
) -> f32 {
    let p = match output {
        OutputActivation::Sigmoid => value,
        OutputActivation::Tanh => (value + 1.0) / 2.0,
        OutputActivation::Identity => ((value + 1.0) / 2.0).clamp(0.0, 1.0),
    };
    match perspective {
        Perspective::FirstPlayer if side_to_move == 1 => 1.0 - p,
        _ => p,
    }
}

/// One row's prediction, as [`predict_rows`] hands it over.
#[derive(Clone, Copy, Debug)]
pub struct PredictedRow<'a> {
    /// On the label scale.
    pub prediction: f32,
    pub label: f32,
    pub ply: u32,
    pub plies_to_end: u32,
    /// Empty unless the rows were streamed `with_text`.
    pub game_id: &'a str,
}

/// Runs the checkpoint's model over every row of `split` (every row for
/// `None`) in batches of `batch` on `device`; `each` sees every row's
/// prediction with its game.
pub fn predict_checkpoint(
    ckpt: &Checkpoint,
    dataset: &Dataset,
    split: Option<Split>,
    device: &Device,
    batch: usize,
    each: impl FnMut(PredictedRow<'_>),
) -> Result<(), EvalError> {
    if batch == 0 {
        return Err(EvalError::InvalidArgument {
            field: "batch",
            expected: "at least 1".into(),
            found: "0".into(),
        });
    }
    let rows = StreamConfig {
        split,
        batch_size: batch,
        buffer_rows: batch,
        with_text: true,
        ..StreamConfig::default()
    };
    predict_rows(ckpt, dataset, rows, device, each)
}

/// Runs the checkpoint's model over the rows `rows` selects, in its batches
/// on `device`; `each` sees every row's prediction (game ids where `rows`
/// asks for text). The checkpoint must read the dataset
/// ([`value_bridge`]).
pub fn predict_rows(
    ckpt: &Checkpoint,
    dataset: &Dataset,
    rows: StreamConfig,
    device: &Device,
    mut each: impl FnMut(PredictedRow<'_>),
) -> Result<(), EvalError> {
    let bridge = value_bridge(ckpt, dataset)?;
    let model = ckpt.model(device)?;
    let output = model.output();
    let perspective = ckpt.config.encoder.perspective;
    let loader = StreamLoader::new(dataset, rows)?;
    for b in loader.epoch_tensors(0, device) {
        let b = b?;
        let planes = match &bridge {
            Some(bridge) => bridge.apply(&b.planes)?,
            None => b.planes,
        };
        let values = model
            .value(&planes, b.globals.as_ref())?
            .flatten_all()?
            .to_dtype(candle_core::DType::F32)?
            .to_vec1::<f32>()?;
        let labels = b.labels.flatten_all()?.to_vec1::<f32>()?;
        for i in 0..b.len {
            each(PredictedRow {
                prediction: to_label_scale(values[i], output, perspective, b.side_to_move[i]),
                label: labels[i],
                ply: b.ply[i],
                plies_to_end: b.plies_to_end[i],
                game_id: b.text.get(i).map_or("", |t| t.game_id.as_str()),
            });
        }
    }
    Ok(())
}

/// [`predict_checkpoint`] gathered into metrics.
pub fn evaluate_checkpoint(
    ckpt: &Checkpoint,
    dataset: &Dataset,
    split: Option<Split>,
    device: &Device,
    batch: usize,
) -> Result<GroupedMetrics, EvalError> {
    let mut m = GroupedMetrics::default();
    predict_checkpoint(ckpt, dataset, split, device, batch, |r| {
        m.push_in_game(r.game_id, r.prediction, r.label, r.ply, r.plies_to_end)
    })?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_and_perspective() {
        let s = Perspective::SideToMove;
        assert_eq!(to_label_scale(0.7, OutputActivation::Sigmoid, s, 1), 0.7);
        assert_eq!(to_label_scale(0.5, OutputActivation::Tanh, s, 0), 0.75);
        assert_eq!(to_label_scale(3.0, OutputActivation::Identity, s, 0), 1.0);
        let f = Perspective::FirstPlayer;
        assert_eq!(to_label_scale(0.5, OutputActivation::Tanh, f, 1), 0.25);
        assert_eq!(to_label_scale(0.5, OutputActivation::Tanh, f, 0), 0.75);
    }
}
