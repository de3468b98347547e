//! Batch norm in training mode fused with relu and an optional residual
//! add, on bordered channels-last activations ([`super::bordered`]):
//! `relu(gamma * (z - mean) / sqrt(var + eps) + beta [+ res])` with the
//! batch's statistics per channel, border zero.
//!
//! Forward: one pass for the statistics, one for the output. Backward: one
//! pass for the per-channel sums of the gradient, one writing the input
//! (and residual) gradients. The sums run per fixed block of samples in
//! f32 and are combined in block order in f64, so they do not depend on
//! the thread count; the statistics are shifted by one sample per channel
//! (a cheap guard against cancellation in `E[z^2] - E[z]^2`).

use super::act::{dispatch, with_f32};
use super::bordered::{for_blocks, output_vec, Board};
use super::op::{require_cpu_f32, F32Kernel, F32Op, Grads, In, Out};
use candle_core::{DType, Result, Tensor};
use rayon::prelude::*;
use std::sync::{Arc, Mutex};

/// The batch statistics of one forward pass.
#[derive(Clone, Debug, Default)]
pub struct BatchStats {
    /// Per-channel mean.
    pub mean: Vec<f32>,
    /// Per-channel variance, biased (divided by `count`).
    pub var: Vec<f32>,
    /// Values per channel.
    pub count: usize,
}

#[derive(Default)]
struct Saved {
    stats: BatchStats,
    invstd: Vec<f32>,
}

struct BnRelu {
    eps: f64,
    saved: Arc<Mutex<Saved>>,
}

/// Per-channel sums over the interior of a bordered buffer, blocked.
/// `row(acc, i)` adds interior row `i`'s `w * c` values (all from its
/// closure's buffers) into `acc = [s1 (c), s2 (c)]`.
fn blocked_sums<F>(bd: &Board, c: usize, row: F) -> (Vec<f64>, Vec<f64>)
where
    F: Fn(&mut [f32], usize) + Sync + Send,
{
    let ns = bd.block();
    let blocks = bd.b.div_ceil(ns);
    let block = |bi: usize| -> Vec<f32> {
        let mut acc = vec![0f32; 2 * c];
        let end = ((bi + 1) * ns).min(bd.b);
        for s in bi * ns..end {
            for y in 0..bd.h {
                row(&mut acc, s * bd.h + y);
            }
        }
        acc
    };
    let partials: Vec<Vec<f32>> = if blocks > 1 && rayon::current_num_threads() > 1 {
        (0..blocks).into_par_iter().map(block).collect()
    } else {
        (0..blocks).map(block).collect()
    };
    let (mut s1, mut s2) = (vec![0f64; c], vec![0f64; c]);
    for p in &partials {
        for i in 0..c {
            s1[i] += p[i] as f64;
            s2[i] += p[c + i] as f64;
        }
    }
    (s1, s2)
}

/// Offset of interior row `i` (sample `i / h`, row `i % h`) of a bordered
/// buffer with `c` channels.
#[inline]
fn row_at(bd: &Board, c: usize, i: usize) -> usize {
    let (s, y) = (i / bd.h, i % bd.h);
    (s * bd.plane() + (y + 1) * bd.wp() + 1) * c
}

#[inline(always)]
fn stats_row_body(acc: &mut [f32], z: &[f32], pivot: &[f32]) {
    let c = pivot.len();
    let (s1, s2) = acc.split_at_mut(c);
    for z in z.chunks_exact(c) {
        for (((a, b), &z), &p) in s1.iter_mut().zip(s2.iter_mut()).zip(z).zip(pivot) {
            let d = z - p;
            *a += d;
            *b += d * d;
        }
    }
}
dispatch!(stats_row(acc: &mut [f32], z: &[f32], pivot: &[f32]) => stats_row_body);

