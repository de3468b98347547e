//! Batch normalisation in training mode, with an optional ReLU, as ops
//! whose GPU side is `kernels/batch_norm.cu`: three launches forward and
//! three backward, where candle's `BatchNorm` and ReLU take about thirty
//! (a transposed copy, means, differences, squares, a square root, a
//! division, the affine map, each with its backward).
//!
//! - [`train`] returns the normalised (and rectified) batch and the
//!   batch's statistics `[2, C]` (mean, biased variance), from which the
//!   caller moves its running statistics.
//! - The CPU side of each op is the kernels' twin: the same loops in the
//!   same order with the same f32 roundings (the kernels use explicit
//!   round-to-nearest intrinsics, so nothing is contracted), so the host
//!   tests pin what the GPU computes, and `tests/device.rs` checks it.
//!
//! Layout: activations NCHW; `params` `[mean | var | gamma | beta]` (f32,
//! `4 C`); the backward pass adds `[sum g xhat | sum g]`.

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp1, CustomOp2, CustomOp3, DType, Layout, Result, Shape};
use candle_core::{Tensor, D};

/// Threads per block of the reductions (`THREADS` in the kernel).
const THREADS: usize = 256;

/// Whether a batch norm of `x` in training mode takes these ops: on CUDA
/// in f32 or bf16, unless candle's ops are forced. The CPU trains through
/// the fused kernels of [`crate::model::kernels`] (f32) or candle's
/// `BatchNorm` (bf16, forced candle ops).
pub fn takes(x: &Tensor) -> bool {
    super::device_ops_take(x)
}

/// `relu?(gamma (x - mean) / sqrt(var + eps) + beta)` with the batch's
/// per-channel mean and biased variance, and those statistics `[2, C]`
/// (f32). `x` is `[B, C, H, W]` (or `[B, C]`), f32 or bf16; `gamma` and
/// `beta` `[C]` of any float dtype. Gradients reach `x`, `gamma` and
/// `beta`.
pub fn train(
    x: &Tensor,
    gamma: &Tensor,
    beta: &Tensor,
    eps: f64,
    relu: bool,
) -> Result<(Tensor, Tensor)> {
    let x = x.contiguous()?;
    let dims = Dims::of(&x)?;
    let (stats, params) = stats_and_params(&x, dims, gamma, beta)?;
    let eps = eps as f32;
    let y = x.apply_op2(&params, Apply { dims, eps, relu })?;
    Ok((y, stats))
}

/// A residual block's end: `relu(gamma (x - mean) / sqrt(var + eps) +
/// beta + skip)`, and the batch's statistics, as [`train`] (`skip` of
/// `x`'s shape and dtype). Gradients reach `x`, `gamma`, `beta` and
/// `skip`.
pub fn train_residual(
    x: &Tensor,
    gamma: &Tensor,
    beta: &Tensor,
    skip: &Tensor,
    eps: f64,
) -> Result<(Tensor, Tensor)> {
    let x = x.contiguous()?;
    let dims = Dims::of(&x)?;
    if skip.dims() != x.dims() || skip.dtype() != x.dtype() {
        candle_core::bail!(
            "batch norm: the residual input is {:?} {:?}, expected {:?} {:?}",
            skip.dims(),
            skip.dtype(),
            x.dims(),
            x.dtype()
        );
    }
    let (stats, params) = stats_and_params(&x, dims, gamma, beta)?;
    let eps = eps as f32;
    let y = x.apply_op3(&params, &skip.contiguous()?, ApplySkip { dims, eps })?;
    Ok((y, stats))
}

/// The batch's statistics `[2, C]` and the normalisation's parameters
/// `[mean | var | gamma | beta]` (f32, gradients reaching gamma and beta).
fn stats_and_params(
    x: &Tensor,
    dims: Dims,
    gamma: &Tensor,
    beta: &Tensor,
) -> Result<(Tensor, Tensor)> {
    for (name, t) in [("gamma", gamma), ("beta", beta)] {
        if t.dims() != [dims.c] {
            candle_core::bail!(
                "batch norm: {name} has shape {:?}, expected [{}]",
                t.dims(),
                dims.c
            );
        }
    }
    let stats = x.apply_op1_no_bwd(&Stats { dims })?;
    let params = Tensor::cat(
        &[
            stats.flatten_all()?,
            gamma.to_dtype(DType::F32)?,
            beta.to_dtype(DType::F32)?,
        ],
        0,
    )?;
    Ok((stats, params))
}

/// An activation's sizes: `b` boards of `c` channels of `hw` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dims {
    pub b: usize,
    pub c: usize,
    pub hw: usize,
}

impl Dims {
    fn of(x: &Tensor) -> Result<Self> {
        Self::from_shape(x.dims())
    }

    fn from_shape(d: &[usize]) -> Result<Self> {
        if d.len() < 2 {
            candle_core::bail!("batch norm: shape {d:?}, expected [B, C, ...]");
        }
        let dims = Dims {
            b: d[0],
            c: d[1],
            hw: d[2..].iter().product(),
        };
        if dims.n() < 2 {
            candle_core::bail!(
                "batch norm: {} value(s) per channel in {d:?}; training needs at least 2",
                dims.n()
            );
        }
        Ok(dims)
    }

    /// Values per channel.
    fn n(&self) -> usize {
        self.b * self.hw
    }

    fn total(&self) -> usize {
        self.n() * self.c
    }

