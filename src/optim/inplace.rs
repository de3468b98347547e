//! Optimizer updates in place on CPU tensors: one pass over each parameter
//! (and each state tensor), instead of a chain of candle ops that each
//! allocate, fill and free a parameter-sized tensor (eight per parameter
//! per step for Nesterov SGD, twelve for AdamW: a tenth of a cnn3 training
//! step).
//!
//! A [`Rule`] puts each value through the same f32 (or f64) operations in
//! the same order as the candle ops it replaces (`affine` is
//! `v * mul + add`, a scalar `+ eps` is `affine(1, eps)`), so the two paths
//! agree bit for bit (tested); other devices keep the ops. State tensors an
//! optimizer updates in place must be its own: [`owned`] copies them once,
//! and an optimizer's `state()` hands out copies.

use candle_core::{CpuStorage, InplaceOp2, InplaceOp3, Layout, Result, Tensor, WithDType};
use rayon::prelude::*;

/// Values per parallel chunk; smaller tensors stay on the calling thread.
const CHUNK: usize = 1 << 15;

/// The float types the rules compute in.
pub(super) trait Real: WithDType {
    fn sqrt(self) -> Self;
}

impl Real for f32 {
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
}

impl Real for f64 {
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
}

/// An element-wise update `dst = f(dst, a, b)` (with one source, `b` is
/// `a`): `kernel` converts the hyper-parameters once and returns `f`.
pub(super) trait Rule: Sync {
    const NAME: &'static str;
    fn kernel<T: Real>(&self) -> impl Fn(T, T, T) -> T + Sync;
}

/// A [`Rule`] as a candle in-place op: `dst.inplace_op2(&a, &InPlace(r))`
/// or `dst.inplace_op3(&a, &b, &InPlace(r))`.
pub(super) struct InPlace<R>(pub R);

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

/// A copy of `t` in storage of its own, for state updated in place (a
/// tensor from `zeros_like().clone()`, a caller's, or one handed out
/// shares its storage).
pub(super) fn owned(t: &Tensor) -> Result<Tensor> {
    t.copy()
}

#[inline(always)]
fn apply_body<T: Real>(dst: &mut [T], a: &[T], b: &[T], f: &(impl Fn(T, T, T) -> T + Sync)) {
    for ((d, &a), &b) in dst.iter_mut().zip(a).zip(b) {
        *d = f(*d, a, b);
    }
}

/// [`apply_body`] compiled for AVX-512 where the kernels use it (the default
/// target's loop is scalar SSE): the same operations in the same order per
/// value, so the same bits.
fn apply_chunk<T: Real>(dst: &mut [T], a: &[T], b: &[T], f: &(impl Fn(T, T, T) -> T + Sync)) {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f")]
        fn v4<T: Real>(dst: &mut [T], a: &[T], b: &[T], f: &(impl Fn(T, T, T) -> T + Sync)) {
            apply_body(dst, a, b, f)
        }
        if crate::util::simd::Simd::best() == crate::util::simd::Simd::Avx512 {
            // SAFETY: `Simd::best` only names sets the CPU has.
            return unsafe { v4(dst, a, b, f) };
        }
    }
    apply_body(dst, a, b, f)
}

/// `dst[i] = f(dst[i], a[i], b[i])` over contiguous slices, in parallel
/// chunks when large.
fn zip_apply<T: Real>(dst: &mut [T], a: &[T], b: &[T], f: impl Fn(T, T, T) -> T + Sync) {
    if dst.len() < 2 * CHUNK || rayon::current_num_threads() < 2 {
        apply_chunk(dst, a, b, &f);
    } else {
        dst.par_chunks_mut(CHUNK)
            .zip(a.par_chunks(CHUNK))
            .zip(b.par_chunks(CHUNK))
            .for_each(|((d, a), b)| apply_chunk(d, a, b, &f));
    }
}

/// A contiguous slice of a storage, checked against the destination's
/// length.
fn slice<'a, T: Real>(name: &str, s: &'a CpuStorage, l: &Layout, len: usize) -> Result<&'a [T]> {
    let v = T::cpu_storage_as_slice(s)?;
    match l.contiguous_offsets() {
        Some((a, b)) if b - a == len => Ok(&v[a..b]),
        _ => candle_core::bail!("{name}: contiguous operands of {len} values only"),
    }
}

impl<R: Rule> InPlace<R> {
    fn run<T: Real>(
        &self,
        dst: &mut [T],
        a: (&CpuStorage, &Layout),
        b: (&CpuStorage, &Layout),
    ) -> Result<()> {
        let a = slice::<T>(R::NAME, a.0, a.1, dst.len())?;
        let b = slice::<T>(R::NAME, b.0, b.1, dst.len())?;
        zip_apply(dst, a, b, self.0.kernel::<T>());
        Ok(())
    }

