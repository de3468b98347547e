//! Fully connected layer fused with its bias and activation:
//! `y = act(x w^T + b)` in one matrix product and one pass over `y`.

use super::act::{act_grad, bias_act, to_f32_vec, with_f32, Act};
use super::bordered::output_vec;
use super::op::{F32Kernel, F32Op, Grads, In, Out};
use super::small_batch::matmul_wt;
use super::{col_sums, matmul_grads, sgemm};
use candle_core::{Result, Shape, Tensor};

/// Up to this many rows the forward product reads w in place.
const SMALL_BATCH: usize = 64;

/// `y[rows, out] = x[rows, inp] w^T[inp, out]`, every value of `y`
/// written. Up to a search's batch, without packing `w` (see small_batch):
/// gemm's blocked path copies all of `w` first (10 MB for a 15x15 board's
/// hidden layer).
pub(super) fn product_wt(x: &[f32], rows: usize, inp: usize, w: &[f32], out: usize, y: &mut [f32]) {
    if rows <= SMALL_BATCH {
        matmul_wt(x, rows, inp, w, out, y);
    } else {
        sgemm(rows, out, inp, y, out, false, x, (inp, 1), w, (1, inp));
    }
}

struct LinearAct {
    act: Act,
}

impl F32Kernel<3> for LinearAct {
    const NAME: &'static str = "plies-linear-act";

    fn forward(&self, [(x, l1), (w, l2), (b, l3)]: [In<'_>; 3]) -> Result<Out> {
        let (rows, inp) = l1.shape().dims2()?;
        let (out, inp_w) = l2.shape().dims2()?;
        if inp != inp_w || b.len() != out {
            candle_core::bail!(
                "linear: input {:?}, weight {:?}, bias {:?} do not fit",
                l1.dims(),
                l2.dims(),
                l3.dims()
            );
        }
        let mut y = output_vec(rows * out);
        product_wt(x, rows, inp, w, out, &mut y);
        bias_act(self.act, &mut y, Some(b));
        Ok((y, Shape::from((rows, out))))
    }

    fn backward(&self, [x, w, _b]: [&Tensor; 3], res: &Tensor, grad: &Tensor) -> Result<Grads<3>> {
        let (rows, out) = res.dims2()?;
        let inp = x.dim(1)?;
        let mut g = to_f32_vec(grad)?;
        with_f32(res, |y| act_grad(self.act, &mut g, y))?;
        let dev = res.device();
        let want_dx = x.track_op();
        let (dx, dw) = with_f32(x, |x| {
            with_f32(w, |w| matmul_grads(&g, x, w, [rows, inp, out], want_dx))
        })??;
        let db = col_sums(&g, out);
        Ok([
            dx.map(|dx| Tensor::from_vec(dx, (rows, inp), dev))
                .transpose()?,
            Some(Tensor::from_vec(dw, (out, inp), dev)?),
            Some(Tensor::from_vec(db, out, dev)?),
        ])
    }
}

/// `act(x w^T + b)` for `x [B, in]`, `w [out, in]` (PyTorch's layout) and
/// `b [out]`, with gradients for all three. CPU f32 takes the fused kernel;
/// other devices and dtypes take candle's ops.
pub fn linear_act(x: &Tensor, w: &Tensor, b: &Tensor, act: Act) -> Result<Tensor> {
    if !super::native(x) {
        let y = x.matmul(&w.t()?)?.broadcast_add(b)?;
        return super::act::activation(&y, act);
    }
    let (_, inp) = x.dims2()?;
    let (out, inp_w) = w.dims2()?;
    if inp != inp_w || b.dims() != [out] {
        candle_core::bail!(
            "linear: input {:?}, weight {:?}, bias {:?} do not fit",
            x.dims(),
            w.dims(),
            b.dims()
        );
    }
    x.contiguous()?
        .apply_op3(&w.contiguous()?, &b.contiguous()?, F32Op(LinearAct { act }))
}

#[cfg(test)]
mod tests {
    use super::super::act::stock_activation;
    use super::*;
    use crate::model::test_tensors::max_diff;
    use candle_core::{DType, Device, Var};

    fn stock(x: &Tensor, w: &Tensor, b: &Tensor, act: Act) -> Result<Tensor> {
        stock_activation(&x.matmul(&w.t()?)?.broadcast_add(b)?, act)
    }

    #[test]
    fn values_and_gradients_match_candle() -> Result<()> {
        let mut rt = crate::model::test_tensors::SeededTensors::new(1);
        let dev = Device::Cpu;
        for (rows, inp, out) in [(1, 7, 1), (5, 13, 4), (300, 200, 130)] {
            for act in [Act::Identity, Act::Tanh, Act::Sigmoid, Act::Relu] {
                let x0 = rt.randn(0f32, 1.0, (rows, inp), &dev)?;
                let w0 = rt.randn(0f32, 0.3, (out, inp), &dev)?;
                let b0 = rt.randn(0f32, 0.3, out, &dev)?;
                let up = rt.randn(0f32, 1.0, (rows, out), &dev)?;
                let vars = |_: ()| -> Result<(Var, Var, Var)> {
                    Ok((
                        Var::from_tensor(&x0)?,
                        Var::from_tensor(&w0)?,
                        Var::from_tensor(&b0)?,
                    ))
                };
                let (xa, wa, ba) = vars(())?;
                let (xb, wb, bb) = vars(())?;
                let ya = linear_act(&xa, &wa, &ba, act)?;
                let yb = stock(&xb, &wb, &bb, act)?;
                assert!(max_diff(&ya, &yb) < 1e-5, "{act:?} {rows}x{inp}x{out}");
                let ga = (ya * &up)?.sum_all()?.backward()?;
                let gb = (yb * &up)?.sum_all()?.backward()?;
                for (a, b) in [(&xa, &xb), (&wa, &wb), (&ba, &bb)] {
                    let d = max_diff(ga.get(a).expect("grad"), gb.get(b).expect("grad"));
                    assert!(
                        d < 1e-4,
                        "{act:?} {rows}x{inp}x{out}: gradient differs by {d}"
                    );
                }
            }
        }
        Ok(())
    }

    #[test]
    fn no_input_gradient_for_data() -> Result<()> {
        let mut rt = crate::model::test_tensors::SeededTensors::new(2);
        let dev = Device::Cpu;
        let x = rt.randn(0f32, 1.0, (4, 3), &dev)?;
        let w = Var::from_tensor(&rt.randn(0f32, 1.0, (2, 3), &dev)?)?;
        let b = Var::from_tensor(&Tensor::zeros(2, DType::F32, &dev)?)?;
        let g = linear_act(&x, &w, &b, Act::Tanh)?.sum_all()?.backward()?;
        assert!(g.get(&x).is_none());
        assert!(g.get(&w).is_some() && g.get(&b).is_some());
        assert!(linear_act(&x, &w, &Tensor::zeros(3, DType::F32, &dev)?, Act::Tanh).is_err());
        Ok(())
    }
}
