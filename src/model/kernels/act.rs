//! Element-wise activations on f32 slices, vectorised (AVX-512 or AVX2
//! chosen at run time), and a fused-tanh candle op.
//!
//! tanh is Eigen's rational approximation (a degree 13/6 odd rational
//! function on `[-7.9, 7.9]`, clamped outside): within a few float ulps of
//! `f32::tanh`, and one division per value instead of candle's scalar libm
//! call.

use super::op::{F32Kernel, F32Op, Grads, In, Out};
use candle_core::{CpuStorage, Result, Tensor};
use rayon::prelude::*;

/// Activation fused into a kernel's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    Identity,
    Tanh,
    Sigmoid,
    Relu,
}

/// Values per parallel chunk of element-wise work; smaller slices stay on
/// the calling thread.
pub(crate) const PAR_CHUNK: usize = 1 << 15;

#[inline(always)]
#[allow(clippy::excessive_precision)] // Eigen's coefficients as published
fn tanh1(x: f32) -> f32 {
    const CLAMP: f32 = 7.905_311;
    const A1: f32 = 4.893_524_6e-3;
    const A3: f32 = 6.372_619_3e-4;
    const A5: f32 = 1.485_722_4e-5;
    const A7: f32 = 5.122_297e-8;
    const A9: f32 = -8.604_671_5e-11;
    const A11: f32 = 2.000_187_9e-13;
    const A13: f32 = -2.760_768_5e-16;
    const B0: f32 = 4.893_525_2e-3;
    const B2: f32 = 2.268_434_6e-3;
    const B4: f32 = 1.185_347_1e-4;
    const B6: f32 = 1.198_258_4e-6;
    let c = x.clamp(-CLAMP, CLAMP);
    let x2 = c * c;
    let mut p = x2 * A13 + A11;
    p = p * x2 + A9;
    p = p * x2 + A7;
    p = p * x2 + A5;
    p = p * x2 + A3;
    p = p * x2 + A1;
    p *= c;
    let mut q = x2 * B6 + B4;
    q = q * x2 + B2;
    q = q * x2 + B0;
    let t = p / q;
    if x.abs() < 4e-4 {
        x
    } else {
        t
    }
}

#[inline(always)]
fn sigmoid1(x: f32) -> f32 {
    // 1/(1+e^-x) = (1 + tanh(x/2)) / 2, vectorisable like tanh.
    0.5 + 0.5 * tanh1(0.5 * x)
}

#[inline(always)]
fn apply1(act: Act, x: f32) -> f32 {
    match act {
        Act::Identity => x,
        Act::Tanh => tanh1(x),
        Act::Sigmoid => sigmoid1(x),
        Act::Relu => x.max(0.0),
    }
}

#[inline(always)]
fn deriv1(act: Act, y: f32) -> f32 {
    match act {
        Act::Identity => 1.0,
        Act::Tanh => 1.0 - y * y,
        Act::Sigmoid => y * (1.0 - y),
        Act::Relu => {
            if y > 0.0 {
                1.0
            } else {
                0.0
            }
        }
    }
}

#[inline(always)]
fn bias_act_body(act: Act, x: &mut [f32], bias: Option<&[f32]>) {
    match bias {
        Some(b) => {
            for row in x.chunks_exact_mut(b.len()) {
                for (v, &b) in row.iter_mut().zip(b) {
                    *v = apply1(act, *v + b);
                }
            }
        }
        None => {
            for v in x.iter_mut() {
                *v = apply1(act, *v);
            }
        }
    }
}

#[inline(always)]
fn grad_body(act: Act, g: &mut [f32], y: &[f32]) {
    for (g, &y) in g.iter_mut().zip(y) {
        *g *= deriv1(act, y);
    }
}

