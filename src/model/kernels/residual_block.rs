//! A residual block in training mode as one op:
//! `relu(BN2(conv2(relu(BN1(conv1(x))))) + x)` on bordered channels-last
//! activations, batch norms with the batch's statistics.
//!
//! As four ops (two convolutions, two batch norms) the block left candle's
//! backward pass to allocate a zero gradient and add into it for each of
//! its four activation-sized intermediates, a tenth of a training step.
//! Here the intermediates live in the op, the backward pass runs the same
//! kernels ([`super::conv3x3`], [`super::batch_norm`]) in its own buffers,
//! and the skip connection's gradient is added in the input gradient's
//! convolution epilogue. The values and gradients are those of the four
//! ops, bit for bit.
//!
//! All six parameters travel as one packed tensor (candle's custom ops take
//! at most three inputs); its gradient unpacks through candle's `cat`.

use super::act::with_f32;
use super::batch_norm::{backward_slices, forward_slices, BatchStats};
use super::bordered::{output_vec, zero_bordered, Board};
use super::conv3x3::{conv_into, weight_grad, Weights};
use super::op::{require_cpu_f32, F32Kernel, F32Op, Grads, In, Out};
use candle_core::{Result, Tensor};
use std::sync::{Arc, Mutex};

/// A block's parameters: two 3x3 convolutions `[C, C, 3, 3]` without bias,
/// each followed by a batch norm's scale and shift `[C]`.
pub struct BlockParams<'a> {
    pub w1: &'a Tensor,
    pub gamma1: &'a Tensor,
    pub beta1: &'a Tensor,
    pub w2: &'a Tensor,
    pub gamma2: &'a Tensor,
    pub beta2: &'a Tensor,
}

/// One batch norm's statistics from the forward pass.
#[derive(Clone, Default)]
struct Norm {
    stats: BatchStats,
    invstd: Vec<f32>,
}

/// The forward pass's intermediates, for the backward pass.
#[derive(Default)]
struct Saved {
    z1: Vec<f32>,
    y1: Vec<f32>,
    z2: Vec<f32>,
    norms: [Norm; 2],
    /// Whether `x` came with a zero border (else the forward pass used a
    /// cleaned copy, and so must the weight gradient).
    x_clean: bool,
}

struct ResidualBlock {
    ch: usize,
    eps: f64,
    saved: Arc<Mutex<Saved>>,
}

/// The packed parameters, split: `w1, gamma1, beta1, w2, gamma2, beta2`.
fn split(p: &[f32], ch: usize) -> [&[f32]; 6] {
    let k = ch * ch * 9;
    let (w1, rest) = p.split_at(k);
    let (g1, rest) = rest.split_at(ch);
    let (b1, rest) = rest.split_at(ch);
    let (w2, rest) = rest.split_at(k);
    let (g2, b2) = rest.split_at(ch);
    [w1, g1, b1, w2, g2, b2]
}

fn packed_len(ch: usize) -> usize {
    2 * (ch * ch * 9 + 2 * ch)
}

const OP: &str = "residual_block";

impl F32Kernel<2> for ResidualBlock {
    const NAME: &'static str = "plies-residual-block";

