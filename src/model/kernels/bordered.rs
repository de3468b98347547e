//! Bordered channels-last activations: `[B, H+2, W+2, C]` with a zero
//! border one point wide, the layout of [`super::conv3x3`] and
//! [`super::batch_norm_relu`]. A 3x3 convolution with padding 1 then reads
//! its neighbourhoods straight from memory (no bounds checks, each kernel
//! row one contiguous run of `3 * C` values), and the ops between
//! convolutions write the border once instead of padding every time.
//!
//! Ops on this layout treat the border as zero whatever it holds, and
//! return zero gradients for it.

use super::op::{require_cpu_f32, F32Kernel, F32Op, Grads, In, Out};
use candle_core::{Result, Shape, Tensor};
use rayon::prelude::*;
use std::cell::RefCell;

/// Interior size of a bordered activation `[b, h+2, w+2, *]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Board {
    pub b: usize,
    pub h: usize,
    pub w: usize,
}

/// Positions per block of samples: a block's im2col rows, products and
/// outputs stay in a core's cache. Fixed (not derived from the thread
/// count) so that blocked sums do not depend on it.
const BLOCK_POINTS: usize = 512;

/// im2col values per convolution block (1 MiB: a core's L2 on recent
/// x86; smaller blocks measured no faster).
const COLS_FLOATS: usize = 1 << 18;

impl Board {
    /// The board and channels of a bordered shape `[B, H+2, W+2, C]`.
    pub fn of(op: &str, dims: &[usize]) -> Result<(Board, usize)> {
        match *dims {
            [b, hp, wp, c] if hp >= 3 && wp >= 3 && c > 0 => Ok((
                Board {
                    b,
                    h: hp - 2,
                    w: wp - 2,
                },
                c,
            )),
            _ => candle_core::bail!(
                "{op}: {dims:?} is not a bordered [B, H+2, W+2, C] shape (H, W, C >= 1)"
            ),
        }
    }

    pub fn wp(&self) -> usize {
        self.w + 2
    }

    /// Positions per sample, border included.
    pub fn plane(&self) -> usize {
        (self.h + 2) * (self.w + 2)
    }

    /// Interior positions per sample.
    pub fn points(&self) -> usize {
        self.h * self.w
    }

    /// Samples per block.
    pub fn block(&self) -> usize {
        (BLOCK_POINTS / self.points().max(1)).max(1)
    }

    /// Samples per block of a convolution with `k` im2col columns.
    pub fn conv_block(&self, k: usize) -> usize {
        (COLS_FLOATS / (k * self.points()).max(1)).max(1)
    }

    pub fn shape(&self, c: usize) -> Shape {
        Shape::from((self.b, self.h + 2, self.w + 2, c))
    }
}

/// Runs `f(block index, chunk)` over consecutive `chunk`-sized pieces of
/// `buf`, on rayon's pool when `parallel`.
pub(crate) fn for_blocks<F>(buf: &mut [f32], chunk: usize, parallel: bool, f: F)
where
    F: Fn(usize, &mut [f32]) + Sync + Send,
{
    if chunk == 0 || buf.is_empty() {
        return;
    }
    if parallel && buf.len() > chunk && rayon::current_num_threads() > 1 {
        buf.par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(i, c)| f(i, c));
    } else {
        buf.chunks_mut(chunk).enumerate().for_each(|(i, c)| f(i, c));
    }
}

thread_local! {
    static SCRATCH: RefCell<[Vec<f32>; 2]> = const { RefCell::new([Vec::new(), Vec::new()]) };
}

/// Two scratch slices of `a` and `b` values (contents unspecified), kept
/// per thread between calls so that blocks neither allocate nor clear.
pub(crate) fn with_scratch<R>(
    a: usize,
    b: usize,
    f: impl FnOnce(&mut [f32], &mut [f32]) -> R,
) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => {
            let [x, y] = &mut *s;
            if x.len() < a {
                x.resize(a, 0.0);
            }
            if y.len() < b {
                y.resize(b, 0.0);
            }
            f(&mut x[..a], &mut y[..b])
        }
        // Re-entered on this thread: fresh buffers.
        Err(_) => f(&mut vec![0.0; a], &mut vec![0.0; b]),
    })
}

