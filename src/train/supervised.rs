//! Supervised regression of a candle model on dataset labels: mean squared
//! error between the model's value and the game result (+1 win, 0 draw,
//! -1 loss, in the encoder's perspective), mini-batches from the loader,
//! any optimizer of [`crate::optim`].

use super::TrainError;
use crate::dataset::{Batch, Dataset, Loader, Split};
use crate::encode::Perspective;
use crate::model::{build, seeded_init, ModelConfig};
use crate::optim::{AnyOptimizer, OptimizerConfig};
use crate::util::seeded_rng;
use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SupervisedConfig {
    pub model: ModelConfig,
    pub optimizer: OptimizerConfig,
    pub epochs: usize,
    pub batch_size: usize,
    pub seed: u64,
    pub perspective: Perspective,
}

/// Loss and accuracy after each epoch.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EpochMetrics {
    pub epoch: usize,
    pub train_mse: f64,
    pub valid_mse: Option<f64>,
    /// Share of decisive validation positions whose value has the sign of
    /// the result.
    pub valid_accuracy: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct SupervisedReport {
    pub epochs: Vec<EpochMetrics>,
    pub train_positions: u64,
    pub valid_positions: u64,
}

fn targets(batch: &Batch, perspective: Perspective) -> Vec<f32> {
    batch
        .labels
        .iter()
        .zip(&batch.side_to_move)
        .map(|(&l, &s)| {
            let v = 2.0 * l - 1.0;
            match perspective {
                Perspective::SideToMove => v,
                Perspective::FirstPlayer if s == 0 => v,
                Perspective::FirstPlayer => -v,
            }
        })
        .collect()
}

fn inputs(batch: &Batch, device: &Device) -> candle_core::Result<Tensor> {
    let features = (batch.planes.len() + batch.globals.len()) / batch.len.max(1);
    let planes_per = batch.planes.len() / batch.len.max(1);
    let globals_per = features - planes_per;
    let mut x = Vec::with_capacity(batch.len * features);
    for i in 0..batch.len {
        x.extend_from_slice(&batch.planes[i * planes_per..(i + 1) * planes_per]);
        x.extend_from_slice(&batch.globals[i * globals_per..(i + 1) * globals_per]);
    }
    Tensor::from_vec(x, (batch.len, features), device)
}

/// Trains a fresh model on the train split of `data`, validating on the
/// valid split after every epoch. Returns the weights and the metrics.
pub fn train_supervised(
    data: &Dataset,
    cfg: &SupervisedConfig,
    device: &Device,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<(VarMap, SupervisedReport), TrainError> {
    let features = data.spec().encoder.planes_len() + data.spec().encoder.globals;
    if cfg.model.inputs() != features {
        return Err(TrainError::Config(format!(
            "the model reads {} features but the dataset's encoder '{}' gives {features}",
            cfg.model.inputs(),
            data.spec().encoder.name
        )));
    }
    let varmap = VarMap::new();
    let model = build(
        &cfg.model,
        VarBuilder::from_varmap(&varmap, DType::F32, device),
    )?;
    // candle's CPU generator cannot be seeded: draw the first weights here.
    seeded_init(&varmap, &cfg.model, &mut seeded_rng(cfg.seed, 0), device)?;
    let mut opt = AnyOptimizer::new(varmap.all_vars(), &cfg.optimizer)?;
    let train = Loader::new(
        data,
        Some(Split::Train),
        cfg.batch_size,
        cfg.seed,
        true,
        false,
    )?;
    let valid = Loader::new(
        data,
        Some(Split::Valid),
        cfg.batch_size,
        cfg.seed,
        false,
        false,
    )?;
    let mut report = SupervisedReport {
        train_positions: train.len() as u64,
        valid_positions: valid.len() as u64,
        ..Default::default()
    };
    if train.is_empty() {
        return Err(TrainError::Config("the train split is empty".into()));
    }
    for epoch in 0..cfg.epochs {
        let (mut sum, mut n) = (0.0f64, 0usize);
        for batch in train.epoch(epoch as u64) {
            let x = inputs(&batch, device)?;
            let y = Tensor::from_vec(targets(&batch, cfg.perspective), batch.len, device)?;
            let loss = (model.forward(&x)? - y)?.sqr()?.mean_all()?;
            opt.backward_step(&loss)?;
            sum += loss.to_scalar::<f32>()? as f64 * batch.len as f64;
            n += batch.len;
        }
        let mut m = EpochMetrics {
            epoch: epoch + 1,
            train_mse: sum / n.max(1) as f64,
            ..Default::default()
        };
        if !valid.is_empty() {
            let (mut se, mut cnt, mut right, mut decisive) = (0.0f64, 0usize, 0usize, 0usize);
            for batch in valid.epoch(0) {
                let x = inputs(&batch, device)?;
                let out = model.forward(&x)?.to_vec1::<f32>()?;
                for (v, t) in out.iter().zip(targets(&batch, cfg.perspective)) {
                    se += ((v - t) as f64).powi(2);
                    cnt += 1;
                    if t != 0.0 {
                        decisive += 1;
                        right += ((*v > 0.0) == (t > 0.0)) as usize;
                    }
                }
            }
            m.valid_mse = Some(se / cnt.max(1) as f64);
            m.valid_accuracy = (decisive > 0).then(|| right as f64 / decisive as f64);
        }
        tracing::info!(?m, "epoch done");
        report.epochs.push(m);
        if let Some(p) = progress {
            p.inc(1);
        }
    }
    Ok((varmap, report))
}
