//! Fused CPU kernels for the value networks, as candle custom ops with
//! their backward passes: a matrix product with bias and activation
//! ([`linear_act`]), a stride-1 convolution as im2col plus one matrix
//! product with bias and activation ([`conv2d_act`]), and a vectorised
//! activation ([`activation`]).
//!
//! For residual towers, activations can live in a bordered channels-last
//! layout (`[B, H+2, W+2, C]`, zero border; [`to_bordered`],
//! [`from_bordered`]) where a 3x3 convolution needs no padding pass
//! ([`conv3x3`], [`conv3x3_infer`], [`Conv3x3Weights`] for weights prepared
//! once; a direct register-tiled kernel where the channel counts fit the
//! CPU's vectors, im2col plus gemm elsewhere), training-mode batch norm,
//! residual add and relu are one op ([`batch_norm_relu`]), a whole residual
//! block in training mode is one op ([`residual_block`]), and heads' 1x1
//! convolutions read it directly ([`conv1x1_from_bordered`]).
//!
//! They run on CPU f32 tensors; on other devices and dtypes each falls back
//! to candle's own ops, so callers need no second code path. [`native`] is
//! that one decision; `PLIES_KERNELS=candle` (or [`with_candle_ops`]) forces
//! the fallback on the CPU, which is how the GPU's path is tested here. Matrix products
//! go through the `gemm` crate with its AVX-512 kernels enabled (the
//! `x86-v4` feature; chosen at run time, AVX2 elsewhere).
//!
//! Backward passes skip the gradient of an input that tracks no gradient
//! (data planes, for instance): candle's own convolution always computes it.

mod act;
mod batch_norm;
mod bordered;
mod cnn3_train;
mod conv;
mod conv1x1;
mod conv3x3;
mod direct3x3;
mod linear;
mod op;
mod residual_block;
mod simd;
mod small_batch;

use candle_core::{DType, Tensor};
use rayon::prelude::*;

pub use crate::util::candle_ops::{candle_ops_forced, with_candle_ops};
pub use act::{activation, bias_act, tanh, Act};
pub use batch_norm::{batch_norm_relu, BatchStats};
pub use bordered::{from_bordered, to_bordered};
pub use cnn3_train::{cnn3_train, Cnn3Params};
pub use conv::{conv2d_act, im2col};
pub use conv1x1::conv1x1_from_bordered;
pub use conv3x3::{conv3x3, conv3x3_infer, conv3x3_pass, Conv3x3Impl, Conv3x3Weights};
pub use linear::linear_act;
pub use residual_block::{residual_block, BlockParams};
pub use simd::{kernel_instruction_sets, processor_name};

/// Whether the fused CPU kernels take `t`: a CPU f32 tensor, unless candle's
/// own ops are forced (`PLIES_KERNELS=candle`, or [`with_candle_ops`] on
/// this thread). The one decision every model and kernel consults, so the
/// path other devices take can be run and tested on the CPU.
pub fn native(t: &Tensor) -> bool {
    t.device().is_cpu() && t.dtype() == DType::F32 && !candle_ops_forced()
}

/// Keeps freed memory in the process (glibc only; elsewhere a no-op).
///
/// glibc serves blocks over 128 KiB (up to 32 MiB, adaptively) with fresh `mmap`s and returns
/// freed heap tops to the OS, so every training step of a batch-1024 network
/// page-faults its activations, gradients and optimizer temporaries in
/// again (a fifth of a cnn3 profile, in the kernel). Raising the mmap and
/// trim thresholds once, at program start, lets `malloc` reuse that memory:
/// training ran ~1.5x faster. One arena for every thread, too: training
/// steps run on rayon's pool threads ([`on_compute_pool`]), and a thread's
/// own arena gives its heaps back when they empty, so a residual net's
/// step faulted its activations in again (12% slower); small blocks still
/// come from each thread's cache, and MCTS with 32 threads ran as fast.
/// The cost is a resident set that stays at its peak.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        const M_TRIM_THRESHOLD: std::ffi::c_int = -1;
        const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
        const M_ARENA_MAX: std::ffi::c_int = -8;
        // SAFETY: mallopt only changes allocator parameters; every value is
        // in glibc's accepted range (the mmap threshold's cap is 32 MiB).
        unsafe {
            mallopt(M_MMAP_THRESHOLD, 32 << 20);
            mallopt(M_TRIM_THRESHOLD, 1 << 30);
            mallopt(M_ARENA_MAX, 1);
        }
    }
}

/// Runs `f` on one of rayon's pool threads (at once when already on one),
/// the caller waiting.
///
/// A training step alternates serial work (candle's graph, small ops) with
/// parallel kernels. Called from outside the pool, each parallel kernel
/// wakes the pool's threads and puts the caller to sleep, and the serial
/// parts leave a core idle: on 2 cores a cnn3 step ran 12% slower than the
/// same step run here, where the calling thread is one of the pool's and
/// takes its share of each parallel kernel.
///
/// With a pool of one thread `f` runs here: there is nothing to share, and
/// `f` blocking on another thread's rayon work could never wake.
pub fn on_compute_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() || rayon::current_num_threads() < 2 {
        return f();
    }
    let mut out = None;
    rayon::scope(|s| s.spawn(|_| out = Some(f())));
    out.expect("rayon::scope runs its spawned job before it returns")
}

