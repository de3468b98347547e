//! Seeded dropout: masks that are a pure function of (seed, training step,
//! layer, element), so runs with dropout repeat exactly and a resumed run
//! draws the masks an uninterrupted one would have drawn.
//!
//! candle's `ops::dropout` draws from an unseeded generator; this replaces
//! it. The trainer sets the context around each training forward:
//!
//! ```
//! use plies::model::dropout::{self, Dropout};
//! use candle_core::{Device, Tensor};
//! let d = Dropout::new(0.5, "hidden");
//! let x = Tensor::ones((2, 8), candle_core::DType::F32, &Device::Cpu).unwrap();
//! let a = dropout::with_step(7, 3, || d.forward(&x, true)).unwrap();
//! let b = dropout::with_step(7, 3, || d.forward(&x, true)).unwrap();
//! assert_eq!(a.to_vec2::<f32>().unwrap(), b.to_vec2::<f32>().unwrap());
//! ```
//!
//! Element `i` of a layer's activations is kept when
//! `u = top24(fmix64(derive_seed(seed, step) ^ layer_salt ^ i)) / 2^24 >= p`,
//! and kept values are scaled by `1 / (1 - p)` (inverted dropout). The mask
//! is drawn on the CPU and moved to the activations' device. In eval mode
//! (`train == false`) or with `p == 0` the layer is the identity. The
//! context is per thread (each grid job trains on its own thread); outside
//! [`with_step`] the context is (seed 0, step 0).

use std::cell::Cell;

use candle_core::{Result, Tensor};

use crate::dataset::split::{fmix64, fnv1a64};
use crate::util::derive_seed;

thread_local! {
    static CONTEXT: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// Runs `f` with the dropout context (seed, step) set on this thread, and
/// restores the previous context afterwards.
pub fn with_step<T>(seed: u64, step: u64, f: impl FnOnce() -> T) -> T {
    let prev = CONTEXT.with(|c| c.replace((seed, step)));
    let out = f();
    CONTEXT.with(|c| c.set(prev));
    out
}

/// The (seed, step) the masks are drawn for on this thread.
pub fn context() -> (u64, u64) {
    CONTEXT.with(Cell::get)
}

/// A dropout layer with rate `p` and a name that separates its masks from
/// the other layers'.
#[derive(Clone, Debug)]
pub struct Dropout {
    p: f64,
    salt: u64,
}

impl Dropout {
    /// `p` in `[0, 1)` (checked by the model configs); `layer` names the layer.
    pub fn new(p: f64, layer: &str) -> Self {
        Dropout {
            p,
            salt: fnv1a64(layer.as_bytes()),
        }
    }

    /// The rate.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// The mask (0 or `1/(1-p)`) of `n` elements for (seed, step).
    pub fn mask(&self, seed: u64, step: u64, n: usize) -> Vec<f32> {
        let base = derive_seed(seed, step) ^ self.salt;
        let scale = (1.0 / (1.0 - self.p)) as f32;
        let threshold = (self.p * (1u64 << 24) as f64).ceil() as u64;
        (0..n as u64)
            .map(|i| {
                let u = fmix64(base ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) >> 40;
                if u >= threshold {
                    scale
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// The activations with this thread's mask applied when `train`.
    pub fn forward(&self, x: &Tensor, train: bool) -> Result<Tensor> {
        if !train || self.p <= 0.0 {
            return Ok(x.clone());
        }
        let (seed, step) = context();
        let m = Tensor::from_vec(self.mask(seed, step, x.elem_count()), x.shape(), x.device())?
            .to_dtype(x.dtype())?;
        x * m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device};

    #[test]
    fn masks_are_pure_functions_of_seed_step_and_layer() {
        let d = Dropout::new(0.25, "hidden");
        let a = d.mask(1, 5, 4000);
        assert_eq!(a, d.mask(1, 5, 4000));
        assert_ne!(a, d.mask(1, 6, 4000));
        assert_ne!(a, d.mask(2, 5, 4000));
        assert_ne!(a, Dropout::new(0.25, "hidden.1").mask(1, 5, 4000));
        let dropped = a.iter().filter(|&&v| v == 0.0).count() as f64 / 4000.0;
        assert!((dropped - 0.25).abs() < 0.03, "{dropped}");
        let kept = a.iter().find(|&&v| v != 0.0).unwrap();
        assert!((kept - 1.0 / 0.75).abs() < 1e-6);
    }

    #[test]
    fn identity_in_eval_mode_and_context_is_scoped() {
        let d = Dropout::new(0.5, "h");
        let x = Tensor::ones((3, 50), DType::F32, &Device::Cpu).unwrap();
        let e = d.forward(&x, false).unwrap().to_vec2::<f32>().unwrap();
        assert!(e.iter().flatten().all(|&v| v == 1.0));
        let a = with_step(9, 2, || {
            assert_eq!(context(), (9, 2));
            d.forward(&x, true).unwrap().to_vec2::<f32>().unwrap()
        });
        assert_eq!(context(), (0, 0));
        assert!(a.iter().flatten().all(|&v| v == 0.0 || v == 2.0));
        assert!(a.iter().flatten().any(|&v| v == 0.0));
        let b = with_step(9, 2, || {
            d.forward(&x, true).unwrap().to_vec2::<f32>().unwrap()
        });
        assert_eq!(a, b);
    }
}
