//! The one bridge between the kernels and candle's custom ops: a kernel
//! implements [`F32Kernel`] on plain slices, and [`F32Op`] makes it a
//! `CustomOp1`/`2`/`3`, checking that every input is a contiguous f32 CPU
//! tensor and wrapping the output storage.

use candle_core::{CpuStorage, CustomOp1, CustomOp2, CustomOp3, DType, Layout, Result, Shape};
use candle_core::{Error, Tensor};

/// One input as a kernel reads it: its contiguous values and its layout.
pub(crate) type In<'a> = (&'a [f32], &'a Layout);

/// A kernel's output: its values and shape.
pub(crate) type Out = (Vec<f32>, Shape);

/// The gradients of a kernel's `N` inputs; `None` for an input that needs
/// none.
pub(crate) type Grads<const N: usize> = [Option<Tensor>; N];

/// A CPU f32 kernel over `N` inputs, made a candle op by [`F32Op`].
pub(crate) trait F32Kernel<const N: usize> {
    /// The op's name, in candle's graph and in error messages.
    const NAME: &'static str;

    fn forward(&self, inputs: [In<'_>; N]) -> Result<Out>;

    /// The inputs' gradients from the inputs, the output `res` and the
    /// output's gradient.
    fn backward(&self, _inputs: [&Tensor; N], _res: &Tensor, _grad: &Tensor) -> Result<Grads<N>> {
        Err(Error::BackwardNotSupported { op: Self::NAME })
    }
}

/// A kernel as a candle custom op (`apply_op1`/`2`/`3` by its input count).
pub(crate) struct F32Op<K>(pub K);

impl<K> F32Op<K> {
    fn cpu_forward<const N: usize>(
        &self,
        storages: [(&CpuStorage, &Layout); N],
    ) -> Result<(CpuStorage, Shape)>
    where
        K: F32Kernel<N>,
    {
        let mut inputs = storages.map(|(_, l)| (&[][..], l));
        for ((v, _), (s, l)) in inputs.iter_mut().zip(storages) {
            *v = f32_slice(K::NAME, s, l)?;
        }
        let (y, shape) = self.0.forward(inputs)?;
        Ok((CpuStorage::F32(y), shape))
    }
}

impl<K: F32Kernel<1>> CustomOp1 for F32Op<K> {
    fn name(&self) -> &'static str {
        K::NAME
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        self.cpu_forward([(s, l)])
    }

    fn bwd(&self, arg: &Tensor, res: &Tensor, grad: &Tensor) -> Result<Option<Tensor>> {
        let [d] = self.0.backward([arg], res, grad)?;
        Ok(d)
    }
}

impl<K: F32Kernel<2>> CustomOp2 for F32Op<K> {
    fn name(&self) -> &'static str {
        K::NAME
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        self.cpu_forward([(s1, l1), (s2, l2)])
    }

    fn bwd(
        &self,
        a1: &Tensor,
        a2: &Tensor,
        res: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let [d1, d2] = self.0.backward([a1, a2], res, grad)?;
        Ok((d1, d2))
    }
}

impl<K: F32Kernel<3>> CustomOp3 for F32Op<K> {
    fn name(&self) -> &'static str {
        K::NAME
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
        self.cpu_forward([(s1, l1), (s2, l2), (s3, l3)])
    }

    fn bwd(
        &self,
        a1: &Tensor,
        a2: &Tensor,
        a3: &Tensor,
        res: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let [d1, d2, d3] = self.0.backward([a1, a2, a3], res, grad)?;
        Ok((d1, d2, d3))
    }
}

/// A contiguous f32 slice of a CPU storage, or an error naming `op`.
fn f32_slice<'a>(op: &str, s: &'a CpuStorage, l: &Layout) -> Result<&'a [f32]> {
    let CpuStorage::F32(v) = s else {
        candle_core::bail!("{op}: f32 tensors only");
    };
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&v[a..b]),
        None => candle_core::bail!("{op}: contiguous tensors only"),
    }
}

/// Refuses tensors the kernels cannot take (another device or dtype), for
/// the ops that have no fallback to candle's own.
pub(crate) fn require_cpu_f32(op: &str, tensors: &[&Tensor]) -> Result<()> {
    if tensors
        .iter()
        .any(|t| !t.device().is_cpu() || t.dtype() != DType::F32)
    {
        candle_core::bail!("{op}: CPU f32 tensors only");
    }
    Ok(())
}