    fn run_on(
        &self,
        dst: &mut CpuStorage,
        l: &Layout,
        a: (&CpuStorage, &Layout),
        b: (&CpuStorage, &Layout),
    ) -> Result<()> {
        let Some((lo, hi)) = l.contiguous_offsets() else {
            candle_core::bail!("{}: a contiguous destination only", R::NAME);
        };
        match dst {
            CpuStorage::F32(v) => self.run(&mut v[lo..hi], a, b),
            CpuStorage::F64(v) => self.run(&mut v[lo..hi], a, b),
            _ => candle_core::bail!("{}: f32 or f64 tensors only", R::NAME),
        }
    }
}

impl<R: Rule> InplaceOp2 for InPlace<R> {
    fn name(&self) -> &'static str {
        R::NAME
    }

    fn cpu_fwd(
        &self,
        dst: &mut CpuStorage,
        dl: &Layout,
        s: &CpuStorage,
        sl: &Layout,
    ) -> Result<()> {
        self.run_on(dst, dl, (s, sl), (s, sl))
    }
}

impl<R: Rule> InplaceOp3 for InPlace<R> {
    fn name(&self) -> &'static str {
        R::NAME
    }

    fn cpu_fwd(
        &self,
        dst: &mut CpuStorage,
        dl: &Layout,
        a: &CpuStorage,
        al: &Layout,
        b: &CpuStorage,
        bl: &Layout,
    ) -> Result<()> {
        self.run_on(dst, dl, (a, al), (b, bl))
    }
}

/// Momentum SGD's step: `p = p - (g + buf * momentum) * lr` (Nesterov) or
/// `p = p - buf * lr`; the sources are `g` and `buf`.
pub(super) struct MomentumStep {
    pub lr: f64,
    pub momentum: f64,
    pub nesterov: bool,
}

impl Rule for MomentumStep {
    const NAME: &'static str = "plies-momentum-step";

    fn kernel<T: Real>(&self) -> impl Fn(T, T, T) -> T + Sync {
        let (m, lr, zero) = (
            T::from_f64(self.momentum),
            T::from_f64(self.lr),
            T::from_f64(0.0),
        );
        let nesterov = self.nesterov;
        move |p, g, b| {
            if nesterov {
                p - ((g + (b * m + zero)) * lr + zero)
            } else {
                p - (b * lr + zero)
            }
        }
    }
}

/// A running blend `avg = avg * old + (g * new)`, or of `g^2`: momentum
/// SGD's buffer (`old` the momentum, `new` one less the dampening) and
/// AdamW's moments (`beta`, `1 - beta`); the source is `g`.
pub(super) struct Blend {
    pub old: f64,
    pub new: f64,
    pub squared: bool,
}

impl Rule for Blend {
    const NAME: &'static str = "plies-blend";

    fn kernel<T: Real>(&self) -> impl Fn(T, T, T) -> T + Sync {
        let (old, new, zero) = (
            T::from_f64(self.old),
            T::from_f64(self.new),
            T::from_f64(0.0),
        );
        let squared = self.squared;
        move |avg, g, _| {
            let x = if squared { g * g } else { g };
            (avg * old + zero) + (x * new + zero)
        }
    }
}

/// AdamW's step from its updated moments `m` and `v`:
/// `p = p * (1 - lr * wd) - (m * scale_m) / (sqrt(v * scale_v) + eps) * lr`.
pub(super) struct AdamWStep {
    pub lr: f64,
    pub decay: f64,
    pub scale_m: f64,
    pub scale_v: f64,
    pub eps: f64,
}

impl Rule for AdamWStep {
    const NAME: &'static str = "plies-adamw-step";

    fn kernel<T: Real>(&self) -> impl Fn(T, T, T) -> T + Sync {
        let (zero, one) = (T::from_f64(0.0), T::from_f64(1.0));
        let (scale_m, scale_v) = (T::from_f64(self.scale_m), T::from_f64(self.scale_v));
        let (eps, lr, decay) = (
            T::from_f64(self.eps),
            T::from_f64(self.lr),
            T::from_f64(self.decay),
        );
        move |p, m, v| {
            let m_hat = m * scale_m + zero;
            let v_hat = v * scale_v + zero;
            let denom = v_hat.sqrt() * one + eps;
            let step = (m_hat / denom) * lr + zero;
            (p * decay + zero) - step
        }
    }
}