#[inline(always)]
fn norm_row_body(dst: &mut [f32], z: &[f32], scale: &[f32], shift: &[f32], res: Option<&[f32]>) {
    let c = scale.len();
    match res {
        None => {
            for (d, z) in dst.chunks_exact_mut(c).zip(z.chunks_exact(c)) {
                for (((d, &z), &a), &b) in d.iter_mut().zip(z).zip(scale).zip(shift) {
                    *d = (z * a + b).max(0.0);
                }
            }
        }
        Some(r) => {
            for ((d, z), r) in dst
                .chunks_exact_mut(c)
                .zip(z.chunks_exact(c))
                .zip(r.chunks_exact(c))
            {
                for ((((d, &z), &a), &b), &r) in d.iter_mut().zip(z).zip(scale).zip(shift).zip(r) {
                    *d = (z * a + b + r).max(0.0);
                }
            }
        }
    }
}
dispatch!(norm_row(dst: &mut [f32], z: &[f32], scale: &[f32], shift: &[f32], res: Option<&[f32]>) => norm_row_body);

/// Sums of `gu = g * (y > 0)` and `gu * xhat`, `xhat = (z - mean) * invstd`.
#[inline(always)]
fn grad_sums_row_body(
    acc: &mut [f32],
    g: &[f32],
    y: &[f32],
    z: &[f32],
    mean: &[f32],
    invstd: &[f32],
) {
    let c = mean.len();
    let (s1, s2) = acc.split_at_mut(c);
    for ((g, y), z) in g
        .chunks_exact(c)
        .zip(y.chunks_exact(c))
        .zip(z.chunks_exact(c))
    {
        let sums = s1.iter_mut().zip(s2.iter_mut());
        let stats = mean.iter().zip(invstd);
        for ((((a, b), (&m, &is)), &g), (&y, &z)) in sums.zip(stats).zip(g).zip(y.iter().zip(z)) {
            let gu = if y > 0.0 { g } else { 0.0 };
            *a += gu;
            *b += gu * (z - m) * is;
        }
    }
}
dispatch!(grad_sums_row(acc: &mut [f32], g: &[f32], y: &[f32], z: &[f32], mean: &[f32], invstd: &[f32]) => grad_sums_row_body);

/// `dz = p * gu + q + r * z` (`pqr = [p, q, r]`, `c` each), and
/// `dres = gu` when asked.
#[inline(always)]
fn grad_row_body(
    dz: &mut [f32],
    dres: Option<&mut [f32]>,
    g: &[f32],
    y: &[f32],
    z: &[f32],
    pqr: &[f32],
) {
    let c = pqr.len() / 3;
    let (p, qr) = pqr.split_at(c);
    let (q, r) = qr.split_at(c);
    let coef = || p.iter().zip(q).zip(r);
    let rows = dz
        .chunks_exact_mut(c)
        .zip(g.chunks_exact(c))
        .zip(y.chunks_exact(c).zip(z.chunks_exact(c)));
    match dres {
        Some(dres) => {
            for (((dz, g), (y, z)), dr) in rows.zip(dres.chunks_exact_mut(c)) {
                let outs = dz.iter_mut().zip(dr.iter_mut());
                for (((dz, dr), ((&p, &q), &r)), (&g, (&y, &z))) in
                    outs.zip(coef()).zip(g.iter().zip(y.iter().zip(z)))
                {
                    let gu = if y > 0.0 { g } else { 0.0 };
                    *dr = gu;
                    *dz = p * gu + q + r * z;
                }
            }
        }
        None => {
            for ((dz, g), (y, z)) in rows {
                for ((dz, ((&p, &q), &r)), (&g, (&y, &z))) in
                    dz.iter_mut().zip(coef()).zip(g.iter().zip(y.iter().zip(z)))
                {
                    let gu = if y > 0.0 { g } else { 0.0 };
                    *dz = p * gu + q + r * z;
                }
            }
        }
    }
}
dispatch!(grad_row(dz: &mut [f32], dres: Option<&mut [f32]>, g: &[f32], y: &[f32], z: &[f32], pqr: &[f32]) => grad_row_body);

