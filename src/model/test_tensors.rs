//! Seeded random tensors for tests, and the comparisons the model tests
//! share. candle's `Tensor::randn` draws from an unseeded generator on the
//! CPU, so a tolerance failure could not be replayed; these take a seed.

use crate::util::{seeded_rng, SeededRng};
use candle_core::{Device, Result, Shape, Tensor};
use rand::RngExt;

pub struct SeededTensors(SeededRng);

impl SeededTensors {
    pub fn new(seed: u64) -> Self {
        Self(seeded_rng(seed, 0x7e57))
    }

    /// Normal draws with this mean and standard deviation (Box-Muller).
    pub fn randn<S: Into<Shape>>(
        &mut self,
        mean: f32,
        std: f32,
        shape: S,
        dev: &Device,
    ) -> Result<Tensor> {
        let shape = shape.into();
        let v: Vec<f32> = (0..shape.elem_count())
            .map(|_| {
                let u = 1.0 - self.0.random::<f32>();
                let a = std::f32::consts::TAU * self.0.random::<f32>();
                mean + std * (-2.0 * u.ln()).sqrt() * a.cos()
            })
            .collect();
        Tensor::from_vec(v, shape, dev)
    }

    /// Uniform draws in [lo, hi).
    pub fn rand<S: Into<Shape>>(
        &mut self,
        lo: f32,
        hi: f32,
        shape: S,
        dev: &Device,
    ) -> Result<Tensor> {
        let shape = shape.into();
        let v: Vec<f32> = (0..shape.elem_count())
            .map(|_| lo + (hi - lo) * self.0.random::<f32>())
            .collect();
        Tensor::from_vec(v, shape, dev)
    }
}

/// The largest absolute difference between two f32 tensors of one shape.
pub fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
    max_abs(&(a - b).unwrap())
}

/// The largest absolute value of an f32 tensor.
pub fn max_abs(a: &Tensor) -> f32 {
    a.abs()
        .unwrap()
        .flatten_all()
        .unwrap()
        .max(0)
        .unwrap()
        .to_scalar::<f32>()
        .unwrap()
}
