//! The validation pass that ends an epoch: the value loss (plus the
//! policy's cross-entropy where trained, since this loss picks `best/`)
//! and, for comparison training, the comparison loss and top-1 rate. With
//! source weights every figure weighs its rows as training does.

use candle_core::DType;

use super::batch::{labels_for, move_rows, VALID_SAMPLE_STREAM};
use super::session::Session;
use super::FitError;
use crate::train::comparison::Comparer;
use crate::train::loss::{to_probability, value_loss};
use crate::train::metrics::ValidStats;
use crate::train::policy_loss::policy_cross_entropy;
use crate::util::derive_seed;

/// What a validation pass measured (`None` where it has no figure).
pub(super) struct Validation {
    /// The loss of the trained objective.
    pub loss: Option<f64>,
    pub mse: Option<f64>,
    pub mae: Option<f64>,
    pub acc: Option<f64>,
    /// The comparison objective's top-1 rate.
    pub top1: Option<f64>,
}

impl Session<'_> {
    /// Runs the model over the validation rows.
    pub fn validate(&self) -> Result<Validation, FitError> {
        let cfg = self.cfg;
        let output = cfg.model.output();
        let net = self.trainee.net.as_ref();
        let mut vs = ValidStats::default();
        let (mut cmp_loss, mut cmp_top1, mut cmp_n) = (0.0, 0.0, 0usize);
        for (i, batch) in self.loaders.valid.epoch_tensors(0, self.device).enumerate() {
            let b = batch?;
            let labels = labels_for(&b, self.inputs.encoder.perspective)?;
            let forward = net.forward(&b.planes, b.globals.as_ref(), false)?;
            let value = forward.value;
            let weights = b.weights.as_ref();
            let mut l = value_loss(cfg.loss, output, &value, &labels, weights)?
                .to_dtype(DType::F64)?
                .to_scalar::<f64>()?;
            // The validation loss (which picks `best/`) is the trained one.
            if let (Some(target), Some(logits)) = (&b.policy, &forward.policy) {
                let ce = policy_cross_entropy(logits, target, weights)?;
                l += cfg.policy_weight * ce.to_dtype(DType::F64)?.to_scalar::<f64>()?;
            }
            let probs = to_probability(output, &value)?.to_vec1::<f32>()?;
            let row_weights = weights.map(|w| w.to_vec1::<f32>()).transpose()?;
            vs.add(l, &probs, &labels.to_vec1::<f32>()?, row_weights.as_deref());
            if let (Some(cmp), Some(x)) = (&cfg.comparison, &self.inputs.children) {
                let comparer = Comparer {
                    net,
                    expander: x.as_ref(),
                    cfg: cmp,
                    shape: self.inputs.spec.encoder.shape,
                    device: self.device,
                    vars: &self.trainee.tvars,
                };
                // The same draws every epoch, so epochs compare.
                let seed = derive_seed(derive_seed(cfg.seed, VALID_SAMPLE_STREAM), i as u64);
                let c = comparer.run(&move_rows(&b), 1.0, seed, false)?;
                cmp_loss += c.loss_sum;
                cmp_top1 += c.top1_sum;
                cmp_n += c.positions;
            }
        }
        let (value_valid_loss, mse, mae, acc) = vs.summary();
        let (loss, top1) = match &cfg.comparison {
            Some(cmp) if cmp_n > 0 => (
                Some(cmp_loss / cmp_n as f64 + cmp.value_weight * value_valid_loss.unwrap_or(0.0)),
                Some(cmp_top1 / cmp_n as f64),
            ),
            Some(_) => (None, None),
            None => (value_valid_loss, None),
        };
        Ok(Validation {
            loss,
            mse,
            mae,
            acc,
            top1,
        })
    }
}