/// Runs `f(first interior row, block)` over bordered `out` per block of
/// samples in parallel, after zeroing each block's border.
fn per_block_rows<F>(bd: &Board, c: usize, out: &mut [f32], f: F)
where
    F: Fn(usize, &mut [f32]) + Sync + Send,
{
    let ns = bd.block();
    let chunk = ns * bd.plane() * c;
    for_blocks(out, chunk, bd.b > ns, |bi, o| {
        super::bordered::zero_border(bd, c, o);
        f(bi * ns * bd.h, o);
    });
}

/// The forward pass's results: the output (bordered, border zero), the
/// batch statistics and `1 / sqrt(var + eps)` per channel.
pub(super) struct BnOut {
    pub y: Vec<f32>,
    pub stats: BatchStats,
    pub invstd: Vec<f32>,
}

/// `relu(gamma * (z - mean) * invstd + beta [+ res])` over bordered `z`
/// (`c` channels; its border is never read), with the batch's statistics.
#[allow(clippy::too_many_arguments)]
pub(super) fn forward_slices(
    op: &str,
    bd: &Board,
    c: usize,
    zv: &[f32],
    gamma: &[f32],
    beta: &[f32],
    rv: Option<&[f32]>,
    eps: f64,
) -> Result<BnOut> {
    let n = bd.b * bd.points();
    if n == 0 {
        candle_core::bail!("{op}: empty batch");
    }
    let pivot = zv[row_at(bd, c, 0)..][..c].to_vec();
    let rw = bd.w * c;
    let (s1, s2) = blocked_sums(bd, c, |acc, i| {
        stats_row(acc, &zv[row_at(bd, c, i)..][..rw], &pivot)
    });
    let nf = n as f64;
    let mut stats = BatchStats {
        mean: vec![0.0; c],
        var: vec![0.0; c],
        count: n,
    };
    let (mut scale, mut shift, mut invstd) = (vec![0f32; c], vec![0f32; c], vec![0f32; c]);
    for i in 0..c {
        let m = s1[i] / nf;
        let var = (s2[i] / nf - m * m).max(0.0);
        let mean = pivot[i] as f64 + m;
        let is = 1.0 / (var + eps).sqrt();
        stats.mean[i] = mean as f32;
        stats.var[i] = var as f32;
        invstd[i] = is as f32;
        scale[i] = (gamma[i] as f64 * is) as f32;
        shift[i] = (beta[i] as f64 - mean * gamma[i] as f64 * is) as f32;
    }
    let mut out = output_vec(zv.len());
    per_block_rows(bd, c, &mut out, |first, o| {
        let base = row_at(bd, c, first) - (bd.wp() + 1) * c;
        let rows = o.len() / (bd.plane() * c) * bd.h;
        for i in first..first + rows {
            let at = row_at(bd, c, i);
            let r = rv.map(|r| &r[at..at + rw]);
            norm_row(
                &mut o[at - base..at - base + rw],
                &zv[at..at + rw],
                &scale,
                &shift,
                r,
            );
        }
    });
    Ok(BnOut {
        y: out,
        stats,
        invstd,
    })
}

/// The backward pass's results (bordered ones with a zero border).
pub(super) struct BnGrads {
    pub dz: Vec<f32>,
    /// The residual's gradient, when asked for.
    pub dres: Option<Vec<f32>>,
    pub dgamma: Vec<f32>,
    pub dbeta: Vec<f32>,
}

