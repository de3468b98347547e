//! Value losses: mean squared error and binary cross-entropy.
//!
//! Labels are results for the side to move on `[0, 1]` (1 win, 0.5 draw,
//! 0 loss). [`value_loss`] compares them with a model's value on the
//! model's own scale ([`OutputActivation`]):
//!
//! - `mse`: `mean((v - target)^2)` with `target = label` for sigmoid
//!   outputs and `2 * label - 1` for tanh and identity outputs;
//! - `bce`: `-mean(t ln p + (1 - t) ln(1 - p))` with `p = v` (sigmoid) or
//!   `p = (v + 1) / 2` (tanh), `p` clamped to `[1e-7, 1 - 1e-7]` so that a
//!   saturated output gives a large finite loss instead of infinity. The
//!   models return values after their activation; where a logit is
//!   available, [`bce_with_logits`] is the stable form
//!   `max(x, 0) - x t + ln(1 + exp(-|x|))` (candle-nn's
//!   `binary_cross_entropy_with_logit` overflows for |x| near 100).
//!   Identity outputs have no probability scale: `bce` refuses them.
//!
//! With row weights `w` (a run's [`SourceWeights`](crate::dataset::SourceWeights))
//! each mean becomes `sum(w_i l_i) / sum(w_i)` ([`weighted_mean`]).

use candle_core::{Result, Tensor};
use serde::{Deserialize, Serialize};

use crate::model::OutputActivation;

/// Clamp of probabilities in [`bce`].
pub const BCE_EPS: f64 = 1e-7;

/// Which value loss to train with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossKind {
    /// Mean squared error on the model's output scale.
    #[default]
    Mse,
    /// Binary cross-entropy on win probabilities.
    Bce,
}

impl LossKind {
    pub fn name(&self) -> &'static str {
        match self {
            LossKind::Mse => "mse",
            LossKind::Bce => "bce",
        }
    }

    /// Refuses a loss the output activation cannot carry (`bce` with an
    /// identity output).
    pub fn check_output(&self, output: OutputActivation) -> std::result::Result<(), LossError> {
        match (self, output) {
            (LossKind::Bce, OutputActivation::Identity) => Err(LossError::BceNeedsProbability),
            _ => Ok(()),
        }
    }
}

/// A loss that does not fit the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LossError {
    /// `bce` on a model whose output is not a probability.
    #[error(
        "loss bce needs a sigmoid or tanh output (the model's `output` is identity); \
         use --loss mse or a model with \"output\": \"sigmoid\""
    )]
    BceNeedsProbability,
}

/// `mean((pred - target)^2)`.
pub fn mse(pred: &Tensor, target: &Tensor) -> Result<Tensor> {
    weighted_mean(&(pred - target)?.sqr()?, None)
}

/// Binary cross-entropy of probabilities `p` (clamped to
/// `[BCE_EPS, 1 - BCE_EPS]`) against targets `t` in `[0, 1]`, averaged.
pub fn bce(p: &Tensor, t: &Tensor) -> Result<Tensor> {
    weighted_mean(&bce_rows(p, t)?, None)
}

/// The cross-entropy of each row (see [`bce`]).
fn bce_rows(p: &Tensor, t: &Tensor) -> Result<Tensor> {
    let p = p.clamp(BCE_EPS, 1.0 - BCE_EPS)?;
    let one_minus_p = p.affine(-1.0, 1.0)?;
    let one_minus_t = t.affine(-1.0, 1.0)?;
    ((t * p.log()?)? + (one_minus_t * one_minus_p.log()?)?)?.neg()
}

/// The mean of per-row losses `rows` (`[B]`), or with `weights` (`[B]`,
/// above 0) `sum(w_i l_i) / sum(w_i)`.
pub fn weighted_mean(rows: &Tensor, weights: Option<&Tensor>) -> Result<Tensor> {
    match weights {
        None => rows.mean_all(),
        Some(w) => {
            let w = w.to_dtype(rows.dtype())?.reshape(rows.shape())?;
            (rows * &w)?.sum_all()?.div(&w.sum_all()?)
        }
    }
}

