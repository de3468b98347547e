//! 1x1 convolution with few filters (value and policy heads) from a
//! bordered channels-last activation ([`super::bordered`]) straight to
//! planes: `x [B, H+2, W+2, C]`, `w [F, C, 1, 1]` -> `[B, F, H, W]`.
//!
//! Each output is a dot product of one point's `C` contiguous channels, so
//! no layout change, im2col or transpose is needed either way; the input
//! gradient is written bordered (border zero). Meant for small `F` (the
//! work per point is `F * C`, without a matrix product's blocking).

use super::act::{dispatch, with_f32};
use super::bordered::{for_blocks, output_vec, Board};
use super::op::{require_cpu_f32, F32Kernel, F32Op, Grads, In, Out};
use super::sum_parts;
use candle_core::{Result, Shape, Tensor};

#[inline(always)]
fn dot_body(a: &[f32], b: &[f32]) -> f32 {
    // Eight partial sums: vectorisable without reassociating one chain.
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut s = acc.iter().sum::<f32>();
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// Calls `point(at, p)` for each interior point of bordered sample `s`:
/// `at` is the offset of its `C` channels, `p` its index in an `[H*W]`
/// plane.
#[inline(always)]
fn for_points(bd: &Board, c: usize, s: usize, mut point: impl FnMut(usize, usize)) {
    let (wp, plane) = (bd.wp(), bd.plane());
    for y in 0..bd.h {
        for xx in 0..bd.w {
            point((s * plane + (y + 1) * wp + xx + 1) * c, y * bd.w + xx);
        }
    }
}

/// `out [ns, F, H*W]` from bordered `x [ns, H+2, W+2, C]`.
#[inline(always)]
fn fwd_block_body(bd: &Board, c: usize, x: &[f32], w: &[f32], out: &mut [f32]) {
    let (n, f) = (bd.points(), w.len() / c);
    for (s, o) in out.chunks_exact_mut(f * n).enumerate() {
        for_points(bd, c, s, |at, p| {
            let xv = &x[at..at + c];
            for (fo, wf) in w.chunks_exact(c).enumerate() {
                o[fo * n + p] = dot_body(xv, wf);
            }
        });
    }
}
dispatch!(fwd_block(bd: &Board, c: usize, x: &[f32], w: &[f32], out: &mut [f32]) => fwd_block_body);

/// Bordered `dx [ns, H+2, W+2, C]` (interior) from `g [ns, F, H*W]`.
#[inline(always)]
fn dx_block_body(bd: &Board, c: usize, g: &[f32], w: &[f32], dx: &mut [f32]) {
    let (n, f) = (bd.points(), w.len() / c);
    for (s, gs) in g.chunks_exact(f * n).enumerate() {
        for_points(bd, c, s, |at, p| {
            let d = &mut dx[at..at + c];
            d.fill(0.0);
            for (fo, wf) in w.chunks_exact(c).enumerate() {
                let gv = gs[fo * n + p];
                for (d, &wv) in d.iter_mut().zip(wf) {
                    *d += gv * wv;
                }
            }
        });
    }
}
dispatch!(dx_block(bd: &Board, c: usize, g: &[f32], w: &[f32], dx: &mut [f32]) => dx_block_body);

/// `dw [F, C] += sum over points of g * x` for a block.
#[inline(always)]
fn dw_block_body(bd: &Board, c: usize, x: &[f32], g: &[f32], dw: &mut [f32]) {
    let (n, f) = (bd.points(), dw.len() / c);
    for (s, gs) in g.chunks_exact(f * n).enumerate() {
        for_points(bd, c, s, |at, p| {
            let xv = &x[at..at + c];
            for (fo, d) in dw.chunks_exact_mut(c).enumerate() {
                let gv = gs[fo * n + p];
                for (d, &xv) in d.iter_mut().zip(xv) {
                    *d += gv * xv;
                }
            }
        });
    }
}
dispatch!(dw_block(bd: &Board, c: usize, x: &[f32], g: &[f32], dw: &mut [f32]) => dw_block_body);

fn check(op: &str, xd: &[usize], wd: &[usize]) -> Result<(Board, usize, usize)> {
    let (bd, c) = Board::of(op, xd)?;
    match *wd {
        [f, c2, 1, 1] if c2 == c && f > 0 => Ok((bd, c, f)),
        _ => candle_core::bail!("{op}: weight {wd:?} for {c} channels"),
    }
}

struct Conv1x1;

impl F32Kernel<2> for Conv1x1 {
    const NAME: &'static str = "plies-conv1x1-from-bordered";

    fn forward(&self, [(x, l1), (w, l2)]: [In<'_>; 2]) -> Result<Out> {
        let (bd, c, f) = check(Self::NAME, l1.dims(), l2.dims())?;
        let (ns, plane, n) = (bd.block(), bd.plane(), bd.points());
        let mut out = output_vec(bd.b * f * n);
        for_blocks(&mut out, ns * f * n, bd.b > ns, |i, o| {
            let s0 = i * ns;
            let k = o.len() / (f * n);
            fwd_block(&bd, c, &x[s0 * plane * c..(s0 + k) * plane * c], w, o);
        });
        Ok((out, Shape::from((bd.b, f, bd.h, bd.w))))
    }

    fn backward(&self, [x, w]: [&Tensor; 2], _res: &Tensor, grad: &Tensor) -> Result<Grads<2>> {
        let (bd, c, f) = check(Self::NAME, x.dims(), w.dims())?;
        let (ns, plane, n) = (bd.block(), bd.plane(), bd.points());
        let wv = w.flatten_all()?.to_vec1::<f32>()?;
        let dev = x.device();
        let (dx, dw) = with_f32(grad, |g| {
            let dx = x.track_op().then(|| {
                let mut dx = output_vec(bd.b * plane * c);
                for_blocks(&mut dx, ns * plane * c, bd.b > ns, |i, d| {
                    super::bordered::zero_border(&bd, c, d);
                    let s0 = i * ns;
                    let k = d.len() / (plane * c);
                    dx_block(&bd, c, &g[s0 * f * n..(s0 + k) * f * n], &wv, d);
                });
                dx
            });
            let dw = with_f32(x, |xv| {
                // Per-block partial sums, added in block order.
                let blocks = bd.b.div_ceil(ns);
                let part = |i: usize| {
                    let (s0, s1) = (i * ns, ((i + 1) * ns).min(bd.b));
                    let mut dw = vec![0f32; f * c];
                    dw_block(
                        &bd,
                        c,
                        &xv[s0 * plane * c..s1 * plane * c],
                        &g[s0 * f * n..s1 * f * n],
                        &mut dw,
                    );
                    dw
                };
                sum_parts(blocks, f * c, part)
            });
            (dx, dw)
        })?;
        Ok([
            dx.map(|d| Tensor::from_vec(d, x.shape(), dev))
                .transpose()?,
            Some(Tensor::from_vec(dw?, w.shape(), dev)?),
        ])
    }
}

/// 1x1 convolution (no bias) of a bordered `x [B, H+2, W+2, C]` by
/// `w [F, C, 1, 1]`: planes `[B, F, H, W]`, with gradients for both (the
/// input's bordered, border zero). CPU f32 only; for few filters.
pub fn conv1x1_from_bordered(x: &Tensor, w: &Tensor) -> Result<Tensor> {
    let op = "conv1x1_from_bordered";
    require_cpu_f32(op, &[x, w])?;
    check(op, x.dims(), w.dims())?;
    x.contiguous()?.apply_op2(&w.contiguous()?, F32Op(Conv1x1))
}

#[cfg(test)]
mod tests {
    use super::super::bordered::to_bordered;
    use super::*;
    use crate::model::test_tensors::check_conv_against_candle;

    #[test]
    fn matches_candle_conv() -> Result<()> {
        let mut rt = crate::model::test_tensors::SeededTensors::new(1);
        for dims in [(3, 5, 1, 4, 3), (70, 32, 2, 8, 8), (2, 17, 3, 1, 1)] {
            check_conv_against_candle(&mut rt, dims, (1, 0), |x, w| {
                conv1x1_from_bordered(&to_bordered(x)?, w)
            })?;
        }
        Ok(())
    }
}
