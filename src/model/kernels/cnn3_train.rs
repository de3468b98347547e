//! The whole three-layer CNN (valid convolution with bias and tanh, hidden
//! layer with bias and tanh, one output unit with its activation) as one
//! op, for training.
//!
//! As three ops ([`super::conv2d_act`], [`super::linear_act`] twice) each
//! step left candle's backward pass to allocate a zero gradient and add
//! into it for the `[B, F*P]` and `[B, hidden]` activations, every
//! intermediate was cleared before it was written, and the convolution's
//! output was transposed per sample to the filter-major order the hidden
//! weight reads, and its gradient back. Here the intermediates live in the
//! op and are written without a clearing pass; the convolution's output
//! stays position-major (as its product writes it) and the hidden weight's
//! columns are permuted to match instead (a third of the values, once per
//! step), its gradient permuted back. The values and gradients are the
//! three ops' up to the order of the hidden layer's sums (tested).
//!
//! The hidden weight, the largest tensor, travels alone (packing it would
//! copy it every step); the other five parameters travel as one packed
//! tensor (candle's custom ops take at most three inputs), whose gradient
//! unpacks through candle's `cat`.

use super::act::{act_grad, act_grad_serial, bias_act, bias_act_serial, to_f32_vec, with_f32, Act};
use super::bordered::output_vec;
use super::conv::{im2col_sample, transpose, Geom, FWD_BLOCK};
use super::linear::product_wt;
use super::op::{require_cpu_f32, F32Kernel, F32Op, Grads, In, Out};
use super::{add_in_order, col_sums, matmul_grads, sgemm_on};
use candle_core::{Result, Shape, Tensor};
use rayon::prelude::*;
use std::sync::Mutex;

const OP: &str = "cnn3_train";

/// The network's parameters, in PyTorch's layouts.
pub struct Cnn3Params<'a> {
    /// `[F, C, kh, kw]`.
    pub conv_weight: &'a Tensor,
    /// `[F]`.
    pub conv_bias: &'a Tensor,
    /// `[hidden, F * oh * ow]`, reading the convolution's output
    /// filter-major (as `torch.flatten`).
    pub hidden_weight: &'a Tensor,
    /// `[hidden]`.
    pub hidden_bias: &'a Tensor,
    /// `[1, hidden]`.
    pub out_weight: &'a Tensor,
    /// `[1]`.
    pub out_bias: &'a Tensor,
}

/// The forward pass's intermediates, for the backward pass.
struct Saved {
    /// Convolution output after tanh, position-major `[B, P, F]`.
    h1: Vec<f32>,
    /// Hidden layer after tanh `[B, hidden]`.
    h2: Vec<f32>,
    /// The hidden weight with its inputs position-major `[hidden, P*F]`.
    whp: Vec<f32>,
}

/// Each of `rows` rows of `[a, b]` values, as `[b, a]`: the hidden weight
/// between filter-major (`a` = F) and position-major (`a` = P) inputs.
fn permute_rows(w: &[f32], rows: usize, a: usize, b: usize) -> Vec<f32> {
    let n = a * b;
    let mut out = output_vec(rows * n);
    let run = |(src, dst): (&[f32], &mut [f32])| transpose(src, dst, a, b);
    if rows * n >= 1 << 16 && rayon::current_num_threads() > 1 {
        w.par_chunks(n).zip(out.par_chunks_mut(n)).for_each(run);
    } else {
        w.chunks(n).zip(out.chunks_mut(n)).for_each(run);
    }
    out
}

/// The im2col rows `[nb*P, K]` of the `i`-th block of `FWD_BLOCK` samples
/// (`nb` of them) of planes `x`.
fn block_cols(g: &Geom, x: &[f32], i: usize, nb: usize) -> Vec<f32> {
    let (n, rows) = (g.c * g.h * g.w, g.points() * g.k());
    let mut cols = output_vec(nb * rows);
    for (s, dst) in cols.chunks_mut(rows).enumerate() {
        let b = i * FWD_BLOCK + s;
        im2col_sample(g, &x[b * n..(b + 1) * n], dst);
    }
    cols
}