/// A vector of `n` values that the caller overwrites entirely before
/// anything reads them: no clearing pass (that was a tenth of a training
/// step).
#[allow(clippy::uninit_vec)]
pub(crate) fn output_vec(n: usize) -> Vec<f32> {
    let mut v = Vec::with_capacity(n);
    // SAFETY: f32 has no invalid bit patterns and every caller writes all
    // `n` values before the vector is read or handed to a tensor.
    unsafe { v.set_len(n) };
    v
}

/// Calls `f` on each sample's border as contiguous runs: the top row with
/// the next row's left point, each right point with the next left point,
/// the last right point with the bottom row.
#[inline(always)]
fn border_runs(bd: &Board, c: usize, mut f: impl FnMut(std::ops::Range<usize>)) {
    let wp = bd.wp();
    f(0..(wp + 1) * c);
    for y in 1..bd.h {
        let at = ((y + 1) * wp - 1) * c;
        f(at..at + 2 * c);
    }
    let at = ((bd.h + 1) * wp - 1) * c;
    f(at..bd.plane() * c);
}

/// Zeroes the border of each sample of a bordered `[*, H+2, W+2, c]`
/// buffer.
pub(crate) fn zero_border(bd: &Board, c: usize, x: &mut [f32]) {
    for s in x.chunks_exact_mut(bd.plane() * c) {
        border_runs(bd, c, |r| s[r].fill(0.0));
    }
}

/// Whether the border of every sample is zero (either sign).
pub(crate) fn border_is_zero(bd: &Board, c: usize, x: &[f32]) -> bool {
    let mut bits = 0u32;
    for s in x.chunks_exact(bd.plane() * c) {
        border_runs(bd, c, |r| {
            bits |= s[r].iter().fold(0u32, |a, v| a | (v.to_bits() << 1));
        });
    }
    bits == 0
}

/// `x` itself when its border is zero, else a copy with the border zeroed.
pub(crate) fn zero_bordered<'a>(bd: &Board, c: usize, x: &'a [f32]) -> std::borrow::Cow<'a, [f32]> {
    if border_is_zero(bd, c, x) {
        std::borrow::Cow::Borrowed(x)
    } else {
        let mut v = x.to_vec();
        zero_border(bd, c, &mut v);
        std::borrow::Cow::Owned(v)
    }
}

/// Planes `[B, C, H, W]` -> bordered `[B, H+2, W+2, C]`.
fn to_bordered_into(bd: &Board, c: usize, x: &[f32], out: &mut [f32]) {
    let (wp, plane, n) = (bd.wp(), bd.plane(), bd.points());
    for_blocks(out, plane * c, bd.b * plane * c >= 1 << 16, |s, o| {
        zero_border(bd, c, o);
        let xs = &x[s * c * n..(s + 1) * c * n];
        for y in 0..bd.h {
            for xx in 0..bd.w {
                let d = &mut o[((y + 1) * wp + xx + 1) * c..][..c];
                for (ci, d) in d.iter_mut().enumerate() {
                    *d = xs[ci * n + y * bd.w + xx];
                }
            }
        }
    });
}

/// Bordered `[B, H+2, W+2, C]` -> planes `[B, C, H, W]` (border dropped).
fn from_bordered_into(bd: &Board, c: usize, x: &[f32], out: &mut [f32]) {
    let (wp, plane, n) = (bd.wp(), bd.plane(), bd.points());
    for_blocks(out, c * n, bd.b * plane * c >= 1 << 16, |s, o| {
        let xs = &x[s * plane * c..(s + 1) * plane * c];
        for y in 0..bd.h {
            for xx in 0..bd.w {
                let src = &xs[((y + 1) * wp + xx + 1) * c..][..c];
                for (ci, &v) in src.iter().enumerate() {
                    o[ci * n + y * bd.w + xx] = v;
                }
            }
        }
    });
}

struct ToBordered;

impl F32Kernel<1> for ToBordered {
    const NAME: &'static str = "plies-to-bordered";

