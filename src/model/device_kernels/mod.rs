//! Custom ops of the models with a GPU side of their own and a CPU twin
//! that the host tests pin:
//! - [`mdrnn_sweep`]: a CUDA kernel of `kernels/` (compiled to PTX by
//!   `build.rs` with the `cuda` feature), whose twin runs the same loops
//!   in the same order. Forward only: it serves inference.
//! - [`batch_norm`]: batch normalisation in training mode (+ ReLU), CUDA
//!   kernels whose twin runs the same loops with the same roundings.
//! - [`conv`]: the convolution on cuDNN, forward and both gradients, for
//!   training and candle-path inference; its twin is candle's own
//!   convolution.

pub mod batch_norm;
pub mod conv;
#[cfg(feature = "cuda")]
pub(crate) mod conv_cudnn;
pub mod mdrnn_sweep;

use candle_core::{CpuStorage, DType, Layout, Result, Tensor};
use std::cell::Cell;

thread_local! {
    static ON_THE_CPU: Cell<bool> = const { Cell::new(false) };
}

/// Whether the device ops ([`conv`], [`batch_norm`]) take `x`: on CUDA in
/// f32 or bf16, unless candle's ops are forced
/// ([`crate::model::kernels::candle_ops_forced`]); and on the CPU inside
/// [`with_device_ops_on_the_cpu`], so tests run the path a GPU takes
/// through the ops' CPU sides.
pub fn device_ops_take(x: &Tensor) -> bool {
    let here = (cfg!(feature = "cuda") && x.device().is_cuda())
        || (x.device().is_cpu() && ON_THE_CPU.with(Cell::get));
    here && matches!(x.dtype(), DType::F32 | DType::BF16)
        && !crate::util::candle_ops::candle_ops_forced()
}

/// Runs `f` with the device ops taking CPU tensors on this thread.
pub fn with_device_ops_on_the_cpu<R>(f: impl FnOnce() -> R) -> R {
    /// Puts the setting back, also when `f` panics.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ON_THE_CPU.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(ON_THE_CPU.with(|c| c.replace(true)));
    f()
}

/// The contiguous f32 data of a CPU storage, or an error naming `op`.
fn f32_data<'a>(op: &str, s: &'a CpuStorage, l: &Layout) -> Result<&'a [f32]> {
    let CpuStorage::F32(v) = s else {
        candle_core::bail!("{op}: f32 tensors only");
    };
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&v[a..b]),
        None => candle_core::bail!("{op}: contiguous tensors only"),
    }
}

/// Threads per block for the kernels (a multiple of the warp).
#[cfg(feature = "cuda")]
pub(crate) const THREADS: u32 = 256;
