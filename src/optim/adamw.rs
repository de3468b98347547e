//! A serde mirror of candle-nn's `ParamsAdamW`.

use serde::{Deserialize, Serialize};

use super::{non_negative, unit_interval, OptimError};

/// Hyper-parameters of `candle_nn::AdamW` (the fields of
/// `candle_nn::ParamsAdamW`, which has no serde support), with the same
/// defaults. Missing fields deserialize to their defaults.
///
/// candle's AdamW matches `torch.optim.AdamW` (decoupled weight decay,
/// bias-corrected moments, eps added after the square root).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdamWConfig {
    /// Learning rate (default 0.001).
    pub lr: f64,
    /// Decay of the first moment (default 0.9).
    pub beta1: f64,
    /// Decay of the second moment (default 0.999).
    pub beta2: f64,
    /// Added to the denominator after the square root (default 1e-8).
    pub eps: f64,
    /// Decoupled weight decay: `p *= 1 - lr * weight_decay` (default 0.01).
    pub weight_decay: f64,
}

impl Default for AdamWConfig {
    fn default() -> Self {
        candle_nn::ParamsAdamW::default().into()
    }
}

impl AdamWConfig {
    /// Checks the hyper-parameters the way PyTorch does (lr, eps and weight
    /// decay finite and non-negative, betas in `[0, 1)`).
    pub fn validate(&self) -> Result<(), OptimError> {
        const OWNER: &str = "AdamW";
        non_negative(OWNER, "lr", self.lr)?;
        unit_interval(OWNER, "beta1", self.beta1)?;
        unit_interval(OWNER, "beta2", self.beta2)?;
        non_negative(OWNER, "eps", self.eps)?;
        non_negative(OWNER, "weight_decay", self.weight_decay)?;
        Ok(())
    }
}

impl From<AdamWConfig> for candle_nn::ParamsAdamW {
    fn from(c: AdamWConfig) -> Self {
        Self {
            lr: c.lr,
            beta1: c.beta1,
            beta2: c.beta2,
            eps: c.eps,
            weight_decay: c.weight_decay,
        }
    }
}

impl From<candle_nn::ParamsAdamW> for AdamWConfig {
    fn from(p: candle_nn::ParamsAdamW) -> Self {
        Self {
            lr: p.lr,
            beta1: p.beta1,
            beta2: p.beta2,
            eps: p.eps,
            weight_decay: p.weight_decay,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_candle_and_round_trip() {
        let c = AdamWConfig::default();
        let p: candle_nn::ParamsAdamW = c.into();
        let d = candle_nn::ParamsAdamW::default();
        assert_eq!(
            (p.lr, p.beta1, p.beta2, p.eps, p.weight_decay),
            (d.lr, d.beta1, d.beta2, d.eps, d.weight_decay)
        );
        assert!(c.validate().is_ok());
        let bad = AdamWConfig { beta2: 1.0, ..c };
        assert!(bad.validate().is_err());
    }
}