struct Cnn3Train {
    /// `[F, C, kh, kw]`.
    conv: [usize; 4],
    hidden: usize,
    out_act: Act,
    saved: Mutex<Option<Saved>>,
}

/// The sizes the op works with.
struct Dims {
    g: Geom,
    /// im2col columns `C*kh*kw`.
    k: usize,
    /// Output points `oh*ow`.
    points: usize,
    /// Hidden inputs `F*P`.
    fp: usize,
    hidden: usize,
}

impl Cnn3Train {
    fn dims(&self, x: &[usize]) -> Result<Dims> {
        let g = Geom::new(x, &self.conv, [0; 4])?;
        let (k, points) = (g.k(), g.points());
        Ok(Dims {
            g,
            k,
            points,
            fp: g.f * points,
            hidden: self.hidden,
        })
    }
}

impl Dims {
    fn packed_len(&self) -> usize {
        self.g.f * self.k + self.g.f + 2 * self.hidden + 1
    }

    /// The packed parameters, split: conv weight, conv bias, hidden bias,
    /// out weight, out bias.
    fn split<'a>(&self, p: &'a [f32]) -> [&'a [f32]; 5] {
        let (wc, rest) = p.split_at(self.g.f * self.k);
        let (bc, rest) = rest.split_at(self.g.f);
        let (bh, rest) = rest.split_at(self.hidden);
        let (wo, bo) = rest.split_at(self.hidden);
        [wc, bc, bh, wo, bo]
    }
}

impl F32Kernel<3> for Cnn3Train {
    const NAME: &'static str = "plies-cnn3-train";

