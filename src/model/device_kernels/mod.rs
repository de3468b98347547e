//! Custom ops of the models with a GPU side of their own and a CPU twin
//! that the host tests pin:
//! - [`mdrnn_sweep`]: a CUDA kernel of `kernels/` (compiled to PTX by
//!   `build.rs` with the `cuda` feature), whose twin runs the same loops
//!   in the same order. Forward only: it serves inference.
//! - [`conv`]: the convolution on cuDNN, forward and both gradients, for
//!   training and candle-path inference; its twin is candle's own
//!   convolution.

pub mod conv;
#[cfg(feature = "cuda")]
pub(crate) mod conv_cudnn;
pub mod mdrnn_sweep;

use candle_core::{CpuStorage, Layout, Result};

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
