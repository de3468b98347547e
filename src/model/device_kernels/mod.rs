//! Custom ops of the models whose GPU side is a CUDA kernel of `kernels/`
//! (compiled to PTX by `build.rs` with the `cuda` feature) and whose CPU
//! side is the kernel's exact twin: the same loops in the same order, so the host tests
//! pin the arithmetic the GPU runs. Forward only: they serve inference;
//! training goes through candle's ops, which carry gradients.

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