    /// Chunks each channel's reduction is cut into: about 32 values a
    /// thread, at most 128 chunks. Fixed by the shape, so the sums'
    /// order is too.
    fn groups(&self) -> usize {
        self.n().div_ceil(THREADS * 32).clamp(1, 128)
    }

    /// The offset of value `i` of channel `ch`.
    fn at(&self, i: usize, ch: usize) -> usize {
        (i / self.hw * self.c + ch) * self.hw + i % self.hw
    }
}

/// The batch statistics `[2, C]`: mean, biased variance.
struct Stats {
    dims: Dims,
}

/// The normalisation: `(x, params [4C]) -> y`.
struct Apply {
    dims: Dims,
    eps: f32,
    relu: bool,
}

/// The residual block's end: `(x, params [4C], skip) -> y`.
struct ApplySkip {
    dims: Dims,
    eps: f32,
}

/// `(dy, y) -> g`: `dy` where the ReLU's output passed.
struct ReluMask {
    dims: Dims,
}

/// `(x, dy, params [4C]) -> [2, C]`: sum of `g xhat`, sum of `g`.
struct GradSums {
    dims: Dims,
    eps: f32,
    relu: bool,
}

/// `(x, dy, params and sums [6C]) -> dx`.
struct GradInput {
    dims: Dims,
    eps: f32,
    relu: bool,
}

impl CustomOp1 for Stats {
    fn name(&self) -> &'static str {
        "batch-norm-stats"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let x = widened(self.name(), s, l)?;
        Ok((
            CpuStorage::F32(stats_host(&x, self.dims)),
            Shape::from((2, self.dims.c)),
        ))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s: &candle_core::CudaStorage,
        l: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        cuda::stats(self.dims, s, l)
    }
}

impl CustomOp2 for Apply {
    fn name(&self) -> &'static str {
        "batch-norm"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let x = widened(self.name(), s1, l1)?;
        if x.len() != self.dims.total() {
            candle_core::bail!(
                "{}: {} values, expected {}",
                self.name(),
                x.len(),
                self.dims.total()
            );
        }
        let params = f32_params(self.name(), s2, l2, 4 * self.dims.c)?;
        let y = apply_host(&x, &params, self.dims, self.eps, self.relu);
        Ok((narrowed(s1, y), l1.shape().clone()))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        cuda::apply(self.dims, self.eps, self.relu, (s1, l1), (s2, l2))
    }

    fn bwd(
        &self,
        x: &Tensor,
        params: &Tensor,
        _y: &Tensor,
        dy: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let (dims, eps, relu) = (self.dims, self.eps, self.relu);
        let dy = dy.contiguous()?;
        let sums = x.apply_op3_no_bwd(&dy, params, &GradSums { dims, eps, relu })?;
        let dx = if x.track_op() {
            let with_sums = Tensor::cat(&[params, &sums.flatten_all()?], 0)?;
            Some(x.apply_op3_no_bwd(&dy, &with_sums, &GradInput { dims, eps, relu })?)
        } else {
            None
        };
        // The statistics come from an op without gradients: the terms
        // through them are in dx already.
        let dparams = Tensor::cat(&[sums.zeros_like()?, sums], 0)?.flatten_all()?;
        Ok((dx, Some(dparams)))
    }
}

impl CustomOp3 for ApplySkip {
    fn name(&self) -> &'static str {
        "batch-norm-residual"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let x = widened(self.name(), s1, l1)?;
        let skip = widened(self.name(), s3, l3)?;
        if x.len() != self.dims.total() || skip.len() != x.len() {
            candle_core::bail!("{}: sizes differ from {:?}", self.name(), self.dims);
        }
        let params = f32_params(self.name(), s2, l2, 4 * self.dims.c)?;
        let y = apply_skip_host(&x, &params, &skip, self.dims, self.eps);
        Ok((narrowed(s1, y), l1.shape().clone()))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
        s3: &candle_core::CudaStorage,
        l3: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        cuda::apply_skip(self.dims, self.eps, [(s1, l1), (s2, l2), (s3, l3)])
    }

    fn bwd(
        &self,
        x: &Tensor,
        params: &Tensor,
        _skip: &Tensor,
        y: &Tensor,
        dy: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let (dims, eps) = (self.dims, self.eps);
        let g = dy.contiguous()?.apply_op2_no_bwd(y, &ReluMask { dims })?;
        // Past the mask, the batch norm's own backward without a ReLU.
        let relu = false;
        let sums = x.apply_op3_no_bwd(&g, params, &GradSums { dims, eps, relu })?;
        let dx = if x.track_op() {
            let with_sums = Tensor::cat(&[params, &sums.flatten_all()?], 0)?;
            Some(x.apply_op3_no_bwd(&g, &with_sums, &GradInput { dims, eps, relu })?)
        } else {
            None
        };
        let dparams = Tensor::cat(&[sums.zeros_like()?, sums], 0)?.flatten_all()?;
        Ok((dx, Some(dparams), Some(g)))
    }
}

impl CustomOp2 for ReluMask {
    fn name(&self) -> &'static str {
        "batch-norm-relu-mask"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let dy = widened(self.name(), s1, l1)?;
        let y = widened(self.name(), s2, l2)?;
        if dy.len() != self.dims.total() || y.len() != dy.len() {
            candle_core::bail!("{}: sizes differ from {:?}", self.name(), self.dims);
        }
        let g = relu_mask_host(&dy, &y);
        Ok((narrowed(s1, g), l1.shape().clone()))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        cuda::relu_mask(self.dims, (s1, l1), (s2, l2))
    }
}

