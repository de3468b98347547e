//! 3x3 convolution, stride 1, zero padding 1, on bordered channels-last
//! activations ([`super::bordered`]): `[B, H+2, W+2, C]` in, `[B, H+2,
//! W+2, F]` out, border zero.
//!
//! Per block of samples (a few hundred positions, in cache): im2col rows
//! of `9 * C` values, each three contiguous copies of `3 * C` (the border
//! supplies the padding), one matrix product with the `[F, 9C]` weights,
//! and the result written into the bordered output. Blocks run in parallel
//! and never touch each other's samples.
//!
//! Backward: the input gradient is the same convolution of the (bordered)
//! output gradient with the weights flipped and transposed; the weight
//! gradient is a sum over blocks of `dY^T x cols`, summed per fixed group
//! of blocks and then in group order, so it does not depend on the thread
//! count.

use super::act::{dispatch, with_f32, Act};
use super::bordered::{for_blocks, output_vec, with_scratch, zero_border, zero_bordered, Board};
use super::direct3x3;
use super::op::{require_cpu_f32, F32Kernel, F32Op, Grads, In, Out};
use super::simd::Simd;
use super::{sgemm_on, sum_parts};
use candle_core::{DType, Result, Tensor};
use std::sync::Arc;

/// Blocks per weight-gradient partial sum.
const GRAD_GROUP: usize = 8;

/// im2col rows `[ns * H * W, 9C]` of `ns` bordered samples `x`; column
/// `(ky * 3 + kx) * C + c`.
fn im2col_block(bd: &Board, c: usize, x: &[f32], ns: usize, cols: &mut [f32]) {
    let (wp, plane, k) = (bd.wp(), bd.plane(), 9 * c);
    let mut rows = cols.chunks_exact_mut(k);
    for s in 0..ns {
        let xs = &x[s * plane * c..(s + 1) * plane * c];
        for y in 0..bd.h {
            for xx in 0..bd.w {
                let Some(row) = rows.next() else { return };
                for ky in 0..3 {
                    let at = ((y + ky) * wp + xx) * c;
                    row[ky * 3 * c..(ky + 1) * 3 * c].copy_from_slice(&xs[at..at + 3 * c]);
                }
            }
        }
    }
}

#[inline(always)]
fn fin(v: f32, relu: bool) -> f32 {
    if relu {
        v.max(0.0)
    } else {
        v
    }
}

/// One output row of `w` points: `dst = act(src + bias + res)`.
#[inline(always)]
fn store_row_body(
    dst: &mut [f32],
    src: &[f32],
    bias: Option<&[f32]>,
    res: Option<&[f32]>,
    relu: bool,
) {
    match (bias, res) {
        (None, None) if !relu => dst.copy_from_slice(src),
        (None, None) => {
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = fin(s, relu);
            }
        }
        (None, Some(r)) => {
            for ((d, &s), &r) in dst.iter_mut().zip(src).zip(r) {
                *d = fin(s + r, relu);
            }
        }
        (Some(b), None) => {
            let f = b.len();
            for (d, s) in dst.chunks_exact_mut(f).zip(src.chunks_exact(f)) {
                for ((d, &s), &b) in d.iter_mut().zip(s).zip(b) {
                    *d = fin(s + b, relu);
                }
            }
        }
        (Some(b), Some(r)) => {
            let f = b.len();
            for ((d, s), r) in dst
                .chunks_exact_mut(f)
                .zip(src.chunks_exact(f))
                .zip(r.chunks_exact(f))
            {
                for (((d, &s), &b), &r) in d.iter_mut().zip(s).zip(b).zip(r) {
                    *d = fin(s + b + r, relu);
                }
            }
        }
    }
}

dispatch!(store_row(dst: &mut [f32], src: &[f32], bias: Option<&[f32]>, res: Option<&[f32]>, relu: bool) => store_row_body);