    fn forward(&self, [(x, l)]: [In<'_>; 1]) -> Result<Out> {
        let (b, c, h, w) = l.shape().dims4()?;
        if c == 0 || h == 0 || w == 0 {
            candle_core::bail!("{}: empty planes {:?}", Self::NAME, l.dims());
        }
        let bd = Board { b, h, w };
        let mut out = output_vec(b * bd.plane() * c);
        to_bordered_into(&bd, c, x, &mut out);
        Ok((out, bd.shape(c)))
    }

    fn backward(&self, _: [&Tensor; 1], _res: &Tensor, grad: &Tensor) -> Result<Grads<1>> {
        Ok([Some(from_bordered(grad)?)])
    }
}

struct FromBordered;

impl F32Kernel<1> for FromBordered {
    const NAME: &'static str = "plies-from-bordered";

    fn forward(&self, [(x, l)]: [In<'_>; 1]) -> Result<Out> {
        let (bd, c) = Board::of(Self::NAME, l.dims())?;
        let mut out = output_vec(bd.b * c * bd.points());
        from_bordered_into(&bd, c, x, &mut out);
        Ok((out, Shape::from((bd.b, c, bd.h, bd.w))))
    }

    fn backward(&self, _: [&Tensor; 1], _res: &Tensor, grad: &Tensor) -> Result<Grads<1>> {
        Ok([Some(to_bordered(grad)?)])
    }
}

/// Planes `[B, C, H, W]` -> bordered channels-last `[B, H+2, W+2, C]`
/// (CPU f32), with its backward pass.
pub fn to_bordered(x: &Tensor) -> Result<Tensor> {
    require_cpu_f32("to_bordered", &[x])?;
    x.dims4()?;
    x.contiguous()?.apply_op1(F32Op(ToBordered))
}

/// Bordered channels-last `[B, H+2, W+2, C]` -> planes `[B, C, H, W]`
/// (CPU f32), with its backward pass.
pub fn from_bordered(x: &Tensor) -> Result<Tensor> {
    require_cpu_f32("from_bordered", &[x])?;
    Board::of("from_bordered", x.dims())?;
    x.contiguous()?.apply_op1(F32Op(FromBordered))
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device, Var};

    #[test]
    fn round_trip_border_and_gradients() -> Result<()> {
        let mut rt = crate::model::test_tensors::SeededTensors::new(1);
        let dev = Device::Cpu;
        let x = Var::from_tensor(&rt.randn(0f32, 1.0, (3, 4, 5, 6), &dev)?)?;
        let p = to_bordered(&x)?;
        assert_eq!(p.dims(), &[3, 7, 8, 4]);
        let stock = x
            .permute((0, 2, 3, 1))?
            .pad_with_zeros(1, 1, 1)?
            .pad_with_zeros(2, 1, 1)?;
        let d = (&p - &stock)?.abs()?.max_all()?.to_scalar::<f32>()?;
        assert_eq!(d, 0.0);
        let back = from_bordered(&p)?;
        let d = (&back - x.as_tensor())?
            .abs()?
            .max_all()?
            .to_scalar::<f32>()?;
        assert_eq!(d, 0.0);
        let up = rt.randn(0f32, 1.0, back.shape(), &dev)?;
        let g = (back * &up)?.sum_all()?.backward()?;
        let d = (g.get(&x).expect("grad") - &up)?
            .abs()?
            .max_all()?
            .to_scalar::<f32>()?;
        assert_eq!(d, 0.0);
        assert!(from_bordered(&Tensor::zeros((1, 2, 3, 1), DType::F32, &dev)?).is_err());
        Ok(())
    }

    #[test]
    fn border_checks() {
        let bd = Board { b: 2, h: 2, w: 3 };
        let mut x = vec![1f32; 2 * bd.plane() * 3];
        assert!(!border_is_zero(&bd, 3, &x));
        zero_border(&bd, 3, &mut x);
        assert!(border_is_zero(&bd, 3, &x));
        assert_eq!(x.iter().sum::<f32>(), (2 * 2 * 3 * 3) as f32);
    }
}