/// Gradients of [`forward_slices`] from the output gradient `gv`, given
/// its input `zv`, output `yv` and statistics (only interiors are read).
#[allow(clippy::too_many_arguments)]
pub(super) fn backward_slices(
    bd: &Board,
    c: usize,
    zv: &[f32],
    yv: &[f32],
    gv: &[f32],
    gamma: &[f32],
    mean: &[f32],
    invstd: &[f32],
    want_res: bool,
) -> BnGrads {
    let n = (bd.b * bd.points()) as f64;
    let rw = bd.w * c;
    let (sg, sgx) = blocked_sums(bd, c, |acc, i| {
        let at = row_at(bd, c, i);
        grad_sums_row(
            acc,
            &gv[at..at + rw],
            &yv[at..at + rw],
            &zv[at..at + rw],
            mean,
            invstd,
        )
    });
    let mut pqr = vec![0f32; 3 * c];
    let (p, qr) = pqr.split_at_mut(c);
    let (q, r) = qr.split_at_mut(c);
    for i in 0..c {
        let is = invstd[i] as f64;
        let gi = gamma[i] as f64 * is;
        let (k1, k2) = (sg[i] / n, sgx[i] / n);
        p[i] = gi as f32;
        q[i] = (gi * (is * k2 * mean[i] as f64 - k1)) as f32;
        r[i] = (-gi * is * k2) as f32;
    }
    let mut dz = output_vec(zv.len());
    let mut dres = if want_res {
        output_vec(zv.len())
    } else {
        Vec::new()
    };
    let write = |first: usize, dzb: &mut [f32], drb: Option<&mut [f32]>| {
        let base = row_at(bd, c, first) - (bd.wp() + 1) * c;
        let rows = dzb.len() / (bd.plane() * c) * bd.h;
        let mut drb = drb;
        for i in first..first + rows {
            let at = row_at(bd, c, i);
            let o = at - base..at - base + rw;
            grad_row(
                &mut dzb[o.clone()],
                drb.as_deref_mut().map(|d| &mut d[o]),
                &gv[at..at + rw],
                &yv[at..at + rw],
                &zv[at..at + rw],
                &pqr,
            );
        }
    };
    if want_res {
        // Both outputs per block: zip the two buffers' blocks.
        let ns = bd.block();
        let chunk = ns * bd.plane() * c;
        let run = |(bi, (a, b)): (usize, (&mut [f32], &mut [f32]))| {
            super::bordered::zero_border(bd, c, a);
            super::bordered::zero_border(bd, c, b);
            write(bi * ns * bd.h, a, Some(b));
        };
        if bd.b > ns && rayon::current_num_threads() > 1 {
            dz.par_chunks_mut(chunk)
                .zip(dres.par_chunks_mut(chunk))
                .enumerate()
                .for_each(run);
        } else {
            dz.chunks_mut(chunk)
                .zip(dres.chunks_mut(chunk))
                .enumerate()
                .for_each(run);
        }
    } else {
        per_block_rows(bd, c, &mut dz, |first, o| write(first, o, None));
    }
    BnGrads {
        dz,
        dres: want_res.then_some(dres),
        dgamma: sgx.iter().map(|&v| v as f32).collect(),
        dbeta: sg.iter().map(|&v| v as f32).collect(),
    }
}

impl BnRelu {
    fn forward(
        &self,
        op: &str,
        (zv, zl): In<'_>,
        (gbv, gbl): In<'_>,
        res: Option<In<'_>>,
    ) -> Result<Out> {
        let (bd, c) = Board::of(op, zl.dims())?;
        if gbl.dims() != [2, c] {
            candle_core::bail!("{op}: scale and shift {:?} for {c} channels", gbl.dims());
        }
        let rv = match res {
            Some((rv, l)) if l.dims() == zl.dims() => Some(rv),
            Some((_, l)) => {
                candle_core::bail!("{op}: residual {:?} for {:?}", l.dims(), zl.dims())
            }
            None => None,
        };
        let (gamma, beta) = gbv.split_at(c);
        let out = forward_slices(op, &bd, c, zv, gamma, beta, rv, self.eps)?;
        if let Ok(mut s) = self.saved.lock() {
            *s = Saved {
                stats: out.stats,
                invstd: out.invstd,
            };
        }
        Ok((out.y, zl.shape().clone()))
    }