/// Epilogue of a block: `tmp [ns * H * W, F]` -> bordered `out`, with
/// optional bias, residual (bordered, like `out`) and relu.
fn store_block(
    bd: &Board,
    f: usize,
    tmp: &[f32],
    out: &mut [f32],
    bias: Option<&[f32]>,
    res: Option<&[f32]>,
    relu: bool,
) {
    let (wp, plane, rw) = (bd.wp(), bd.plane(), bd.w * f);
    for (s, o) in out.chunks_exact_mut(plane * f).enumerate() {
        o[..(wp + 1) * f].fill(0.0);
        for y in 0..bd.h {
            let at = ((y + 1) * wp + 1) * f;
            let src = &tmp[(s * bd.h + y) * rw..][..rw];
            let r = res.map(|r| &r[s * plane * f + at..][..rw]);
            store_row(&mut o[at..at + rw], src, bias, r, relu);
            // Right border of this row and left border of the next.
            o[at + rw..at + rw + 2 * f].fill(0.0);
        }
        o[((bd.h + 1) * wp + 1) * f..].fill(0.0);
    }
}

/// A convolution's weights, laid out for the kernel that runs it.
pub(super) enum Weights {
    /// [`direct3x3`]: `[9C, F]` rows per (tap, input channel).
    Direct(Simd, Vec<f32>),
    /// im2col plus gemm: `[F, 9C]`.
    Im2col(Vec<f32>),
}

impl Weights {
    /// For the convolution by `w [F, C, 3, 3]`.
    pub(super) fn forward(w: &[f32], f: usize, c: usize) -> Self {
        match direct3x3::simd_for(f) {
            Some(simd) => Weights::Direct(simd, direct3x3::taps_by_filter(w, f, c)),
            None => Weights::Im2col(weight_matrix(w, f, c)),
        }
    }

    /// For the input gradient: `w` flipped in space, channels swapped.
    pub(super) fn flipped(w: &[f32], f: usize, c: usize) -> Self {
        match direct3x3::simd_for(c) {
            Some(simd) => Weights::Direct(simd, direct3x3::flipped_taps(w, f, c)),
            None => Weights::Im2col(flipped_matrix(w, f, c)),
        }
    }
}

/// The convolution proper: bordered `x [B, H+2, W+2, C]` (border zero)
/// by `wts` (F outputs) -> bordered `out [B, H+2, W+2, F]`.
#[allow(clippy::too_many_arguments)]
pub(super) fn conv_into(
    bd: &Board,
    c: usize,
    f: usize,
    x: &[f32],
    wts: &Weights,
    bias: Option<&[f32]>,
    res: Option<&[f32]>,
    relu: bool,
    out: &mut [f32],
) {
    let (k, plane) = (9 * c, bd.plane());
    let ns = match wts {
        Weights::Direct(..) => bd.block(),
        Weights::Im2col(_) => bd.conv_block(k),
    };
    let parallel = bd.b > ns;
    for_blocks(out, ns * plane * f, parallel, |i, o| {
        let n = o.len() / (plane * f);
        let s0 = i * ns;
        let xb = &x[s0 * plane * c..(s0 + n) * plane * c];
        let rb = res.map(|r| &r[s0 * plane * f..(s0 + n) * plane * f]);
        match wts {
            Weights::Direct(simd, wt) => {
                zero_border(bd, f, o);
                let g = direct3x3::Geom::new(bd, n, c, f);
                let ep = direct3x3::Epilogue {
                    bias,
                    res: rb,
                    relu,
                };
                direct3x3::conv(*simd, &g, xb, wt, ep, o);
            }
            Weights::Im2col(wmat) => {
                let rows = n * bd.points();
                with_scratch(rows * k, rows * f, |cols, tmp| {
                    im2col_block(bd, c, xb, n, cols);
                    sgemm_on(false, rows, f, k, tmp, f, false, cols, (k, 1), wmat, (1, k));
                    store_block(bd, f, tmp, o, bias, rb, relu);
                });
            }
        }
    });
}

/// `w [F, C, 3, 3]` -> `[F, 9C]`, column `(ky * 3 + kx) * C + c`.
fn weight_matrix(w: &[f32], f: usize, c: usize) -> Vec<f32> {
    let mut m = vec![0f32; f * 9 * c];
    for fo in 0..f {
        for ci in 0..c {
            for t in 0..9 {
                m[fo * 9 * c + t * c + ci] = w[(fo * c + ci) * 9 + t];
            }
        }
    }
    m
}