/// `dst[m, n] (+)= lhs[m, k] * rhs[k, n]` on strided f32 matrices
/// (row stride, column stride), parallel on rayon's pool when large.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sgemm(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [f32],
    dst_rs: usize,
    accumulate: bool,
    lhs: &[f32],
    lhs_strides: (usize, usize),
    rhs: &[f32],
    rhs_strides: (usize, usize),
) {
    let threads = rayon::current_num_threads();
    let parallel = threads > 1 && m * n * k >= 1 << 17;
    sgemm_on(
        parallel,
        m,
        n,
        k,
        dst,
        dst_rs,
        accumulate,
        lhs,
        lhs_strides,
        rhs,
        rhs_strides,
    )
}

/// [`sgemm`] on rayon's pool (`parallel`) or on the calling thread only.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sgemm_on(
    parallel: bool,
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [f32],
    dst_rs: usize,
    accumulate: bool,
    lhs: &[f32],
    (lhs_rs, lhs_cs): (usize, usize),
    rhs: &[f32],
    (rhs_rs, rhs_cs): (usize, usize),
) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(dst.len() >= (m - 1) * dst_rs + n);
    if k == 0 {
        if !accumulate {
            for r in 0..m {
                dst[r * dst_rs..r * dst_rs + n].fill(0.0);
            }
        }
        return;
    }
    assert!(lhs.len() > (m - 1) * lhs_rs + (k - 1) * lhs_cs);
    assert!(rhs.len() > (k - 1) * rhs_rs + (n - 1) * rhs_cs);
    let parallelism = if parallel {
        gemm::Parallelism::Rayon(rayon::current_num_threads())
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: the asserts above keep every index the strides reach inside
    // the slices; dst does not alias lhs or rhs (a &mut borrow).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            dst_rs as isize,
            accumulate,
            lhs.as_ptr(),
            lhs_cs as isize,
            lhs_rs as isize,
            rhs.as_ptr(),
            rhs_cs as isize,
            rhs_rs as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// Gradients of the product `y = x w^T` (`x [rows, inp]`, `w [out, inp]`)
/// from `g = dL/dy [rows, out]`: `dx = g w` when `want_dx`, and
/// `dw = g^T x`.
pub(crate) fn matmul_grads(
    g: &[f32],
    x: &[f32],
    w: &[f32],
    [rows, inp, out]: [usize; 3],
    want_dx: bool,
) -> (Option<Vec<f32>>, Vec<f32>) {
    // Both products write every value (no clearing pass first).
    let dx = want_dx.then(|| {
        let mut dx = bordered::output_vec(rows * inp);
        sgemm(
            rows,
            inp,
            out,
            &mut dx,
            inp,
            false,
            g,
            (out, 1),
            w,
            (inp, 1),
        );
        dx
    });
    let mut dw = bordered::output_vec(out * inp);
    sgemm(
        out,
        inp,
        rows,
        &mut dw,
        inp,
        false,
        g,
        (1, out),
        x,
        (inp, 1),
    );
    (dx, dw)
}

/// The sum of `parts` vectors of `len` values, `part(i)` each (in
/// parallel when there are several), added in part order: the same bits
/// whatever the thread count.
pub(crate) fn sum_parts<F>(parts: usize, len: usize, part: F) -> Vec<f32>
where
    F: Fn(usize) -> Vec<f32> + Sync + Send,
{
    let partials: Vec<Vec<f32>> = if parts > 1 && rayon::current_num_threads() > 1 {
        (0..parts).into_par_iter().map(part).collect()
    } else {
        (0..parts).map(part).collect()
    };
    add_in_order(&partials, len)
}

/// The sum of vectors of `len` values, added in their order: the same bits
/// however they were computed.
pub(crate) fn add_in_order(parts: &[Vec<f32>], len: usize) -> Vec<f32> {
    let mut sum = vec![0f32; len];
    for p in parts {
        for (d, v) in sum.iter_mut().zip(p) {
            *d += v;
        }
    }
    sum
}

/// Column sums of a row-major `[rows, n]` matrix.
pub(crate) fn col_sums(x: &[f32], n: usize) -> Vec<f32> {
    let mut s = vec![0f32; n];
    if n == 0 {
        return s;
    }
    for row in x.chunks_exact(n) {
        for (s, v) in s.iter_mut().zip(row) {
            *s += v;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sgemm_strides() {
        // lhs [2, 3], rhs given transposed as [2 (n), 3 (k)].
        let lhs = [1f32, 2., 3., 4., 5., 6.];
        let rhs_t = [1f32, 0., 1., 0., 1., 0.];
        let mut dst = [10f32; 4];
        sgemm(2, 2, 3, &mut dst, 2, false, &lhs, (3, 1), &rhs_t, (1, 3));
        assert_eq!(dst, [4., 2., 10., 5.]);
        sgemm(2, 2, 3, &mut dst, 2, true, &lhs, (3, 1), &rhs_t, (1, 3));
        assert_eq!(dst, [8., 4., 20., 10.]);
        assert_eq!(col_sums(&lhs, 3), [5., 7., 9.]);
    }
}