impl CustomOp3 for GradSums {
    fn name(&self) -> &'static str {
        "batch-norm-grad-sums"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let x = widened(self.name(), s1, l1)?;
        let dy = widened(self.name(), s2, l2)?;
        let params = f32_params(self.name(), s3, l3, 4 * self.dims.c)?;
        let sums = grad_sums_host(&x, &dy, &params, self.dims, self.eps, self.relu);
        Ok((CpuStorage::F32(sums), Shape::from((2, self.dims.c))))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
        s3: &candle_core::CudaStorage,
        l3: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        cuda::grad_sums(
            self.dims,
            self.eps,
            self.relu,
            [(s1, l1), (s2, l2), (s3, l3)],
        )
    }
}

impl CustomOp3 for GradInput {
    fn name(&self) -> &'static str {
        "batch-norm-grad-input"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let x = widened(self.name(), s1, l1)?;
        let dy = widened(self.name(), s2, l2)?;
        let p = f32_params(self.name(), s3, l3, 6 * self.dims.c)?;
        let dx = grad_input_host(&x, &dy, &p, self.dims, self.eps, self.relu);
        Ok((narrowed(s1, dx), l1.shape().clone()))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
        s3: &candle_core::CudaStorage,
        l3: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        cuda::grad_input(
            self.dims,
            self.eps,
            self.relu,
            [(s1, l1), (s2, l2), (s3, l3)],
        )
    }
}

/// A CPU storage's contiguous values as f32 (bf16 widened exactly).
fn widened(op: &str, s: &CpuStorage, l: &Layout) -> Result<Vec<f32>> {
    let Some((a, b)) = l.contiguous_offsets() else {
        candle_core::bail!("{op}: contiguous tensors only");
    };
    match s {
        CpuStorage::F32(v) => Ok(v[a..b].to_vec()),
        CpuStorage::BF16(v) => Ok(v[a..b].iter().map(|h| h.to_f32()).collect()),
        other => candle_core::bail!("{op}: f32 or bf16 only, got {:?}", other.dtype()),
    }
}

/// `values` stored in `like`'s dtype (bf16 rounded to nearest even, as
/// the kernels' `store`).
fn narrowed(like: &CpuStorage, values: Vec<f32>) -> CpuStorage {
    match like {
        CpuStorage::BF16(_) => {
            CpuStorage::BF16(values.into_iter().map(half::bf16::from_f32).collect())
        }
        _ => CpuStorage::F32(values),
    }
}

fn f32_params(op: &str, s: &CpuStorage, l: &Layout, len: usize) -> Result<Vec<f32>> {
    let v = match s {
        CpuStorage::F32(_) => widened(op, s, l)?,
        other => candle_core::bail!("{op}: f32 parameters only, got {:?}", other.dtype()),
    };
    if v.len() != len {
        candle_core::bail!("{op}: {} parameters, expected {len}", v.len());
    }
    Ok(v)
}

/// Block `(ch, g)`'s two sums of `f(e)` over its chunk of channel `ch`, as
/// the kernel's threads and tree add them.
fn block_sums(d: Dims, ch: usize, g: usize, f: impl Fn(usize) -> (f32, f32)) -> (f32, f32) {
    let n = d.n();
    let chunk = n.div_ceil(d.groups());
    let (lo, hi) = (g * chunk, n.min(g * chunk + chunk));
    let mut a = [0f32; THREADS];
    let mut b = [0f32; THREADS];
    for t in 0..THREADS {
        let mut i = lo + t;
        while i < hi {
            let (u, v) = f(d.at(i, ch));
            a[t] += u;
            b[t] += v;
            i += THREADS;
        }
    }
    let mut s = THREADS / 2;
    while s > 0 {
        for t in 0..s {
            a[t] += a[t + s];
            b[t] += b[t + s];
        }
        s /= 2;
    }
    (a[0], b[0])
}

/// Each channel's chunk sums, added in order.
fn channel_sums(d: Dims, f: impl Fn(usize) -> (f32, f32) + Copy) -> Vec<(f32, f32)> {
    (0..d.c)
        .map(|ch| {
            (0..d.groups()).fold((0f32, 0f32), |(a, b), g| {
                let (u, v) = block_sums(d, ch, g, f);
                (a + u, b + v)
            })
        })
        .collect()
}

/// The twin of `bn_stats_partial` + `bn_stats_combine`: `[mean | var]`.
pub(crate) fn stats_host(x: &[f32], d: Dims) -> Vec<f32> {
    let n = d.n() as f32;
    let sums = channel_sums(d, |e| {
        // The shift is the channel's first value.
        let k = x[d.at(0, e / d.hw % d.c)];
        let v = x[e] - k;
        (v, v * v)
    });
    let mut out = vec![0f32; 2 * d.c];
    for (ch, (a, b)) in sums.into_iter().enumerate() {
        let shift = a / n;
        let var = b / n - shift * shift;
        out[ch] = x[d.at(0, ch)] + shift;
        out[d.c + ch] = var.max(0.0);
    }
    out
}

fn xhat_of(x: f32, p: &[f32], ch: usize, c: usize, eps: f32) -> f32 {
    let invstd = 1.0 / (p[c + ch] + eps).sqrt();
    (x - p[ch]) * invstd
}

/// Whether the ReLU passes `pre` (a NaN does not), as the kernels test it.
fn passes(pre: f32) -> bool {
    pre > 0.0
}

fn pre_of(xhat: f32, p: &[f32], ch: usize, c: usize) -> f32 {
    p[2 * c + ch] * xhat + p[3 * c + ch]
}