/// The input gradient's weights `[C, 9F]`: `w` flipped in space with
/// input and output channels swapped.
fn flipped_matrix(w: &[f32], f: usize, c: usize) -> Vec<f32> {
    let mut m = vec![0f32; c * 9 * f];
    for fo in 0..f {
        for ci in 0..c {
            for t in 0..9 {
                m[ci * 9 * f + (8 - t) * f + fo] = w[(fo * c + ci) * 9 + t];
            }
        }
    }
    m
}

/// Weight gradient `[F, C, 3, 3]` of `x` (bordered, border zero) and the
/// output gradient `gy` (bordered, border zero).
pub(super) fn weight_grad(bd: &Board, c: usize, f: usize, x: &[f32], gy: &[f32]) -> Vec<f32> {
    weight_grad_on(direct3x3::simd_for(c), bd, c, f, x, gy)
}

/// [`weight_grad`] with the direct kernel on `simd`, or im2col for `None`.
fn weight_grad_on(
    simd: Option<Simd>,
    bd: &Board,
    c: usize,
    f: usize,
    x: &[f32],
    gy: &[f32],
) -> Vec<f32> {
    let (k, plane, wp) = (9 * c, bd.plane(), bd.wp());
    let ns = match simd {
        Some(_) => bd.block(),
        None => bd.conv_block(k),
    };
    let blocks = bd.b.div_ceil(ns);
    let groups = blocks.div_ceil(GRAD_GROUP);
    let group = |gi: usize| -> Vec<f32> {
        // [9, F, C] (direct) or [9C, F] (im2col), summed over the
        // group's blocks in order.
        let mut dw = vec![0f32; f * k];
        for bi in gi * GRAD_GROUP..((gi + 1) * GRAD_GROUP).min(blocks) {
            let s0 = bi * ns;
            let n = ns.min(bd.b - s0);
            let (xb, gb) = (&x[s0 * plane * c..], &gy[s0 * plane * f..]);
            if let Some(simd) = simd {
                let g = direct3x3::Geom::new(bd, n, c, f);
                direct3x3::weight_grad(simd, &g, xb, gb, &mut dw);
                continue;
            }
            let rows = n * bd.points();
            with_scratch(rows * k, rows * f, |cols, g| {
                im2col_block(bd, c, xb, n, cols);
                // The output gradient's interior rows, contiguous.
                let mut gr = g.chunks_exact_mut(bd.w * f);
                for s in 0..n {
                    for y in 0..bd.h {
                        let at = (s * plane + (y + 1) * wp + 1) * f;
                        if let Some(d) = gr.next() {
                            d.copy_from_slice(&gb[at..at + bd.w * f]);
                        }
                    }
                }
                // dw^T[9C, F] += cols^T[9C, rows] * g[rows, F]
                sgemm_on(false, k, f, rows, &mut dw, f, true, cols, (1, k), g, (f, 1));
            });
        }
        dw
    };
    let dwm = sum_parts(groups, f * k, group);
    // -> [F, C, 3, 3]
    let mut dw = vec![0f32; f * k];
    for fo in 0..f {
        for ci in 0..c {
            for t in 0..9 {
                dw[(fo * c + ci) * 9 + t] = match simd {
                    Some(_) => dwm[(t * f + fo) * c + ci],
                    None => dwm[(t * c + ci) * f + fo],
                };
            }
        }
    }
    dw
}

fn check_weight(op: &str, bd: &Board, c: usize, w: &[usize]) -> Result<usize> {
    match *w {
        [f, c2, 3, 3] if c2 == c && f > 0 => Ok(f),
        _ => candle_core::bail!(
            "{op}: weight {w:?} does not fit a 3x3 convolution of {c} channels ({bd:?})"
        ),
    }
}

/// The two implementations of the 3x3 convolution, for `plies bench conv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conv3x3Impl {
    /// Register tiles straight from the bordered input (`direct3x3.rs`).
    Direct,
    /// im2col rows per block of samples, then gemm.
    Im2col,
}