/// Binary cross-entropy of logits `x` against targets `t`, in the stable
/// form `max(x, 0) - x t + ln(1 + exp(-|x|))`, averaged.
pub fn bce_with_logits(x: &Tensor, t: &Tensor) -> Result<Tensor> {
    let softplus = (x.abs()?.neg()?.exp()? + 1.0)?.log()?;
    ((x.relu()? - (x * t)?)? + softplus)?.mean_all()
}

/// The training target on the output's scale for labels on `[0, 1]`.
pub fn target(output: OutputActivation, labels01: &Tensor) -> Result<Tensor> {
    match output {
        OutputActivation::Sigmoid => Ok(labels01.clone()),
        _ => labels01.affine(2.0, -1.0),
    }
}

/// A value on the output's scale as a win probability on `[0, 1]`.
pub fn to_probability(output: OutputActivation, value: &Tensor) -> Result<Tensor> {
    match output {
        OutputActivation::Sigmoid => Ok(value.clone()),
        _ => value.affine(0.5, 0.5),
    }
}

/// The loss of values `value` `[B]` (on `output`'s scale) against labels
/// `labels01` `[B]`, each row weighing its `weights` entry where given
/// (see the module docs).
pub fn value_loss(
    kind: LossKind,
    output: OutputActivation,
    value: &Tensor,
    labels01: &Tensor,
    weights: Option<&Tensor>,
) -> Result<Tensor> {
    let rows = match kind {
        LossKind::Mse => (value - target(output, labels01)?)?.sqr()?,
        LossKind::Bce => {
            if let Err(why) = kind.check_output(output) {
                return Err(candle_core::Error::Msg(why.to_string()));
            }
            bce_rows(&to_probability(output, value)?, labels01)?
        }
    };
    weighted_mean(&rows, weights)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Var};

    fn t(v: &[f32]) -> Tensor {
        Tensor::new(v, &Device::Cpu).unwrap()
    }

    fn scalar(x: Tensor) -> f32 {
        x.to_scalar::<f32>().unwrap()
    }

    #[test]
    fn mse_by_hand() {
        // ((0.9-1)^2 + (0.2-0)^2 + (0.5-0.5)^2) / 3 = (0.01 + 0.04) / 3
        let got = scalar(mse(&t(&[0.9, 0.2, 0.5]), &t(&[1.0, 0.0, 0.5])).unwrap());
        assert!((got - 0.05 / 3.0).abs() < 1e-7, "{got}");
        // tanh output: labels map to -1, 1, 0
        let got = scalar(
            value_loss(
                LossKind::Mse,
                OutputActivation::Tanh,
                &t(&[0.5, 0.0, -1.0]),
                &t(&[0.0, 1.0, 0.5]),
                None,
            )
            .unwrap(),
        );
        // (1.5^2 + 1 + 1) / 3
        assert!((got - (2.25 + 2.0) / 3.0).abs() < 1e-6, "{got}");
    }

    #[test]
    fn bce_by_hand() {
        let p = [0.8f32, 0.3, 0.5];
        let y = [1.0f32, 0.0, 0.5];
        let want =
            -((0.8f64).ln() + (0.7f64).ln() + 0.5 * (0.5f64).ln() + 0.5 * (0.5f64).ln()) / 3.0;
        let got = scalar(bce(&t(&p), &t(&y)).unwrap()) as f64;
        assert!((got - want).abs() < 1e-6, "{got} {want}");
        // tanh values 0.6, -0.4, 0 are the same probabilities
        let got2 = scalar(
            value_loss(
                LossKind::Bce,
                OutputActivation::Tanh,
                &t(&[0.6, -0.4, 0.0]),
                &t(&y),
                None,
            )
            .unwrap(),
        ) as f64;
        assert!((got2 - want).abs() < 1e-6, "{got2} {want}");
        // saturated outputs stay finite
        let sat = scalar(bce(&t(&[0.0, 1.0]), &t(&[1.0, 0.0])).unwrap());
        assert!(sat.is_finite() && sat > 15.0, "{sat}");
        assert!(value_loss(
            LossKind::Bce,
            OutputActivation::Identity,
            &t(&[0.0]),
            &t(&[1.0]),
            None,
        )
        .is_err());
    }

    #[test]
    fn weighted_losses_are_the_weighted_means_of_the_rows() {
        let (v, y) = (t(&[0.9, 0.2, 0.5]), t(&[1.0, 0.0, 0.5]));
        let w = t(&[2.0, 1.0, 1.0]);
        for kind in [LossKind::Mse, LossKind::Bce] {
            let plain = scalar(value_loss(kind, OutputActivation::Sigmoid, &v, &y, None).unwrap());
            // Row 0 twice, unweighted, is the weighted loss.
            let (v2, y2) = (t(&[0.9, 0.9, 0.2, 0.5]), t(&[1.0, 1.0, 0.0, 0.5]));
            let twice = value_loss(kind, OutputActivation::Sigmoid, &v2, &y2, None).unwrap();
            let weighted = value_loss(kind, OutputActivation::Sigmoid, &v, &y, Some(&w)).unwrap();
            let (twice, weighted) = (scalar(twice), scalar(weighted));
            assert!(
                (twice - weighted).abs() < 1e-6,
                "{kind:?}: {twice} {weighted}"
            );
            assert!((plain - weighted).abs() > 1e-3, "{kind:?}");
            // Equal weights, whatever their size, are the plain mean.
            let equal = t(&[7.0, 7.0, 7.0]);
            let same = value_loss(kind, OutputActivation::Sigmoid, &v, &y, Some(&equal)).unwrap();
            assert!((scalar(same) - plain).abs() < 1e-6, "{kind:?}");
        }
        // MSE by hand: (2 * 0.01 + 0.04 + 0) / 4
        let got = scalar(weighted_mean(&t(&[0.01, 0.04, 0.0]), Some(&w)).unwrap());
        assert!((got - 0.06 / 4.0).abs() < 1e-7, "{got}");
    }

    #[test]
    fn bce_with_logits_is_stable_and_matches_the_probability_form() {
        let x = [2.0f32, -1.0, 0.0];
        let y = [1.0f32, 0.0, 0.5];
        let sig = |v: f32| 1.0 / (1.0 + (-v).exp());
        let p: Vec<f32> = x.iter().map(|&v| sig(v)).collect();
        let a = scalar(bce_with_logits(&t(&x), &t(&y)).unwrap());
        let b = scalar(bce(&t(&p), &t(&y)).unwrap());
        assert!((a - b).abs() < 1e-6, "{a} {b}");
        // logits of +-100: the loss is 100 for the wrong side, 0 for the right one
        let big = scalar(bce_with_logits(&t(&[100.0, -100.0]), &t(&[0.0, 0.0])).unwrap());
        assert!((big - 50.0).abs() < 1e-3, "{big}");
        // gradient: sigmoid(x) - t, over B
        let v = Var::new(&[3.0f32, -2.0], &Device::Cpu).unwrap();
        let l = bce_with_logits(v.as_tensor(), &t(&[1.0, 1.0])).unwrap();
        let g = l.backward().unwrap();
        let g = g.get(&v).unwrap().to_vec1::<f32>().unwrap();
        assert!((g[0] - (sig(3.0) - 1.0) / 2.0).abs() < 1e-6, "{g:?}");
        assert!((g[1] - (sig(-2.0) - 1.0) / 2.0).abs() < 1e-6, "{g:?}");
    }
}
