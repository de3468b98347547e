//! Momentum SGD's update in place on CPU tensors: one pass over each
//! parameter and its buffer, instead of a chain of candle ops that each
//! allocate, fill and free a parameter-sized tensor (eight per parameter
//! per step: a tenth of a cnn3 training step).
//!
//! Each value goes through the same f32 (or f64) operations in the same
//! order as the candle ops it replaces (`affine` is `v * mul + add`), so
//! the two paths agree bit for bit (tested); other devices keep the ops.

use candle_core::{CpuStorage, InplaceOp2, InplaceOp3, Layout, Result, Tensor, WithDType};
use rayon::prelude::*;

/// Values per parallel chunk; smaller tensors stay on the calling thread.
const CHUNK: usize = 1 << 15;

/// Whether the in-place path takes these tensors: all on the CPU,
/// contiguous and of one float type.
pub(super) fn takes(tensors: &[&Tensor]) -> bool {
    let Some(first) = tensors.first() else {
        return false;
    };
    tensors.iter().all(|t| {
        t.device().is_cpu()
            && t.is_contiguous()
            && t.dtype() == first.dtype()
            && matches!(t.dtype(), candle_core::DType::F32 | candle_core::DType::F64)
    })
}

/// `buf = buf * momentum + (g * (1 - dampening))`, in place.
pub(super) struct BufferUpdate {
    pub momentum: f64,
    pub dampening: f64,
}

/// `p = p - (g + buf * momentum) * lr` (Nesterov) or `p = p - buf * lr`,
/// in place.
pub(super) struct ParamUpdate {
    pub lr: f64,
    pub momentum: f64,
    pub nesterov: bool,
}

/// `dst[i] = f(dst[i], a[i], b[i])` over contiguous slices, in parallel
/// chunks when large.
fn zip_apply<T: WithDType>(dst: &mut [T], a: &[T], b: &[T], f: impl Fn(T, T, T) -> T + Sync) {
    let run = |d: &mut [T], a: &[T], b: &[T]| {
        for ((d, &a), &b) in d.iter_mut().zip(a).zip(b) {
            *d = f(*d, a, b);
        }
    };
    if dst.len() < 2 * CHUNK || rayon::current_num_threads() < 2 {
        run(dst, a, b);
    } else {
        dst.par_chunks_mut(CHUNK)
            .zip(a.par_chunks(CHUNK))
            .zip(b.par_chunks(CHUNK))
            .for_each(|((d, a), b)| run(d, a, b));
    }
}

/// A contiguous slice of a storage, checked against the destination's
/// length.
fn slice<'a, T: WithDType>(
    name: &str,
    s: &'a CpuStorage,
    l: &Layout,
    len: usize,
) -> Result<&'a [T]> {
    let v = T::cpu_storage_as_slice(s)?;
    match l.contiguous_offsets() {
        Some((a, b)) if b - a == len => Ok(&v[a..b]),
        _ => candle_core::bail!("{name}: contiguous operands of {len} values only"),
    }
}

/// Runs `f` on the destination's contiguous values, f32 or f64.
fn with_dst(
    name: &str,
    dst: &mut CpuStorage,
    l: &Layout,
    f32s: impl FnOnce(&mut [f32]) -> Result<()>,
    f64s: impl FnOnce(&mut [f64]) -> Result<()>,
) -> Result<()> {
    let Some((a, b)) = l.contiguous_offsets() else {
        candle_core::bail!("{name}: a contiguous destination only");
    };
    match dst {
        CpuStorage::F32(v) => f32s(&mut v[a..b]),
        CpuStorage::F64(v) => f64s(&mut v[a..b]),
        _ => candle_core::bail!("{name}: f32 or f64 parameters only"),
    }
}

impl BufferUpdate {
    fn run<T: WithDType>(&self, buf: &mut [T], s: &CpuStorage, sl: &Layout) -> Result<()> {
        let g = slice::<T>(self.name(), s, sl, buf.len())?;
        let (m, keep, zero) = (
            T::from_f64(self.momentum),
            T::from_f64(1.0 - self.dampening),
            T::from_f64(0.0),
        );
        zip_apply(buf, g, g, |b, g, _| (b * m + zero) + (g * keep + zero));
        Ok(())
    }
}

impl InplaceOp2 for BufferUpdate {
    fn name(&self) -> &'static str {
        "plies-momentum-buffer"
    }

    fn cpu_fwd(
        &self,
        dst: &mut CpuStorage,
        dl: &Layout,
        s: &CpuStorage,
        sl: &Layout,
    ) -> Result<()> {
        with_dst(
            self.name(),
            dst,
            dl,
            |b| self.run(b, s, sl),
            |b| self.run(b, s, sl),
        )
    }
}

impl ParamUpdate {
    fn run<T: WithDType>(
        &self,
        p: &mut [T],
        [(gs, gl), (bs, bl)]: [(&CpuStorage, &Layout); 2],
    ) -> Result<()> {
        let g = slice::<T>(self.name(), gs, gl, p.len())?;
        let buf = slice::<T>(self.name(), bs, bl, p.len())?;
        let (m, lr, zero) = (
            T::from_f64(self.momentum),
            T::from_f64(self.lr),
            T::from_f64(0.0),
        );
        if self.nesterov {
            zip_apply(p, g, buf, |p, g, b| p - ((g + (b * m + zero)) * lr + zero));
        } else {
            zip_apply(p, g, buf, |p, _, b| p - (b * lr + zero));
        }
        Ok(())
    }
}

impl InplaceOp3 for ParamUpdate {
    fn name(&self) -> &'static str {
        "plies-momentum-step"
    }

    fn cpu_fwd(
        &self,
        dst: &mut CpuStorage,
        dl: &Layout,
        gs: &CpuStorage,
        gl: &Layout,
        bs: &CpuStorage,
        bl: &Layout,
    ) -> Result<()> {
        let srcs = [(gs, gl), (bs, bl)];
        with_dst(
            self.name(),
            dst,
            dl,
            |p| self.run(p, srcs),
            |p| self.run(p, srcs),
        )
    }
}