    fn backward(
        &self,
        z: &Tensor,
        gb: &Tensor,
        res: Option<&Tensor>,
        y: &Tensor,
        grad: &Tensor,
    ) -> Result<Grads<3>> {
        let op = "batch_norm_relu";
        let (bd, c) = Board::of(op, z.dims())?;
        let (mean, invstd) = match self.saved.lock() {
            Ok(s) if s.invstd.len() == c => (s.stats.mean.clone(), s.invstd.clone()),
            _ => candle_core::bail!("{op}: backward before forward"),
        };
        let gamma = gb.get(0)?.to_vec1::<f32>()?;
        let dev = z.device();
        let want_res = res.is_some_and(Tensor::track_op);
        let g = with_f32(z, |zv| {
            with_f32(y, |yv| {
                with_f32(grad, |gv| {
                    backward_slices(&bd, c, zv, yv, gv, &gamma, &mean, &invstd, want_res)
                })
            })
        })???;
        let dgb: Vec<f32> = g.dgamma.iter().chain(&g.dbeta).copied().collect();
        Ok([
            Some(Tensor::from_vec(g.dz, z.shape(), dev)?),
            Some(Tensor::from_vec(dgb, (2, c), dev)?),
            g.dres
                .map(|d| Tensor::from_vec(d, z.shape(), dev))
                .transpose()?,
        ])
    }
}

struct BnRelu2(BnRelu);

impl F32Kernel<2> for BnRelu2 {
    const NAME: &'static str = "plies-batch-norm-relu";

    fn forward(&self, [z, gb]: [In<'_>; 2]) -> Result<Out> {
        self.0.forward(Self::NAME, z, gb, None)
    }

    fn backward(&self, [z, gb]: [&Tensor; 2], res: &Tensor, grad: &Tensor) -> Result<Grads<2>> {
        let [dz, dgb, _] = self.0.backward(z, gb, None, res, grad)?;
        Ok([dz, dgb])
    }
}

struct BnRelu3(BnRelu);

impl F32Kernel<3> for BnRelu3 {
    const NAME: &'static str = "plies-batch-norm-add-relu";

    fn forward(&self, [z, gb, r]: [In<'_>; 3]) -> Result<Out> {
        self.0.forward(Self::NAME, z, gb, Some(r))
    }

    fn backward(&self, [z, gb, r]: [&Tensor; 3], res: &Tensor, grad: &Tensor) -> Result<Grads<3>> {
        self.0.backward(z, gb, Some(r), res, grad)
    }
}

/// Training-mode batch norm of a bordered `z [B, H+2, W+2, C]` with the
/// batch's statistics, then `+ res` (bordered, same shape) when given,
/// then relu: bordered, border zero, with gradients for `z`, `gamma`,
/// `beta` and `res`. Also returns the batch statistics, for the caller's
/// running averages. CPU f32 only.
pub fn batch_norm_relu(
    z: &Tensor,
    gamma: &Tensor,
    beta: &Tensor,
    res: Option<&Tensor>,
    eps: f64,
) -> Result<(Tensor, BatchStats)> {
    let op = "batch_norm_relu";
    require_cpu_f32(op, &[z])?;
    let (_, c) = Board::of(op, z.dims())?;
    if gamma.dims() != [c] || beta.dims() != [c] {
        candle_core::bail!(
            "{op}: scale {:?} and shift {:?} for {c} channels",
            gamma.dims(),
            beta.dims()
        );
    }
    let gb = Tensor::stack(&[gamma, beta], 0)?.to_dtype(DType::F32)?;
    let saved = Arc::new(Mutex::new(Saved::default()));
    let bn = BnRelu {
        eps,
        saved: saved.clone(),
    };
    let z = z.contiguous()?;
    let y = match res {
        Some(r) => z.apply_op3(&gb, &r.contiguous()?, F32Op(BnRelu3(bn)))?,
        None => z.apply_op2(&gb, F32Op(BnRelu2(bn)))?,
    };
    let stats = match saved.lock() {
        Ok(s) => s.stats.clone(),
        Err(_) => candle_core::bail!("{op}: statistics lost"),
    };
    Ok((y, stats))
}

#[cfg(test)]
mod tests {
    use super::super::bordered::{from_bordered, to_bordered};
    use super::*;
    use crate::model::test_tensors::{max_abs, max_diff};
    use candle_core::{Device, Var};
    use candle_nn::ModuleT;