/// Runs `$body` compiled for AVX-512, AVX2+FMA or the baseline, as
/// [`Simd::best`](crate::util::simd::Simd::best) decides.
macro_rules! dispatch {
    ($name:ident ( $($arg:ident : $ty:ty),* ) => $body:ident) => {
        fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                use $crate::util::simd::Simd;
                #[target_feature(enable = "avx512f")]
                fn v4($($arg: $ty),*) {
                    $body($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                fn v3($($arg: $ty),*) {
                    $body($($arg),*)
                }
                match Simd::best() {
                    // SAFETY: `Simd::best` only names sets the CPU has.
                    Simd::Avx512 => return unsafe { v4($($arg),*) },
                    // SAFETY: as above.
                    Simd::Avx2 => return unsafe { v3($($arg),*) },
                    Simd::Portable => {}
                }
            }
            $body($($arg),*)
        }
    };
}

pub(crate) use dispatch;

dispatch!(bias_act_seq(act: Act, x: &mut [f32], bias: Option<&[f32]>) => bias_act_body);

/// [`bias_act`] on the calling thread only.
pub(crate) fn bias_act_serial(act: Act, x: &mut [f32], bias: Option<&[f32]>) {
    bias_act_seq(act, x, bias)
}
dispatch!(grad_seq(act: Act, g: &mut [f32], y: &[f32]) => grad_body);

/// [`act_grad`] on the calling thread only.
pub(crate) fn act_grad_serial(act: Act, g: &mut [f32], y: &[f32]) {
    grad_seq(act, g, y)
}

/// `x = act(x + bias)` in place; `x` is rows of `bias.len()` values (any
/// length without a bias). Parallel over rows for large inputs.
pub fn bias_act(act: Act, x: &mut [f32], bias: Option<&[f32]>) {
    if act == Act::Identity && bias.is_none() {
        return;
    }
    let row = bias.map_or(1, <[f32]>::len).max(1);
    if x.len() < 2 * PAR_CHUNK || rayon::current_num_threads() < 2 {
        return bias_act_seq(act, x, bias);
    }
    let chunk = PAR_CHUNK.div_ceil(row) * row;
    x.par_chunks_mut(chunk)
        .for_each(|c| bias_act_seq(act, c, bias));
}

/// `g *= act'(y)`, with the derivative written in terms of the output
/// `y = act(x)`.
pub fn act_grad(act: Act, g: &mut [f32], y: &[f32]) {
    if act == Act::Identity {
        return;
    }
    if g.len() < 2 * PAR_CHUNK || rayon::current_num_threads() < 2 {
        return grad_seq(act, g, y);
    }
    g.par_chunks_mut(PAR_CHUNK)
        .zip(y.par_chunks(PAR_CHUNK))
        .for_each(|(g, y)| grad_seq(act, g, y));
}

/// A contiguous f32 copy of a tensor's values.
pub(crate) fn to_f32_vec(t: &Tensor) -> Result<Vec<f32>> {
    t.flatten_all()?.to_vec1::<f32>()
}

/// Runs `f` on a tensor's values as one contiguous f32 slice: borrowed
/// from a contiguous CPU tensor, copied otherwise.
pub(crate) fn with_f32<R>(t: &Tensor, f: impl FnOnce(&[f32]) -> R) -> Result<R> {
    {
        let (storage, layout) = t.storage_and_layout();
        if let (candle_core::Storage::Cpu(CpuStorage::F32(v)), Some((a, b))) =
            (&*storage, layout.contiguous_offsets())
        {
            return Ok(f(&v[a..b]));
        }
    }
    Ok(f(&to_f32_vec(t)?))
}

/// The fused activation as a candle op (forward and backward).
struct ActOp(Act);

impl F32Kernel<1> for ActOp {
    const NAME: &'static str = "plies-act";