    fn forward(&self, [(x, l1), (p, _)]: [In<'_>; 2]) -> Result<Out> {
        let (bd, c) = Board::of(OP, l1.dims())?;
        if c != self.ch || p.len() != packed_len(c) {
            candle_core::bail!("{OP}: {c} channels with parameters for {}", self.ch);
        }
        let x = zero_bordered(&bd, c, x);
        let x_clean = matches!(x, std::borrow::Cow::Borrowed(_));
        let [w1, g1, b1, w2, g2, b2] = split(p, c);
        let size = bd.b * bd.plane() * c;
        let mut z1 = output_vec(size);
        conv_into(
            &bd,
            c,
            c,
            &x,
            &Weights::forward(w1, c, c),
            None,
            None,
            false,
            &mut z1,
        );
        let bn1 = forward_slices(OP, &bd, c, &z1, g1, b1, None, self.eps)?;
        let mut z2 = output_vec(size);
        conv_into(
            &bd,
            c,
            c,
            &bn1.y,
            &Weights::forward(w2, c, c),
            None,
            None,
            false,
            &mut z2,
        );
        let bn2 = forward_slices(OP, &bd, c, &z2, g2, b2, Some(&x), self.eps)?;
        let norm = |o: &super::batch_norm::BnOut| Norm {
            stats: o.stats.clone(),
            invstd: o.invstd.clone(),
        };
        if let Ok(mut s) = self.saved.lock() {
            *s = Saved {
                norms: [norm(&bn1), norm(&bn2)],
                z1,
                y1: bn1.y,
                z2,
                x_clean,
            };
        }
        Ok((bn2.y, bd.shape(c)))
    }

    fn backward(&self, [x, params]: [&Tensor; 2], y2: &Tensor, grad: &Tensor) -> Result<Grads<2>> {
        let (bd, c) = Board::of(OP, x.dims())?;
        let p = params.to_vec1::<f32>()?;
        let [w1, g1, _, w2, g2, _] = split(&p, c);
        let saved = match self.saved.lock() {
            Ok(s) if s.z1.len() == bd.b * bd.plane() * c => s,
            _ => candle_core::bail!("{OP}: backward before forward"),
        };
        let [n1, n2] = &saved.norms;
        let want_dx = x.track_op();
        let size = bd.b * bd.plane() * c;
        // Second batch norm (with the skip connection), second convolution.
        let bn2 = with_f32(y2, |y2| {
            with_f32(grad, |g| {
                backward_slices(
                    &bd,
                    c,
                    &saved.z2,
                    y2,
                    g,
                    g2,
                    &n2.stats.mean,
                    &n2.invstd,
                    want_dx,
                )
            })
        })??;
        let mut dy1 = output_vec(size);
        let flipped2 = Weights::flipped(w2, c, c);
        conv_into(&bd, c, c, &bn2.dz, &flipped2, None, None, false, &mut dy1);
        let dw2 = weight_grad(&bd, c, c, &saved.y1, &bn2.dz);
        // First batch norm, first convolution; the skip's gradient joins in
        // the input gradient's epilogue.
        let bn1 = backward_slices(
            &bd,
            c,
            &saved.z1,
            &saved.y1,
            &dy1,
            g1,
            &n1.stats.mean,
            &n1.invstd,
            false,
        );
        drop(dy1);
        let dev = x.device();
        let dx = match &bn2.dres {
            Some(dres) if want_dx => {
                let mut dx = output_vec(size);
                let flipped1 = Weights::flipped(w1, c, c);
                conv_into(
                    &bd,
                    c,
                    c,
                    &bn1.dz,
                    &flipped1,
                    None,
                    Some(dres),
                    false,
                    &mut dx,
                );
                Some(Tensor::from_vec(dx, x.shape(), dev)?)
            }
            _ => None,
        };
        let dw1 = with_f32(x, |xv| {
            let xv = if saved.x_clean {
                std::borrow::Cow::Borrowed(xv)
            } else {
                zero_bordered(&bd, c, xv)
            };
            weight_grad(&bd, c, c, &xv, &bn1.dz)
        })?;
        let dp: Vec<f32> = [
            &dw1[..],
            &bn1.dgamma,
            &bn1.dbeta,
            &dw2,
            &bn2.dgamma,
            &bn2.dbeta,
        ]
        .concat();
        Ok([dx, Some(Tensor::from_vec(dp, params.shape(), dev)?)])
    }
}

/// `relu(BN2(conv2(relu(BN1(conv1(x))))) + x)` for a bordered
/// `x [B, H+2, W+2, C]`, batch norms in training mode (eps `eps`), as one
/// op with gradients for `x` and every parameter; also returns both batch
/// norms' statistics, for the caller's running averages. CPU f32 only.
pub fn residual_block(x: &Tensor, p: &BlockParams, eps: f64) -> Result<(Tensor, [BatchStats; 2])> {
    let (_, c) = Board::of(OP, x.dims())?;
    let all = [p.w1, p.gamma1, p.beta1, p.w2, p.gamma2, p.beta2];
    require_cpu_f32(OP, &[x])?;
    require_cpu_f32(OP, &all)?;
    for (name, t, want) in [
        ("conv1 weight", p.w1, vec![c, c, 3, 3]),
        ("bn1 scale", p.gamma1, vec![c]),
        ("bn1 shift", p.beta1, vec![c]),
        ("conv2 weight", p.w2, vec![c, c, 3, 3]),
        ("bn2 scale", p.gamma2, vec![c]),
        ("bn2 shift", p.beta2, vec![c]),
    ] {
        if t.dims() != want.as_slice() {
            candle_core::bail!(
                "{OP}: {name} {:?} for {c} channels, expected {want:?}",
                t.dims()
            );
        }
    }
    let flat = all
        .iter()
        .map(|t| t.flatten_all())
        .collect::<Result<Vec<_>>>()?;
    let packed = Tensor::cat(&flat, 0)?;
    let saved = Arc::new(Mutex::new(Saved::default()));
    let op = ResidualBlock {
        ch: c,
        eps,
        saved: saved.clone(),
    };
    let y = x.contiguous()?.apply_op2(&packed, F32Op(op))?;
    let stats = match saved.lock() {
        Ok(s) => [s.norms[0].stats.clone(), s.norms[1].stats.clone()],
        Err(_) => candle_core::bail!("{OP}: statistics lost"),
    };
    Ok((y, stats))
}

#[cfg(test)]
mod tests {
    use super::super::bordered::{from_bordered, to_bordered};
    use super::super::{batch_norm_relu, conv3x3};
    use super::*;
    use crate::model::test_tensors::SeededTensors;
    use candle_core::{DType, Device, Var};