/// The twin of `bn_apply`.
pub(crate) fn apply_host(x: &[f32], p: &[f32], d: Dims, eps: f32, relu: bool) -> Vec<f32> {
    x.iter()
        .enumerate()
        .map(|(e, &v)| {
            let ch = e / d.hw % d.c;
            let pre = pre_of(xhat_of(v, p, ch, d.c, eps), p, ch, d.c);
            if relu && !passes(pre) {
                0.0
            } else {
                pre
            }
        })
        .collect()
}

/// The twin of `bn_apply_skip`.
pub(crate) fn apply_skip_host(x: &[f32], p: &[f32], skip: &[f32], d: Dims, eps: f32) -> Vec<f32> {
    x.iter()
        .zip(skip)
        .enumerate()
        .map(|(e, (&v, &s))| {
            let ch = e / d.hw % d.c;
            let pre = pre_of(xhat_of(v, p, ch, d.c, eps), p, ch, d.c) + s;
            if passes(pre) {
                pre
            } else {
                0.0
            }
        })
        .collect()
}

/// The twin of `bn_relu_mask`.
pub(crate) fn relu_mask_host(dy: &[f32], y: &[f32]) -> Vec<f32> {
    dy.iter()
        .zip(y)
        .map(|(&g, &v)| if passes(v) { g } else { 0.0 })
        .collect()
}

/// `g` at element `e`: `dy` where the ReLU passed.
fn g_of(x: f32, dy: f32, p: &[f32], ch: usize, d: Dims, eps: f32, relu: bool) -> (f32, f32) {
    let xhat = xhat_of(x, p, ch, d.c, eps);
    let g = if relu && !passes(pre_of(xhat, p, ch, d.c)) {
        0.0
    } else {
        dy
    };
    (g, xhat)
}

/// The twin of `bn_grad_partial` + `bn_grad_combine`: `[sum g xhat | sum g]`.
pub(crate) fn grad_sums_host(
    x: &[f32],
    dy: &[f32],
    p: &[f32],
    d: Dims,
    eps: f32,
    relu: bool,
) -> Vec<f32> {
    let sums = channel_sums(d, |e| {
        let (g, xhat) = g_of(x[e], dy[e], p, e / d.hw % d.c, d, eps, relu);
        (g * xhat, g)
    });
    let mut out = vec![0f32; 2 * d.c];
    for (ch, (a, b)) in sums.into_iter().enumerate() {
        out[ch] = a;
        out[d.c + ch] = b;
    }
    out
}

/// The twin of `bn_grad_input`; `p` is `[params (4C) | sums (2C)]`.
pub(crate) fn grad_input_host(
    x: &[f32],
    dy: &[f32],
    p: &[f32],
    d: Dims,
    eps: f32,
    relu: bool,
) -> Vec<f32> {
    let n = d.n() as f32;
    let c = d.c;
    (0..x.len())
        .map(|e| {
            let ch = e / d.hw % c;
            let (g, xhat) = g_of(x[e], dy[e], p, ch, d, eps, relu);
            let invstd = 1.0 / (p[c + ch] + eps).sqrt();
            let scale = p[2 * c + ch] * invstd / n;
            let inner = n * g - p[5 * c + ch] - xhat * p[4 * c + ch];
            scale * inner
        })
        .collect()
}

/// The means and the biased variances of [`train`]'s statistics `[2, C]`.
pub fn split_stats(stats: &Tensor) -> Result<(Tensor, Tensor)> {
    let mean = stats.narrow(D::Minus2, 0, 1)?.squeeze(0)?;
    let var = stats.narrow(D::Minus2, 1, 1)?.squeeze(0)?;
    Ok((mean, var))
}

#[cfg(feature = "cuda")]
mod cuda {
    //! The launches. Each kernel's body is written once over the storage
    //! type T (f32 or bf16); the public functions pick T by dtype.
    use super::Dims;
    use candle_core::backend::BackendStorage;
    use candle_core::cuda_backend::cudarc::driver::{
        CudaView, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg,
    };
    use candle_core::cuda_backend::{CudaDType, WrapErr};
    use candle_core::{CudaStorage, DType, Layout, Result, Shape};

    const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/batch_norm.ptx"));
    const THREADS: u32 = super::THREADS as u32;

    fn int(v: usize) -> Result<i32> {
        i32::try_from(v).map_err(|_| candle_core::Error::Msg(format!("batch norm: {v} too large")))
    }