    fn forward(&self, [(x, lx), (wh, lwh), (p, _)]: [In<'_>; 3]) -> Result<Out> {
        let d = self.dims(lx.dims())?;
        if lwh.dims() != [d.hidden, d.fp] || p.len() != d.packed_len() {
            candle_core::bail!(
                "{OP}: hidden weight {:?} and {} packed values for input {:?}",
                lwh.dims(),
                p.len(),
                lx.dims()
            );
        }
        let [wc, bc, bh, wo, bo] = d.split(p);
        let (g, k, pts, fp, f) = (&d.g, d.k, d.points, d.fp, d.g.f);
        let mut h1 = output_vec(g.b * fp);
        // Per block of samples: its im2col rows (in cache; the backward
        // pass makes them again rather than keep B*P*K values), then one
        // product straight into the block's position-major activations,
        // bias and tanh.
        let block = |i: usize, hb: &mut [f32]| {
            let cols = block_cols(g, x, i, hb.len() / fp);
            sgemm_on(
                false,
                cols.len() / k,
                f,
                k,
                hb,
                f,
                false,
                &cols,
                (k, 1),
                wc,
                (1, k),
            );
            bias_act_serial(Act::Tanh, hb, Some(bc));
        };
        let hb = FWD_BLOCK * fp;
        if g.b > FWD_BLOCK && rayon::current_num_threads() > 1 {
            h1.par_chunks_mut(hb)
                .enumerate()
                .for_each(|(i, h)| block(i, h));
        } else {
            h1.chunks_mut(hb).enumerate().for_each(|(i, h)| block(i, h));
        }
        let whp = permute_rows(wh, d.hidden, f, pts);
        let mut h2 = output_vec(g.b * d.hidden);
        product_wt(&h1, g.b, fp, &whp, d.hidden, &mut h2);
        bias_act(Act::Tanh, &mut h2, Some(bh));
        let mut y = output_vec(g.b);
        product_wt(&h2, g.b, d.hidden, wo, 1, &mut y);
        bias_act(self.out_act, &mut y, Some(bo));
        if let Ok(mut slot) = self.saved.lock() {
            *slot = Some(Saved { h1, h2, whp });
        }
        Ok((y, Shape::from((g.b, 1))))
    }

    fn backward(
        &self,
        [x, wh, packed]: [&Tensor; 3],
        y: &Tensor,
        grad: &Tensor,
    ) -> Result<Grads<3>> {
        let d = self.dims(x.dims())?;
        let (b, k, pts, fp, f, hd) = (d.g.b, d.k, d.points, d.fp, d.g.f, d.hidden);
        let p = packed.to_vec1::<f32>()?;
        let [_, _, _, wo, _] = d.split(&p);
        let slot = self.saved.lock();
        let Some(saved) = slot.as_ref().ok().and_then(|s| s.as_ref()) else {
            candle_core::bail!("{OP}: backward before forward");
        };
        // Output unit.
        let mut dz3 = to_f32_vec(grad)?;
        with_f32(y, |y| act_grad(self.out_act, &mut dz3, y))?;
        let (dh2, dwo) = matmul_grads(&dz3, &saved.h2, wo, [b, hd, 1], true);
        let dbo = col_sums(&dz3, 1);
        // Hidden layer.
        let mut dz2 = dh2.unwrap_or_default();
        act_grad(Act::Tanh, &mut dz2, &saved.h2);
        let (dh1, dwhp) = matmul_grads(&dz2, &saved.h1, &saved.whp, [b, fp, hd], true);
        let dwh = permute_rows(&dwhp, hd, pts, f);
        let dbh = col_sums(&dz2, hd);
        drop(dz2);
        // Convolution: its output gradient is already in the product's
        // layout [B*P, F]. Per block of samples (in parallel, each block's
        // gradient still in cache): tanh's derivative, the block's share of
        // the weight gradient over its im2col rows and of the bias sums;
        // the shares are added in block order (the same bits whatever the
        // thread count). One product over all B*P rows would leave gemm
        // a 48 x 96 result to split between threads.
        let mut dz1 = dh1.unwrap_or_default();
        let share = |i: usize, dz: &mut [f32], h1: &[f32], x: &[f32]| {
            act_grad_serial(Act::Tanh, dz, h1);
            let rows = dz.len() / f;
            let cols = block_cols(&d.g, x, i, rows / pts);
            let mut share = output_vec(f * k + f);
            let (dw, db) = share.split_at_mut(f * k);
            sgemm_on(false, f, k, rows, dw, k, false, dz, (1, f), &cols, (k, 1));
            db.copy_from_slice(&col_sums(dz, f));
            share
        };
        let hb = FWD_BLOCK * fp;
        let shares: Vec<Vec<f32>> = with_f32(x, |x| {
            if b > FWD_BLOCK && rayon::current_num_threads() > 1 {
                dz1.par_chunks_mut(hb)
                    .zip(saved.h1.par_chunks(hb))
                    .enumerate()
                    .map(|(i, (dz, h1))| share(i, dz, h1, x))
                    .collect()
            } else {
                dz1.chunks_mut(hb)
                    .zip(saved.h1.chunks(hb))
                    .enumerate()
                    .map(|(i, (dz, h1))| share(i, dz, h1, x))
                    .collect()
            }
        })?;
        let conv_grads = add_in_order(&shares, f * k + f);
        let (dwc, dbc) = conv_grads.split_at(f * k);
        let dp = [dwc, dbc, &dbh, &dwo, &dbo].concat();
        let dev = y.device();
        Ok([
            None,
            Some(Tensor::from_vec(dwh, wh.shape(), dev)?),
            Some(Tensor::from_vec(dp, packed.shape(), dev)?),
        ])
    }
}

/// The three-layer CNN's values `[B, 1]` for planes `x [B, C, H, W]` (valid
/// convolution, tanh, hidden layer, tanh, one output unit, `out_act`), as
/// one op with gradients for every parameter. The planes are data: they get
/// no gradient, and a tracked `x` is refused. CPU f32 only.
pub fn cnn3_train(x: &Tensor, p: &Cnn3Params, out_act: Act) -> Result<Tensor> {
    let all = [
        p.conv_weight,
        p.conv_bias,
        p.hidden_weight,
        p.hidden_bias,
        p.out_weight,
        p.out_bias,
    ];
    require_cpu_f32(OP, &[x])?;
    require_cpu_f32(OP, &all)?;
    if x.track_op() {
        candle_core::bail!("{OP}: the planes must not track a gradient");
    }
    let (_, c, h, w) = x.dims4()?;
    let conv: [usize; 4] = match p.conv_weight.dims() {
        &[f, c2, kh, kw] if c2 == c && kh <= h && kw <= w => [f, c, kh, kw],
        other => candle_core::bail!("{OP}: conv weight {other:?} for planes {:?}", x.dims()),
    };
    let [f, _, kh, kw] = conv;
    let fp = f * (h - kh + 1) * (w - kw + 1);
    let hidden = p.hidden_bias.dim(0)?;
    for (name, t, want) in [
        ("conv bias", p.conv_bias, vec![f]),
        ("hidden weight", p.hidden_weight, vec![hidden, fp]),
        ("hidden bias", p.hidden_bias, vec![hidden]),
        ("out weight", p.out_weight, vec![1, hidden]),
        ("out bias", p.out_bias, vec![1]),
    ] {
        if t.dims() != want.as_slice() {
            candle_core::bail!("{OP}: {name} {:?}, expected {want:?}", t.dims());
        }
    }
    let small = [
        p.conv_weight.flatten_all()?,
        p.conv_bias.clone(),
        p.hidden_bias.clone(),
        p.out_weight.flatten_all()?,
        p.out_bias.clone(),
    ];
    let packed = Tensor::cat(&small, 0)?;
    let op = Cnn3Train {
        conv,
        hidden,
        out_act,
        saved: Mutex::new(None),
    };
    x.contiguous()?
        .apply_op3(&p.hidden_weight.contiguous()?, &packed, F32Op(op))
}

#[cfg(test)]
mod tests {
    use super::super::{conv2d_act, linear_act};
    use super::*;
    use candle_core::{Device, Var};