    fn bits(t: &Tensor) -> Vec<u32> {
        let v = t
            .flatten_all()
            .and_then(|t| t.to_vec1::<f32>())
            .expect("f32");
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Values, statistics and every gradient equal those of the four ops
    /// the block fuses, bit for bit; channel counts on the direct kernel's
    /// path (16, 32) and off it (6).
    #[test]
    fn equals_the_four_ops() -> Result<()> {
        let dev = Device::Cpu;
        let mut rt = SeededTensors::new(3);
        for (b, c, h, w) in [(3, 16, 5, 4), (70, 32, 8, 8), (2, 6, 3, 3)] {
            let x0 = rt.randn(0f32, 1.0, (b, c, h, w), &dev)?;
            let mut draw = |shape: &[usize], mean: f32| -> Result<Var> {
                Var::from_tensor(&rt.randn(mean, 0.3, shape, &dev)?)
            };
            let ps = [
                draw(&[c, c, 3, 3], 0.0)?,
                draw(&[c], 1.0)?,
                draw(&[c], 0.0)?,
                draw(&[c, c, 3, 3], 0.0)?,
                draw(&[c], 1.0)?,
                draw(&[c], 0.0)?,
            ];
            let up = rt.randn(0f32, 1.0, (b, c, h, w), &dev)?;
            let xa = Var::from_tensor(&x0)?;
            let xb = Var::from_tensor(&x0)?;
            // Fused.
            let bp = BlockParams {
                w1: &ps[0],
                gamma1: &ps[1],
                beta1: &ps[2],
                w2: &ps[3],
                gamma2: &ps[4],
                beta2: &ps[5],
            };
            let (ya, stats) = residual_block(&to_bordered(&xa)?, &bp, 1e-5)?;
            let ya = from_bordered(&ya)?;
            let ga = (&ya * &up)?.sum_all()?.backward()?;
            // Four ops.
            let xbb = to_bordered(&xb)?;
            let z1 = conv3x3(&xbb, &ps[0])?;
            let (y1, s1) = batch_norm_relu(&z1, &ps[1], &ps[2], None, 1e-5)?;
            let z2 = conv3x3(&y1, &ps[3])?;
            let (yb, s2) = batch_norm_relu(&z2, &ps[4], &ps[5], Some(&xbb), 1e-5)?;
            let yb = from_bordered(&yb)?;
            let gb = (&yb * &up)?.sum_all()?.backward()?;
            let what = format!("b{b} c{c} {h}x{w}");
            assert_eq!(bits(&ya), bits(&yb), "{what}: values");
            for (got, want) in stats.iter().zip([&s1, &s2]) {
                assert_eq!(got.mean, want.mean, "{what}: batch mean");
                assert_eq!(got.var, want.var, "{what}: batch variance");
            }
            let dxa = ga.get(&xa).expect("dx");
            let dxb = gb.get(&xb).expect("dx");
            assert_eq!(bits(dxa), bits(dxb), "{what}: dx");
            for (i, p) in ps.iter().enumerate() {
                let (a, b) = (ga.get(p).expect("grad"), gb.get(p).expect("grad"));
                assert_eq!(bits(a), bits(b), "{what}: parameter {i}");
            }
        }
        Ok(())
    }

    #[test]
    fn refuses_mismatched_parameters() -> Result<()> {
        let dev = Device::Cpu;
        let x = Tensor::zeros((2, 6, 6, 8), DType::F32, &dev)?;
        let w = Tensor::zeros((8, 8, 3, 3), DType::F32, &dev)?;
        let g = Tensor::ones(8, DType::F32, &dev)?;
        let short = Tensor::ones(7, DType::F32, &dev)?;
        let p = |beta2| BlockParams {
            w1: &w,
            gamma1: &g,
            beta1: &g,
            w2: &w,
            gamma2: &g,
            beta2,
        };
        assert!(residual_block(&x, &p(&g), 1e-5).is_ok());
        let err = residual_block(&x, &p(&short), 1e-5).expect_err("refused");
        assert!(err.to_string().contains("bn2 shift [7]"), "{err}");
        Ok(())
    }
}
