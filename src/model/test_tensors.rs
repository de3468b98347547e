//! Seeded random tensors for tests, and the comparisons the model tests
//! share. candle's `Tensor::randn` draws from an unseeded generator on the
//! CPU, so a tolerance failure could not be replayed; these take a seed.

use crate::util::{seeded_rng, SeededRng};
use candle_core::{Device, Result, Shape, Tensor, Var};
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

/// Checks `ours(x, w)` against candle's `conv2d` (padding `pad`, stride 1)
/// on a `[b, c, h, w]` input and `f` filters `k` x `k`, all drawn from `rt`:
/// the values to 1e-5, and the gradients of x and w under a random upstream
/// gradient to 1e-5 of their size.
pub fn check_conv_against_candle(
    rt: &mut SeededTensors,
    (b, c, f, h, w): (usize, usize, usize, usize, usize),
    (k, pad): (usize, usize),
    ours: impl Fn(&Var, &Var) -> Result<Tensor>,
) -> Result<()> {
    let dev = Device::Cpu;
    let x0 = rt.randn(0f32, 1.0, (b, c, h, w), &dev)?;
    let w0 = rt.randn(0f32, 0.3, (f, c, k, k), &dev)?;
    let (xa, wa) = (Var::from_tensor(&x0)?, Var::from_tensor(&w0)?);
    let (xb, wb) = (Var::from_tensor(&x0)?, Var::from_tensor(&w0)?);
    let ya = ours(&xa, &wa)?;
    let yb = xb.conv2d(&wb, pad, 1, 1, 1)?;
    let what = format!("b{b} c{c} f{f} {h}x{w}");
    assert!(max_diff(&ya, &yb) < 1e-5, "{what}: values");
    let up = rt.randn(0f32, 1.0, ya.shape(), &dev)?;
    let ga = (ya * &up)?.sum_all()?.backward()?;
    let gb = (yb * &up)?.sum_all()?.backward()?;
    for (name, a, b) in [("x", &xa, &xb), ("w", &wa, &wb)] {
        let (a, b) = (ga.get(a).expect("grad"), gb.get(b).expect("grad"));
        let d = max_diff(a, b);
        assert!(d < 1e-5 * max_abs(b).max(1.0), "{what}: d{name} by {d}");
    }
    Ok(())
}