    /// The same network as three fused ops.
    fn three_ops(x: &Tensor, p: &Cnn3Params, out_act: Act) -> Result<Tensor> {
        let h = conv2d_act(x, p.conv_weight, p.conv_bias, [0; 4], Act::Tanh)?;
        let h = linear_act(
            &h.flatten_from(1)?,
            p.hidden_weight,
            p.hidden_bias,
            Act::Tanh,
        )?;
        linear_act(&h, p.out_weight, p.out_bias, out_act)
    }

    #[test]
    fn values_and_gradients_are_the_three_ops() -> Result<()> {
        let mut rt = crate::model::test_tensors::SeededTensors::new(3);
        let dev = Device::Cpu;
        // batch, [C, H, W], filters, kernel, hidden: a search's batch (the
        // small-batch products), a training batch (gemm, parallel blocks),
        // and odd shapes.
        type Case = (usize, [usize; 3], usize, [usize; 2], usize);
        let cases: [Case; 4] = [
            (5, [6, 8, 8], 8, [4, 4], 16),
            (200, [6, 8, 8], 12, [4, 4], 40),
            (70, [3, 5, 7], 4, [2, 3], 9),
            (33, [2, 6, 6], 3, [6, 1], 5),
        ];
        for (bsz, [c, h, w], f, [kh, kw], hd) in cases {
            for out_act in [Act::Sigmoid, Act::Relu] {
                let fp = f * (h - kh + 1) * (w - kw + 1);
                let x = rt.randn(0f32, 1.0, (bsz, c, h, w), &dev)?;
                let t = [
                    rt.randn(0f32, 0.3, (f, c, kh, kw), &dev)?,
                    rt.randn(0f32, 0.3, f, &dev)?,
                    rt.randn(0f32, 0.1, (hd, fp), &dev)?,
                    rt.randn(0f32, 0.3, hd, &dev)?,
                    rt.randn(0f32, 0.3, (1, hd), &dev)?,
                    rt.randn(0f32, 0.3, 1, &dev)?,
                ];
                let up = rt.randn(0f32, 1.0, (bsz, 1), &dev)?;
                let run = |fused: bool| -> Result<(Vec<f32>, Vec<Vec<f32>>)> {
                    let v: Vec<Var> = t.iter().map(Var::from_tensor).collect::<Result<_>>()?;
                    let p = Cnn3Params {
                        conv_weight: v[0].as_tensor(),
                        conv_bias: v[1].as_tensor(),
                        hidden_weight: v[2].as_tensor(),
                        hidden_bias: v[3].as_tensor(),
                        out_weight: v[4].as_tensor(),
                        out_bias: v[5].as_tensor(),
                    };
                    let y = if fused {
                        cnn3_train(&x, &p, out_act)?
                    } else {
                        three_ops(&x, &p, out_act)?
                    };
                    let grads = (&y * &up)?.sum_all()?.backward()?;
                    let g = v
                        .iter()
                        .map(|v| grads.get(v).expect("a gradient").flatten_all()?.to_vec1())
                        .collect::<Result<_>>()?;
                    Ok((y.flatten_all()?.to_vec1()?, g))
                };
                let what = format!("{out_act:?} batch {bsz} input {c}x{h}x{w} {f}x{kh}x{kw} {hd}");
                let (ya, ga) = run(true)?;
                let (yb, gb) = run(false)?;
                let close = |a: &[f32], b: &[f32], what: &str| {
                    let scale = b.iter().fold(1f32, |m, v| m.max(v.abs()));
                    let d = a.iter().zip(b).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
                    assert!(
                        a.len() == b.len() && d <= 2e-6 * scale,
                        "{what} differ by {d}"
                    );
                };
                close(&ya, &yb, &format!("{what}: values"));
                for (i, (a, b)) in ga.iter().zip(&gb).enumerate() {
                    close(a, b, &format!("{what}: gradient of parameter {i}"));
                }
            }
        }
        Ok(())
    }