    fn forward(&self, [(x, l)]: [In<'_>; 1]) -> Result<Out> {
        let mut v = x.to_vec();
        bias_act(self.0, &mut v, None);
        Ok((v, l.shape().clone()))
    }

    fn backward(&self, _: [&Tensor; 1], res: &Tensor, grad: &Tensor) -> Result<Grads<1>> {
        let mut g = to_f32_vec(grad)?;
        with_f32(res, |y| act_grad(self.0, &mut g, y))?;
        Ok([Some(Tensor::from_vec(g, res.shape(), res.device())?)])
    }
}

/// `act(x)` element-wise with a backward pass: the fast path on CPU f32,
/// candle's own ops elsewhere.
pub fn activation(x: &Tensor, act: Act) -> Result<Tensor> {
    if !super::native(x) {
        return stock_activation(x, act);
    }
    x.contiguous()?.apply_op1(F32Op(ActOp(act)))
}

/// `act(x)` through candle's own ops: the fallback, and the kernels'
/// reference in tests.
pub(crate) fn stock_activation(x: &Tensor, act: Act) -> Result<Tensor> {
    match act {
        Act::Identity => Ok(x.clone()),
        Act::Tanh => x.tanh(),
        Act::Sigmoid => candle_nn::ops::sigmoid(x),
        Act::Relu => x.relu(),
    }
}

/// Fast tanh (see the module docs).
pub fn tanh(x: &Tensor) -> Result<Tensor> {
    activation(x, Act::Tanh)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Var};

    #[test]
    fn tanh_and_sigmoid_match_libm() {
        let xs: Vec<f32> = (-200_000..=200_000).map(|i| i as f32 * 1e-4).collect();
        let mut t = xs.clone();
        bias_act(Act::Tanh, &mut t, None);
        let mut s = xs.clone();
        bias_act(Act::Sigmoid, &mut s, None);
        let (mut et, mut es) = (0f32, 0f32);
        for ((x, t), s) in xs.iter().zip(&t).zip(&s) {
            et = et.max((t - x.tanh()).abs());
            es = es.max((s - 1.0 / (1.0 + (-x).exp())).abs());
        }
        assert!(et < 1e-6, "tanh max abs error {et}");
        assert!(es < 1e-6, "sigmoid max abs error {es}");
        let mut ext = vec![-1e30f32, -100.0, 100.0, 1e30, 0.0, -0.0];
        bias_act(Act::Tanh, &mut ext, None);
        assert_eq!(ext, [-1.0, -1.0, 1.0, 1.0, 0.0, 0.0]);
    }

    #[test]
    fn bias_rows_and_relu() {
        let mut x = vec![1f32, -2.0, 3.0, -4.0, 0.5, 0.5];
        bias_act(Act::Relu, &mut x, Some(&[1.0, 1.0, -1.0]));
        assert_eq!(x, [2.0, 0.0, 2.0, 0.0, 1.5, 0.0]);
    }

    #[test]
    fn op_values_and_gradients_match_candle() -> Result<()> {
        let mut rt = crate::model::test_tensors::SeededTensors::new(1);
        let dev = Device::Cpu;
        // Large enough for the parallel path.
        let init = (rt.randn(0f32, 2.0, (70_001,), &dev)?).to_dtype(candle_core::DType::F32)?;
        for act in [Act::Tanh, Act::Sigmoid, Act::Relu, Act::Identity] {
            let a = Var::from_tensor(&init)?;
            let b = Var::from_tensor(&init)?;
            let w = rt.randn(0f32, 1.0, (70_001,), &dev)?;
            let ya = activation(a.as_tensor(), act)?;
            let yb = stock_activation(b.as_tensor(), act)?;
            let dy = (&ya - &yb)?.abs()?.max_all()?.to_scalar::<f32>()?;
            assert!(dy < 1e-6, "{act:?} values differ by {dy}");
            let ga = (ya * &w)?.sum_all()?.backward()?;
            let gb = (yb * &w)?.sum_all()?.backward()?;
            let ga = ga.get(&a).expect("grad");
            let gb = gb.get(&b).expect("grad");
            let dg = (ga - gb)?.abs()?.max_all()?.to_scalar::<f32>()?;
            assert!(dg < 1e-5, "{act:?} gradients differ by {dg}");
        }
        Ok(())
    }
}