/// A forward pass (`c` -> `f` channels; `weight_grad: false`) or a weight
/// gradient (`true`) of bordered `[b, h+2, w+2, *]` activations with one
/// implementation, for timing: `None` when the direct kernel does not fit
/// these channel counts on this CPU. Returns the result: the bordered
/// output, or the weight gradient `[F, C, 3, 3]`.
#[allow(clippy::too_many_arguments)]
pub fn conv3x3_pass(
    imp: Conv3x3Impl,
    weight_grad: bool,
    b: usize,
    h: usize,
    w: usize,
    c: usize,
    f: usize,
    x: &[f32],
    weights: &[f32],
    gy: &[f32],
) -> Option<Vec<f32>> {
    let bd = Board { b, h, w };
    assert!(x.len() == b * bd.plane() * c && gy.len() == b * bd.plane() * f);
    assert!(weights.len() == f * c * 9);
    if weight_grad {
        let simd = match imp {
            Conv3x3Impl::Direct => Some(direct3x3::simd_for(c)?),
            Conv3x3Impl::Im2col => None,
        };
        return Some(weight_grad_on(simd, &bd, c, f, x, gy));
    }
    let wts = match imp {
        Conv3x3Impl::Direct => Weights::Direct(
            direct3x3::simd_for(f)?,
            direct3x3::taps_by_filter(weights, f, c),
        ),
        Conv3x3Impl::Im2col => Weights::Im2col(weight_matrix(weights, f, c)),
    };
    let mut out = output_vec(b * bd.plane() * f);
    conv_into(&bd, c, f, x, &wts, None, None, false, &mut out);
    Some(out)
}

/// The training convolution; remembers whether the forward's input had a
/// zero border, so that the backward pass need not scan it again.
#[derive(Default)]
struct Conv3x3 {
    clean_input: std::sync::atomic::AtomicBool,
}

impl F32Kernel<2> for Conv3x3 {
    const NAME: &'static str = "plies-conv3x3";

    fn forward(&self, [(x, l1), (w, l2)]: [In<'_>; 2]) -> Result<Out> {
        let (bd, c) = Board::of(Self::NAME, l1.dims())?;
        let f = check_weight(Self::NAME, &bd, c, l2.dims())?;
        let x = zero_bordered(&bd, c, x);
        let clean = matches!(x, std::borrow::Cow::Borrowed(_));
        self.clean_input
            .store(clean, std::sync::atomic::Ordering::Relaxed);
        let mut out = output_vec(bd.b * bd.plane() * f);
        let wts = Weights::forward(w, f, c);
        conv_into(&bd, c, f, &x, &wts, None, None, false, &mut out);
        Ok((out, bd.shape(f)))
    }

    fn backward(&self, [x, w]: [&Tensor; 2], _res: &Tensor, grad: &Tensor) -> Result<Grads<2>> {
        let (bd, c) = Board::of(Self::NAME, x.dims())?;
        let f = check_weight(Self::NAME, &bd, c, w.dims())?;
        let wv = w.flatten_all()?.to_vec1::<f32>()?;
        let dev = x.device();
        with_f32(grad, |gy| -> Result<_> {
            let gy = zero_bordered(&bd, f, gy);
            let dx = if x.track_op() {
                let mut dx = output_vec(bd.b * bd.plane() * c);
                let wf = Weights::flipped(&wv, f, c);
                conv_into(&bd, f, c, &gy, &wf, None, None, false, &mut dx);
                Some(Tensor::from_vec(dx, x.shape(), dev)?)
            } else {
                None
            };
            let dw = if w.track_op() {
                let dw = with_f32(x, |xv| {
                    // The same tensor as in the forward pass.
                    let xv = if self.clean_input.load(std::sync::atomic::Ordering::Relaxed) {
                        std::borrow::Cow::Borrowed(xv)
                    } else {
                        zero_bordered(&bd, c, xv)
                    };
                    weight_grad(&bd, c, f, &xv, &gy)
                })?;
                Some(Tensor::from_vec(dw, w.shape(), dev)?)
            } else {
                None
            };
            Ok([dx, dw])
        })?
    }
}

/// 3x3 convolution with padding 1 of a bordered `x [B, H+2, W+2, C]` by
/// `w [F, C, 3, 3]` (PyTorch's layout): bordered `[B, H+2, W+2, F]`, with
/// gradients for both. CPU f32 only.
pub fn conv3x3(x: &Tensor, w: &Tensor) -> Result<Tensor> {
    check_args("conv3x3", x, w)?;
    x.contiguous()?
        .apply_op2(&w.contiguous()?, F32Op(Conv3x3::default()))
}

fn check_args(op: &str, x: &Tensor, w: &Tensor) -> Result<(Board, usize, usize)> {
    require_cpu_f32(op, &[x, w])?;
    let (bd, c) = Board::of(op, x.dims())?;
    let f = check_weight(op, &bd, c, w.dims())?;
    Ok((bd, c, f))
}

/// A 3x3 convolution's weights `[F, C, 3, 3]` and bias `[F]`, laid out for
/// the kernel once: inference calls with fixed weights reuse them
/// ([`conv3x3_infer`] prepares them on every call; for a batch of one
/// position that took as long as the convolution).
pub struct Conv3x3Weights {
    wts: Weights,
    bias: Vec<f32>,
    c: usize,
    f: usize,
}

impl Conv3x3Weights {
    pub fn new(w: &Tensor, b: &Tensor) -> Result<Self> {
        let op = "conv3x3_weights";
        let (f, c) = match *w.dims() {
            [f, c, 3, 3] if f > 0 && c > 0 => (f, c),
            _ => candle_core::bail!("{op}: weight {:?} is not [F, C, 3, 3]", w.dims()),
        };
        if b.dims() != [f] {
            candle_core::bail!("{op}: bias {:?} for {f} filters", b.dims());
        }
        let w = w.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?;
        Ok(Conv3x3Weights {
            wts: Weights::forward(&w, f, c),
            bias: b.to_dtype(DType::F32)?.to_vec1::<f32>()?,
            c,
            f,
        })
    }