    /// The storages' common dtype as a kernel suffix, checking they are
    /// contiguous and of one float dtype.
    fn suffix(typed: &[(&CudaStorage, &Layout)]) -> Result<&'static str> {
        if typed.iter().any(|(_, l)| !l.is_contiguous()) {
            candle_core::bail!("batch norm: contiguous tensors only");
        }
        let dtype = typed[0].0.dtype();
        if typed.iter().any(|(s, _)| s.dtype() != dtype) {
            candle_core::bail!("batch norm: the operands' dtypes differ");
        }
        match dtype {
            DType::F32 => Ok("f32"),
            DType::BF16 => Ok("bf16"),
            other => candle_core::bail!("batch norm: f32 or bf16 only, got {other:?}"),
        }
    }

    /// A storage's values from its layout's start.
    fn view<'a, T: CudaDType>(s: &'a CudaStorage, l: &Layout) -> Result<CudaView<'a, T>> {
        Ok(s.as_cuda_slice::<T>()?.slice(l.start_offset()..))
    }

    /// One block per (channel, chunk).
    fn reduction(d: Dims) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (d.c as u32, d.groups() as u32, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// One thread per channel.
    fn per_channel(d: Dims) -> LaunchConfig {
        LaunchConfig {
            grid_dim: ((d.c as u32).div_ceil(THREADS), 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// A grid-stride launch over every element.
    fn elementwise(d: Dims) -> LaunchConfig {
        let blocks = d.total().div_ceil(THREADS as usize).clamp(1, 65_535) as u32;
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// A kernel of `kernels/batch_norm.cu` by name, loaded once per device.
    macro_rules! kernel {
        ($dev:expr, $name:expr) => {
            $dev.get_or_load_custom_func($name, "plies_batch_norm", PTX)?
        };
    }

    /// Queues a launch whose arguments are pushed.
    fn go(mut b: LaunchArgs<'_>, cfg: LaunchConfig) -> Result<()> {
        // SAFETY: each caller pushes the arguments of its kernel's
        // signature in kernels/batch_norm.cu, with buffers of the sizes it
        // reads and writes.
        unsafe { b.launch(cfg) }.w()?;
        Ok(())
    }

    /// The sizes every launch reads: C, HW, and N or the element count.
    struct Sizes {
        c: i32,
        hw: i32,
        n: i64,
        total: i64,
        groups: i32,
    }

    impl Sizes {
        fn of(d: Dims) -> Result<Self> {
            Ok(Sizes {
                c: int(d.c)?,
                hw: int(d.hw)?,
                n: d.n() as i64,
                total: d.total() as i64,
                groups: int(d.groups())?,
            })
        }
    }

    fn stats_t<T: CudaDType + DeviceRepr>(
        d: Dims,
        (s, l): (&CudaStorage, &Layout),
        sfx: &str,
    ) -> Result<CudaStorage> {
        let dev = s.device().clone();
        let z = Sizes::of(d)?;
        let x = view::<T>(s, l)?;
        let partial = dev.alloc_zeros::<f32>(d.c * d.groups() * 2)?;
        let out = dev.alloc_zeros::<f32>(2 * d.c)?;
        {
            let f = kernel!(&dev, &format!("bn_stats_partial_{sfx}"));
            let mut b = f.builder();
            b.arg(&x)
                .arg(&partial)
                .arg(&z.c)
                .arg(&z.hw)
                .arg(&z.n)
                .arg(&z.groups);
            go(b, reduction(d))?;
        }
        {
            let f = kernel!(&dev, &format!("bn_stats_combine_{sfx}"));
            let mut b = f.builder();
            b.arg(&x)
                .arg(&partial)
                .arg(&out)
                .arg(&z.c)
                .arg(&z.hw)
                .arg(&z.n)
                .arg(&z.groups);
            go(b, per_channel(d))?;
        }
        Ok(CudaStorage::wrap_cuda_slice(out, dev))
    }

    pub(super) fn stats(d: Dims, s: &CudaStorage, l: &Layout) -> Result<(CudaStorage, Shape)> {
        let sfx = suffix(&[(s, l)])?;
        let out = match s.dtype() {
            DType::F32 => stats_t::<f32>(d, (s, l), sfx)?,
            _ => stats_t::<half::bf16>(d, (s, l), sfx)?,
        };
        Ok((out, Shape::from((2, d.c))))
    }

    fn apply_t<T: CudaDType + DeviceRepr>(
        d: Dims,
        eps: f32,
        relu: bool,
        (s1, l1): (&CudaStorage, &Layout),
        (s2, l2): (&CudaStorage, &Layout),
        sfx: &str,
    ) -> Result<CudaStorage> {
        let dev = s1.device().clone();
        let (z, relu) = (Sizes::of(d)?, i32::from(relu));
        let (x, params) = (view::<T>(s1, l1)?, view::<f32>(s2, l2)?);
        // SAFETY: every element is written by the kernel.
        let y = unsafe { dev.alloc::<T>(d.total())? };
        {
            let f = kernel!(&dev, &format!("bn_apply_{sfx}"));
            let mut b = f.builder();
            b.arg(&x)
                .arg(&params)
                .arg(&y)
                .arg(&z.c)
                .arg(&z.hw)
                .arg(&z.total)
                .arg(&eps)
                .arg(&relu);
            go(b, elementwise(d))?;
        }
        Ok(CudaStorage::wrap_cuda_slice(y, dev))
    }

    pub(super) fn apply(
        d: Dims,
        eps: f32,
        relu: bool,
        a: (&CudaStorage, &Layout),
        params: (&CudaStorage, &Layout),
    ) -> Result<(CudaStorage, Shape)> {
        let sfx = suffix(&[a])?;
        let out = match a.0.dtype() {
            DType::F32 => apply_t::<f32>(d, eps, relu, a, params, sfx)?,
            _ => apply_t::<half::bf16>(d, eps, relu, a, params, sfx)?,
        };
        Ok((out, a.1.shape().clone()))
    }

    fn apply_skip_t<T: CudaDType + DeviceRepr>(
        d: Dims,
        eps: f32,
        [(s1, l1), (s2, l2), (s3, l3)]: [(&CudaStorage, &Layout); 3],
        sfx: &str,
    ) -> Result<CudaStorage> {
        let dev = s1.device().clone();
        let z = Sizes::of(d)?;
        let (x, params, skip) = (view::<T>(s1, l1)?, view::<f32>(s2, l2)?, view::<T>(s3, l3)?);
        // SAFETY: every element is written by the kernel.
        let y = unsafe { dev.alloc::<T>(d.total())? };
        {
            let f = kernel!(&dev, &format!("bn_apply_skip_{sfx}"));
            let mut b = f.builder();
            b.arg(&x)
                .arg(&params)
                .arg(&skip)
                .arg(&y)
                .arg(&z.c)
                .arg(&z.hw)
                .arg(&z.total)
                .arg(&eps);
            go(b, elementwise(d))?;
        }
        Ok(CudaStorage::wrap_cuda_slice(y, dev))
    }

    pub(super) fn apply_skip(
        d: Dims,
        eps: f32,
        args: [(&CudaStorage, &Layout); 3],
    ) -> Result<(CudaStorage, Shape)> {
        let sfx = suffix(&[args[0], args[2]])?;
        let out = match args[0].0.dtype() {
            DType::F32 => apply_skip_t::<f32>(d, eps, args, sfx)?,
            _ => apply_skip_t::<half::bf16>(d, eps, args, sfx)?,
        };
        Ok((out, args[0].1.shape().clone()))
    }

    fn relu_mask_t<T: CudaDType + DeviceRepr>(
        d: Dims,
        (s1, l1): (&CudaStorage, &Layout),
        (s2, l2): (&CudaStorage, &Layout),
        sfx: &str,
    ) -> Result<CudaStorage> {
        let dev = s1.device().clone();
        let total = d.total() as i64;
        let (dy, y) = (view::<T>(s1, l1)?, view::<T>(s2, l2)?);
        // SAFETY: every element is written by the kernel.
        let g = unsafe { dev.alloc::<T>(d.total())? };
        {
            let f = kernel!(&dev, &format!("bn_relu_mask_{sfx}"));
            let mut b = f.builder();
            b.arg(&dy).arg(&y).arg(&g).arg(&total);
            go(b, elementwise(d))?;
        }
        Ok(CudaStorage::wrap_cuda_slice(g, dev))
    }

    pub(super) fn relu_mask(
        d: Dims,
        dy: (&CudaStorage, &Layout),
        y: (&CudaStorage, &Layout),
    ) -> Result<(CudaStorage, Shape)> {
        let sfx = suffix(&[dy, y])?;
        let out = match dy.0.dtype() {
            DType::F32 => relu_mask_t::<f32>(d, dy, y, sfx)?,
            _ => relu_mask_t::<half::bf16>(d, dy, y, sfx)?,
        };
        Ok((out, dy.1.shape().clone()))
    }

    fn grad_sums_t<T: CudaDType + DeviceRepr>(
        d: Dims,
        eps: f32,
        relu: bool,
        [(s1, l1), (s2, l2), (s3, l3)]: [(&CudaStorage, &Layout); 3],
        sfx: &str,
    ) -> Result<CudaStorage> {
        let dev = s1.device().clone();
        let (z, relu) = (Sizes::of(d)?, i32::from(relu));
        let (x, dy, params) = (view::<T>(s1, l1)?, view::<T>(s2, l2)?, view::<f32>(s3, l3)?);
        let partial = dev.alloc_zeros::<f32>(d.c * d.groups() * 2)?;
        let out = dev.alloc_zeros::<f32>(2 * d.c)?;
        {
            let f = kernel!(&dev, &format!("bn_grad_partial_{sfx}"));
            let mut b = f.builder();
            b.arg(&x)
                .arg(&dy)
                .arg(&params)
                .arg(&partial)
                .arg(&z.c)
                .arg(&z.hw)
                .arg(&z.n)
                .arg(&z.groups)
                .arg(&eps)
                .arg(&relu);
            go(b, reduction(d))?;
        }
        {
            let f = kernel!(&dev, "bn_grad_combine");
            let mut b = f.builder();
            b.arg(&partial).arg(&out).arg(&z.c).arg(&z.groups);
            go(b, per_channel(d))?;
        }
        Ok(CudaStorage::wrap_cuda_slice(out, dev))
    }

    pub(super) fn grad_sums(
        d: Dims,
        eps: f32,
        relu: bool,
        args: [(&CudaStorage, &Layout); 3],
    ) -> Result<(CudaStorage, Shape)> {
        let sfx = suffix(&args[..2])?;
        let out = match args[0].0.dtype() {
            DType::F32 => grad_sums_t::<f32>(d, eps, relu, args, sfx)?,
            _ => grad_sums_t::<half::bf16>(d, eps, relu, args, sfx)?,
        };
        Ok((out, Shape::from((2, d.c))))
    }

    fn grad_input_t<T: CudaDType + DeviceRepr>(
        d: Dims,
        eps: f32,
        relu: bool,
        [(s1, l1), (s2, l2), (s3, l3)]: [(&CudaStorage, &Layout); 3],
        sfx: &str,
    ) -> Result<CudaStorage> {
        let dev = s1.device().clone();
        let (z, relu) = (Sizes::of(d)?, i32::from(relu));
        let (x, dy) = (view::<T>(s1, l1)?, view::<T>(s2, l2)?);
        let all = s3.as_cuda_slice::<f32>()?;
        let params = all.slice(l3.start_offset()..);
        let sums = all.slice(l3.start_offset() + 4 * d.c..);
        // SAFETY: every element is written by the kernel.
        let dx = unsafe { dev.alloc::<T>(d.total())? };
        {
            let f = kernel!(&dev, &format!("bn_grad_input_{sfx}"));
            let mut b = f.builder();
            b.arg(&x)
                .arg(&dy)
                .arg(&params)
                .arg(&sums)
                .arg(&dx)
                .arg(&z.c)
                .arg(&z.hw)
                .arg(&z.total)
                .arg(&z.n)
                .arg(&eps)
                .arg(&relu);
            go(b, elementwise(d))?;
        }
        Ok(CudaStorage::wrap_cuda_slice(dx, dev))
    }

    pub(super) fn grad_input(
        d: Dims,
        eps: f32,
        relu: bool,
        args: [(&CudaStorage, &Layout); 3],
    ) -> Result<(CudaStorage, Shape)> {
        let sfx = suffix(&args[..2])?;
        let out = match args[0].0.dtype() {
            DType::F32 => grad_input_t::<f32>(d, eps, relu, args, sfx)?,
            _ => grad_input_t::<half::bf16>(d, eps, relu, args, sfx)?,
        };
        Ok((out, args[0].1.shape().clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_tensors::{max_abs, max_diff, SeededTensors};
    use candle_core::{Device, Var};
    use candle_nn::{BatchNorm, BatchNormConfig, ModuleT, VarBuilder, VarMap};

    /// candle's own batch norm (+ ReLU) in training mode, the reference.
    fn candle_bn(x: &Tensor, gamma: &Var, beta: &Var, relu: bool) -> (Tensor, BatchNorm) {
        let c = x.dim(1).unwrap();
        let vm = VarMap::new();
        let vb = VarBuilder::from_varmap(&vm, DType::F32, x.device());
        let cfg = BatchNormConfig {
            eps: 1e-5,
            remove_mean: true,
            affine: true,
            momentum: 0.1,
        };
        let bn0 = candle_nn::batch_norm(c, cfg, vb).unwrap();
        let bn = BatchNorm::new(
            c,
            bn0.running_mean().clone(),
            bn0.running_var().clone(),
            gamma.as_tensor().clone(),
            beta.as_tensor().clone(),
            1e-5,
        )
        .unwrap();
        let y = bn.forward_t(x, true).unwrap();
        (if relu { y.relu().unwrap() } else { y }, bn)
    }

    /// Values and gradients (x, gamma, beta) of the ops equal candle's
    /// batch norm within f32 rounding, with and without ReLU, for boards,
    /// dense `[B, C]` inputs, a large mean (the shift at work) and shapes
    /// whose channels cut into several chunks.
    #[test]
    fn the_ops_are_candles_batch_norm() {
        let dev = Device::Cpu;
        let mut rng = SeededTensors::new(21);
        for (shape, offset) in [
            (vec![5, 3, 4, 4], 0.0),
            (vec![33, 4, 8, 8], 0.0),
            (vec![2, 6, 9, 9], 300.0),
            (vec![17, 5], 0.0),
            (vec![300, 2, 8, 8], 0.0),
        ] {
            for relu in [false, true] {
                let c = shape[1];
                let x = Var::from_tensor(
                    &(rng.randn(0.0, 1.5, shape.as_slice(), &dev).unwrap() + offset).unwrap(),
                )
                .unwrap();
                let gamma = Var::from_tensor(&rng.rand(0.5, 1.5, c, &dev).unwrap()).unwrap();
                let beta = Var::from_tensor(&rng.rand(-0.5, 0.5, c, &dev).unwrap()).unwrap();
                let n = x.elem_count();
                let weigh = Tensor::arange(0f32, n as f32, &dev)
                    .unwrap()
                    .affine(2.0 / n as f64, -1.0)
                    .unwrap()
                    .reshape(shape.as_slice())
                    .unwrap();
                let (y, stats) = train(
                    x.as_tensor(),
                    gamma.as_tensor(),
                    beta.as_tensor(),
                    1e-5,
                    relu,
                )
                .unwrap();
                let (want, _) = candle_bn(x.as_tensor(), &gamma, &beta, relu);
                let what = format!("{shape:?} + {offset}, relu {relu}");
                let scale = 1.0 + max_abs(&want);
                assert!(
                    max_diff(&y, &want) < 2e-5 * scale,
                    "{what}: values differ by {}",
                    max_diff(&y, &want)
                );
                let (mean, var) = split_stats(&stats).unwrap();
                let dims: Vec<usize> = (0..shape.len()).filter(|&i| i != 1).collect();
                let t = x.as_tensor();
                let mut want_mean = t.clone();
                for &d in dims.iter().rev() {
                    want_mean = want_mean.mean_keepdim(d).unwrap();
                }
                let want_mean = want_mean.flatten_all().unwrap();
                assert!(max_diff(&mean, &want_mean) < 1e-5 * (1.0 + offset as f32));
                assert!(var.min(0).unwrap().to_scalar::<f32>().unwrap() > 0.5);
                let g_op = (y * &weigh).unwrap().sum_all().unwrap().backward().unwrap();
                let g_ref = (want * &weigh)
                    .unwrap()
                    .sum_all()
                    .unwrap()
                    .backward()
                    .unwrap();
                for (name, v) in [("x", &x), ("gamma", &gamma), ("beta", &beta)] {
                    let (a, b) = (
                        g_op.get(v.as_tensor()).unwrap(),
                        g_ref.get(v.as_tensor()).unwrap(),
                    );
                    let scale = 1.0 + max_abs(b);
                    assert!(
                        max_diff(a, b) < 1e-4 * scale,
                        "{what}: d{name} differs by {} (scale {scale})",
                        max_diff(a, b)
                    );
                }
            }
        }
    }

    /// The residual block's end equals candle's batch norm, then the skip
    /// added, then ReLU, in values and in the gradients of x, gamma, beta
    /// and the skip input.
    #[test]
    fn the_residual_end_is_candles_norm_add_relu() {
        let dev = Device::Cpu;
        let mut rng = SeededTensors::new(22);
        for shape in [vec![5, 3, 4, 4], vec![40, 6, 8, 8]] {
            let c = shape[1];
            let x =
                Var::from_tensor(&rng.randn(0.0, 1.5, shape.as_slice(), &dev).unwrap()).unwrap();
            let skip =
                Var::from_tensor(&rng.randn(0.0, 1.0, shape.as_slice(), &dev).unwrap()).unwrap();
            let gamma = Var::from_tensor(&rng.rand(0.5, 1.5, c, &dev).unwrap()).unwrap();
            let beta = Var::from_tensor(&rng.rand(-0.5, 0.5, c, &dev).unwrap()).unwrap();
            let weigh = rng.rand(-1.0, 1.0, shape.as_slice(), &dev).unwrap();
            let (y, _) = train_residual(
                x.as_tensor(),
                gamma.as_tensor(),
                beta.as_tensor(),
                skip.as_tensor(),
                1e-5,
            )
            .unwrap();
            let (normed, _) = candle_bn(x.as_tensor(), &gamma, &beta, false);
            let want = (skip.as_tensor() + normed).unwrap().relu().unwrap();
            let scale = 1.0 + max_abs(&want);
            assert!(max_diff(&y, &want) < 2e-5 * scale, "{shape:?}: values");
            let g_op = (y * &weigh).unwrap().sum_all().unwrap().backward().unwrap();
            let g_ref = (want * &weigh)
                .unwrap()
                .sum_all()
                .unwrap()
                .backward()
                .unwrap();
            for (name, v) in [
                ("x", &x),
                ("gamma", &gamma),
                ("beta", &beta),
                ("skip", &skip),
            ] {
                let (a, b) = (
                    g_op.get(v.as_tensor()).unwrap(),
                    g_ref.get(v.as_tensor()).unwrap(),
                );
                let scale = 1.0 + max_abs(b);
                assert!(
                    max_diff(a, b) < 1e-4 * scale,
                    "{shape:?}: d{name} differs by {}",
                    max_diff(a, b)
                );
            }
        }
        let x = Tensor::zeros((2, 3, 2, 2), DType::F32, &dev).unwrap();
        let g = Tensor::ones(3, DType::F32, &dev).unwrap();
        let wrong = Tensor::zeros((2, 3, 2, 1), DType::F32, &dev).unwrap();
        let err = train_residual(&x, &g, &g, &wrong, 1e-5)
            .unwrap_err()
            .to_string();
        assert!(err.contains("residual input"), "{err}");
    }

    /// In bf16 the ops read bf16, compute in f32 and round once: the
    /// f32 twin's values, rounded.
    #[test]
    fn bf16_is_the_f32_arithmetic_rounded_once() {
        let dev = Device::Cpu;
        let mut rng = SeededTensors::new(4);
        let x = rng
            .randn(0.0, 1.0, (9, 3, 5, 5), &dev)
            .unwrap()
            .to_dtype(DType::BF16)
            .unwrap();
        let gamma = rng.rand(0.5, 1.5, 3, &dev).unwrap();
        let beta = rng.rand(-0.5, 0.5, 3, &dev).unwrap();
        let (y, _) = train(&x, &gamma, &beta, 1e-5, true).unwrap();
        assert_eq!(y.dtype(), DType::BF16);
        let (y32, _) = train(&x.to_dtype(DType::F32).unwrap(), &gamma, &beta, 1e-5, true).unwrap();
        let rounded = y32.to_dtype(DType::BF16).unwrap();
        assert_eq!(
            max_diff(
                &y.to_dtype(DType::F32).unwrap(),
                &rounded.to_dtype(DType::F32).unwrap()
            ),
            0.0
        );
    }

    /// The chunking follows the shape: one chunk for small channels, more
    /// for large ones, never over 128; and every value is summed once.
    #[test]
    fn chunks_cover_each_channel_once() {
        for (b, c, hw) in [(1, 1, 2), (256, 64, 64), (1024, 64, 64), (4096, 8, 361)] {
            let d = Dims { b, c, hw };
            let g = d.groups();
            assert!((1..=128).contains(&g));
            let ones = block_sums_count(d);
            assert_eq!(ones, d.n() as f32, "{b}x{c}x{hw}");
        }
        assert_eq!(
            Dims {
                b: 256,
                c: 64,
                hw: 64
            }
            .groups(),
            2
        );
    }

    fn block_sums_count(d: Dims) -> f32 {
        (0..d.groups())
            .map(|g| block_sums(d, 0, g, |_| (1.0, 0.0)).0)
            .sum()
    }

    #[test]
    fn bad_shapes_are_refused_by_name() {
        let dev = Device::Cpu;
        let x = Tensor::zeros((4, 3, 2, 2), DType::F32, &dev).unwrap();
        let g = Tensor::ones(4, DType::F32, &dev).unwrap();
        let err = train(&x, &g, &g, 1e-5, false).unwrap_err().to_string();
        assert!(err.contains("gamma has shape [4], expected [3]"), "{err}");
        let one = Tensor::zeros((1, 3), DType::F32, &dev).unwrap();
        let g3 = Tensor::ones(3, DType::F32, &dev).unwrap();
        let err = train(&one, &g3, &g3, 1e-5, false).unwrap_err().to_string();
        assert!(err.contains("at least 2"), "{err}");
    }
}