    /// Values, batch statistics and gradients against candle's batch norm
    /// (training mode), relu and add.
    #[test]
    fn matches_candle_batch_norm() -> Result<()> {
        let mut rt = crate::model::test_tensors::SeededTensors::new(1);
        let dev = Device::Cpu;
        for (b, c, h, w, with_res) in [
            (4, 3, 5, 4, false),
            (4, 3, 5, 4, true),
            (70, 8, 8, 8, true),
            (300, 2, 3, 2, false),
        ] {
            let z0 = (rt.randn(0f32, 2.0, (b, c, h, w), &dev)? + 3.0)?;
            let r0 = rt.randn(0f32, 1.0, (b, c, h, w), &dev)?;
            let g0 = rt.rand(0.5f32, 1.5, c, &dev)?;
            let b0 = rt.randn(0f32, 0.5, c, &dev)?;
            let vars = |t: &[&Tensor]| -> Result<Vec<Var>> {
                t.iter().map(|t| Var::from_tensor(t)).collect()
            };
            let a = vars(&[&z0, &r0, &g0, &b0])?;
            let s = vars(&[&z0, &r0, &g0, &b0])?;
            let res_a = if with_res {
                Some(to_bordered(&a[1])?)
            } else {
                None
            };
            let (ya, stats) =
                batch_norm_relu(&to_bordered(&a[0])?, &a[2], &a[3], res_a.as_ref(), 1e-5)?;
            let ya = from_bordered(&ya)?;
            // Stock: candle's BatchNorm (momentum 0.1) with these affine
            // parameters.
            let bn = candle_nn::BatchNorm::new(
                c,
                Tensor::zeros(c, DType::F32, &dev)?,
                Tensor::ones(c, DType::F32, &dev)?,
                s[2].as_tensor().clone(),
                s[3].as_tensor().clone(),
                1e-5,
            )?;
            let yb = bn.forward_t(&s[0], true)?;
            let yb = if with_res {
                (yb + s[1].as_tensor())?
            } else {
                yb
            };
            let yb = yb.relu()?;
            let what = format!("b{b} c{c} {h}x{w} res {with_res}");
            assert!(max_diff(&ya, &yb) < 1e-5, "{what}: values");
            // candle's running mean after one step from 0 is 0.1 * mean.
            let m = Tensor::new(stats.mean.as_slice(), &dev)?;
            assert!(
                max_diff(&(m * 0.1)?, bn.running_mean()) < 1e-5,
                "{what}: mean"
            );
            let n = stats.count as f64;
            let v = Tensor::new(stats.var.as_slice(), &dev)?;
            let want = ((v * (0.1 * n / (n - 1.0)))? + 0.9)?;
            assert!(max_diff(&want, bn.running_var()) < 1e-5, "{what}: var");
            let up = rt.randn(0f32, 1.0, ya.shape(), &dev)?;
            let ga = (ya * &up)?.sum_all()?.backward()?;
            let gb = (yb * &up)?.sum_all()?.backward()?;
            for (i, name) in ["z", "res", "gamma", "beta"].iter().enumerate() {
                if i == 1 && !with_res {
                    continue;
                }
                let (a, b) = (ga.get(&a[i]).expect("grad"), gb.get(&s[i]).expect("grad"));
                let d = max_diff(a, b);
                assert!(d < 2e-5 * max_abs(b).max(1.0), "{what}: d{name} by {d}");
            }
        }
        Ok(())
    }
}