    /// `act(conv3x3(x) + b + res)` on bordered activations, as
    /// [`conv3x3_infer`].
    pub fn apply(self: &Arc<Self>, x: &Tensor, res: Option<&Tensor>, act: Act) -> Result<Tensor> {
        let op = "conv3x3_infer";
        require_cpu_f32(op, &[x])?;
        let (bd, c) = Board::of(op, x.dims())?;
        if c != self.c {
            candle_core::bail!("{op}: {c} input channels for weights of {}", self.c);
        }
        let relu = match act {
            Act::Relu => true,
            Act::Identity => false,
            _ => candle_core::bail!("{op}: relu or identity only, not {act:?}"),
        };
        if let Some(r) = res {
            if r.dims() != bd.shape(self.f).dims() || r.dtype() != DType::F32 {
                candle_core::bail!("{op}: residual {:?} for {:?}", r.dims(), bd);
            }
        }
        let op = Conv3x3Infer {
            weights: self.clone(),
            res: res.map(Tensor::contiguous).transpose()?,
            relu,
        };
        x.detach().contiguous()?.apply_op1(F32Op(op))
    }
}

/// Inference-only convolution with bias, residual and activation fused.
struct Conv3x3Infer {
    weights: Arc<Conv3x3Weights>,
    res: Option<Tensor>,
    relu: bool,
}

impl F32Kernel<1> for Conv3x3Infer {
    const NAME: &'static str = "plies-conv3x3-infer";

    fn forward(&self, [(x, l)]: [In<'_>; 1]) -> Result<Out> {
        let (bd, c) = Board::of(Self::NAME, l.dims())?;
        let p = &self.weights;
        let x = zero_bordered(&bd, c, x);
        let mut out = output_vec(bd.b * bd.plane() * p.f);
        let mut run = |res: Option<&[f32]>| {
            conv_into(
                &bd,
                c,
                p.f,
                &x,
                &p.wts,
                Some(&p.bias),
                res,
                self.relu,
                &mut out,
            )
        };
        match &self.res {
            Some(r) => with_f32(r, |r| run(Some(r)))?,
            None => run(None),
        }
        Ok((out, bd.shape(p.f)))
    }
}

/// `act(conv3x3(x, w) + b + res)` on bordered activations, as
/// [`conv3x3`] plus a bias `[F]`, an optional residual (bordered
/// `[B, H+2, W+2, F]`) and an activation (identity or relu), in one pass:
/// for inference, no gradients.
pub fn conv3x3_infer(
    x: &Tensor,
    w: &Tensor,
    b: &Tensor,
    res: Option<&Tensor>,
    act: Act,
) -> Result<Tensor> {
    check_args("conv3x3_infer", x, w)?;
    Arc::new(Conv3x3Weights::new(w, b)?).apply(x, res, act)
}

#[cfg(test)]
mod tests {
    use super::super::bordered::{from_bordered, to_bordered};
    use super::*;
    use crate::model::test_tensors::{check_conv_against_candle, max_diff};
    use candle_core::Device;

