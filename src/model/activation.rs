//! Hidden-unit activations.

use candle_core::{Result, Tensor};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Activation {
    /// Elliott symmetric: `y = b*x / (1 + |b*x|)`, a cheap sigmoid-like
    /// squashing into (-1, 1) with steepness `b` (Patist & Wiering use 5).
    Elliott {
        beta: f64,
    },
    Tanh,
    Relu,
}

/// The Elliott symmetric activation on a tensor.
pub fn elliott(x: &Tensor, beta: f64) -> Result<Tensor> {
    let bx = (x * beta)?;
    let denom = (bx.abs()? + 1.0)?;
    bx / denom
}

impl Activation {
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match *self {
            Activation::Elliott { beta } => elliott(x, beta),
            Activation::Tanh => x.tanh(),
            Activation::Relu => x.relu(),
        }
    }

    /// Scalar value, for the plain-Rust path.
    #[inline]
    pub fn apply(&self, x: f32) -> f32 {
        match *self {
            Activation::Elliott { beta } => {
                let bx = beta as f32 * x;
                bx / (1.0 + bx.abs())
            }
            Activation::Tanh => x.tanh(),
            Activation::Relu => x.max(0.0),
        }
    }

    /// Scalar derivative dy/dx at pre-activation `x`.
    #[inline]
    pub fn derivative(&self, x: f32) -> f32 {
        match *self {
            Activation::Elliott { beta } => {
                let b = beta as f32;
                let d = 1.0 + (b * x).abs();
                b / (d * d)
            }
            Activation::Tanh => {
                let t = x.tanh();
                1.0 - t * t
            }
            Activation::Relu => (x > 0.0) as u8 as f32,
        }
    }
}
