//! Supervised regression of a candle model on dataset labels: mean squared
//! error between the model's value and the game result in the encoder's
//! perspective, on the model's output scale (sigmoid models: 1 win, 0.5
//! draw, 0 loss; the others: +1, 0, -1), mini-batches from the loader,
//! any optimizer of [`crate::optim`].

use super::TrainError;
use crate::dataset::{Batch, Dataset, Loader, Split};
use crate::encode::Perspective;
use crate::model::{build, seeded_init, trainable_vars, ModelConfig, OutputActivation};
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

fn targets(batch: &Batch, perspective: Perspective, output: OutputActivation) -> Vec<f32> {
    batch
        .labels
        .iter()
        .zip(&batch.side_to_move)
        .map(|(&l, &s)| {
            let l = match perspective {
                Perspective::SideToMove => l,
                Perspective::FirstPlayer if s == 0 => l,
                Perspective::FirstPlayer => 1.0 - l,
            };
            output.target(l)
        })
        .collect()
}

/// Planes `[B, C, H, W]` and globals `[B, G]` (`None` without globals).
fn inputs(
    batch: &Batch,
    shape: [usize; 3],
    globals: usize,
    device: &Device,
) -> candle_core::Result<(Tensor, Option<Tensor>)> {
    let [c, h, w] = shape;
    let planes = Tensor::from_slice(&batch.planes, (batch.len, c, h, w), device)?;
    let g = (globals > 0)
        .then(|| Tensor::from_slice(&batch.globals, (batch.len, globals), device))
        .transpose()?;
    Ok((planes, g))
}

/// Trains a fresh model on the train split of `data`, validating on the
/// valid split after every epoch. Returns the weights and the metrics.
pub fn train_supervised(
    data: &Dataset,
    cfg: &SupervisedConfig,
    device: &Device,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<(VarMap, SupervisedReport), TrainError> {
    let shape = data.spec().encoder.shape;
    let n_globals = data.spec().encoder.globals;
    cfg.model.check_input(shape, n_globals)?;
    let output = cfg.model.output();
    let varmap = VarMap::new();
    let model = build(
        &cfg.model,
        VarBuilder::from_varmap(&varmap, DType::F32, device),
    )?;
    // candle's CPU generator cannot be seeded: draw the first weights here.
    seeded_init(&varmap, &cfg.model, &mut seeded_rng(cfg.seed, 0), device)?;
    let mut opt = AnyOptimizer::new(trainable_vars(&varmap), &cfg.optimizer)?;
    // Only the training batches are shuffled; none are dropped.
    let loader =
        |split, shuffle| Loader::new(data, Some(split), cfg.batch_size, cfg.seed, shuffle, false);
    let train = loader(Split::Train, true)?;
    let valid = loader(Split::Valid, false)?;
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
            let (x, g) = inputs(&batch, shape, n_globals, device)?;
            let y = Tensor::from_vec(targets(&batch, cfg.perspective, output), batch.len, device)?;
            let v = model.forward(&x, g.as_ref(), true)?.value;
            let loss = (v - y)?.sqr()?.mean_all()?;
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
                let (x, g) = inputs(&batch, shape, n_globals, device)?;
                let out = model.value(&x, g.as_ref())?.to_vec1::<f32>()?;
                let center = output.center();
                for (v, t) in out.iter().zip(targets(&batch, cfg.perspective, output)) {
                    se += ((v - t) as f64).powi(2);
                    cnt += 1;
                    if t != center {
                        decisive += 1;
                        right += ((*v > center) == (t > center)) as usize;
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