    #[test]
    fn values_and_gradients_match_candle() -> Result<()> {
        let mut rt = crate::model::test_tensors::SeededTensors::new(1);
        // batch, channels, filters, height, width; the last ones span
        // several blocks and gradient groups.
        for dims in [
            (2, 3, 4, 5, 4),
            (3, 6, 8, 8, 8),
            (1, 2, 3, 1, 1),
            (70, 8, 5, 8, 8),
            (300, 4, 4, 3, 2),
        ] {
            check_conv_against_candle(&mut rt, dims, (3, 1), |x, w| {
                from_bordered(&conv3x3(&to_bordered(x)?, w)?)
            })?;
        }
        Ok(())
    }

    /// The benchmark's two implementations compute the same results, and
    /// the direct one declines channel counts it cannot run.
    #[test]
    fn bench_passes_agree() {
        let (b, h, w) = (3, 5, 4);
        let plane = (h + 2) * (w + 2);
        let mut rt = crate::model::test_tensors::SeededTensors::new(4);
        let dev = Device::Cpu;
        let mut draw = |n: usize| {
            rt.randn(0f32, 1.0, n, &dev)
                .and_then(|t| t.to_vec1::<f32>())
                .expect("draw")
        };
        let bd = Board { b, h, w };
        for c in [16, 6] {
            let mut x = draw(b * plane * c);
            let mut gy = draw(b * plane * c);
            zero_border(&bd, c, &mut x);
            zero_border(&bd, c, &mut gy);
            let wv = draw(c * c * 9);
            for grad in [false, true] {
                let run = |imp| {
                    conv3x3_pass(imp, grad, b, h, w, c, c, &x, &wv, &gy)
                        .map(|v| v.iter().map(|&x| x as f64).sum::<f64>())
                };
                let im2col = run(Conv3x3Impl::Im2col).expect("im2col always runs");
                match run(Conv3x3Impl::Direct) {
                    Some(direct) => {
                        assert!(c % 8 == 0, "direct ran {c} channels");
                        let d = (direct - im2col).abs() / im2col.abs().max(1.0);
                        assert!(d < 1e-5, "c{c} grad {grad}: {direct} vs {im2col}");
                    }
                    None => assert!(
                        c % 8 != 0 || direct3x3::simd_for(c).is_none(),
                        "c{c}: direct declined"
                    ),
                }
            }
        }
    }

    #[test]
    fn border_is_ignored_and_infer_fuses() -> Result<()> {
        let mut rt = crate::model::test_tensors::SeededTensors::new(2);
        let dev = Device::Cpu;
        let x = to_bordered(&rt.randn(0f32, 1.0, (5, 3, 4, 6), &dev)?)?;
        let w = rt.randn(0f32, 0.3, (4, 3, 3, 3), &dev)?;
        // Ones on the border, x inside.
        let ones = Tensor::ones((5, 3, 4, 6), DType::F32, &dev)?;
        let border = (Tensor::ones(x.shape(), DType::F32, &dev)? - to_bordered(&ones)?)?;
        let noisy = (&x + border)?;
        let y = conv3x3(&x, &w)?;
        assert_eq!(max_diff(&y, &conv3x3(&noisy, &w)?), 0.0);
        let b = rt.randn(0f32, 1.0, 4, &dev)?;
        let r = to_bordered(&rt.randn(0f32, 1.0, (5, 4, 4, 6), &dev)?)?;
        let fused = conv3x3_infer(&x, &w, &b, Some(&r), Act::Relu)?;
        let bb = to_bordered(&b.reshape((1, 4, 1, 1))?.broadcast_as((5, 4, 4, 6))?)?;
        let want = (&y + &bb + &r)?.relu()?;
        assert!(max_diff(&fused, &want) < 1e-6);
        assert!(conv3x3(&x, &Tensor::zeros((4, 2, 3, 3), DType::F32, &dev)?).is_err());
        Ok(())
    }
}