    #[test]
    fn refuses_tracked_planes_and_misfit_parameters() -> Result<()> {
        let dev = Device::Cpu;
        let z = |s: &[usize]| Tensor::zeros(s, candle_core::DType::F32, &dev);
        let (wc, bc, wh, bh, wo, bo) = (
            z(&[4, 2, 2, 2])?,
            z(&[4])?,
            z(&[3, 4 * 9])?,
            z(&[3])?,
            z(&[1, 3])?,
            z(&[1])?,
        );
        let p = Cnn3Params {
            conv_weight: &wc,
            conv_bias: &bc,
            hidden_weight: &wh,
            hidden_bias: &bh,
            out_weight: &wo,
            out_bias: &bo,
        };
        let x = z(&[2, 2, 4, 4])?;
        assert_eq!(cnn3_train(&x, &p, Act::Sigmoid)?.dims(), &[2, 1]);
        let tracked = Var::from_tensor(&x)?;
        let err = cnn3_train(tracked.as_tensor(), &p, Act::Sigmoid).unwrap_err();
        assert!(err.to_string().contains("must not track"), "{err}");
        let x5 = z(&[2, 2, 5, 4])?;
        let err = cnn3_train(&x5, &p, Act::Sigmoid).unwrap_err();
        assert!(err.to_string().contains("hidden weight"), "{err}");
        let x3 = z(&[2, 3, 4, 4])?;
        assert!(cnn3_train(&x3, &p, Act::Sigmoid).is_err());
        Ok(())
    }
}
