//! The MDRNN's four swiping units in one op (`kernels/mdrnn_sweep.cu`):
//! on a GPU one launch per forward pass instead of a gather, a matmul, an
//! add and a tanh for each of the `H + W - 1` anti-diagonals. See
//! [`crate::model::Mdrnn`] for the recurrence.

use candle_core::{CpuStorage, CustomOp2, Layout, Result, Shape, Tensor};

/// The weights in the kernel's order: `[wi (k*C) | wh (k*k) | wb (k) | wo (k)]`.
pub fn pack_weights(wi: &Tensor, wh: &Tensor, wb: &Tensor, wo: &Tensor) -> Result<Tensor> {
    Tensor::cat(
        &[
            wi.flatten_all()?,
            wh.flatten_all()?,
            wb.flatten_all()?,
            wo.flatten_all()?,
        ],
        0,
    )
}

/// Per-direction point outputs `[B, 4, H*W]` of planes `[B, C, H, W]` with
/// `k` hidden units and packed weights; their sum over the directions is
/// [`crate::model::Mdrnn::point_outputs`].
pub fn sweep(planes: &Tensor, packed: &Tensor, k: usize) -> Result<Tensor> {
    planes
        .contiguous()?
        .apply_op2_no_bwd(&packed.contiguous()?, &Sweep { k })
}

/// Whether a forward pass on `planes` takes the one-launch sweep: on a
/// CUDA device, for inference (the op carries no gradient), unless candle's
/// ops are forced ([`crate::model::kernels::candle_ops_forced`]).
pub fn takes(planes: &Tensor, train: bool) -> bool {
    planes.device().is_cuda()
        && planes.dtype() == candle_core::DType::F32
        && !train
        && !crate::model::kernels::candle_ops_forced()
}

/// The board dimensions of one sweep.
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    pub b: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub k: usize,
}

impl Dims {
    fn packed_len(&self) -> usize {
        self.k * self.c + self.k * self.k + 2 * self.k
    }

    /// Shared memory of the kernel that keeps the weights and two
    /// diagonals of state there (`mdrnn_sweep_shared_f32`).
    pub fn shared_bytes(&self) -> usize {
        let longest_diagonal = self.h.min(self.w);
        (self.packed_len() + 2 * longest_diagonal * self.k) * std::mem::size_of::<f32>()
    }
}

/// The shared memory a block may use without opting in (48 KiB on every
/// GPU since compute capability 3.0); larger MDRNNs take the kernel that
/// keeps its state in global memory.
pub const SHARED_LIMIT: usize = 48 * 1024;

/// The kernel's twin: the same loops, in the same order, as one block of
/// the CUDA kernel runs them (threads of one diagonal are independent, so
/// their order does not matter). `x` is `[B, C, H, W]`, the result
/// `[B, 4, H*W]`. Only the tanh differs (the host's against CUDA's
/// `tanhf`, within a few ulps).
pub fn sweep_host(x: &[f32], weights: &[f32], d: Dims) -> Vec<f32> {
    sweep_with(x, weights, d, |s, a, b| s + a * b, f32::tanh)
}

/// How far the GPU's arithmetic may take the kernel from its twin,
/// relative to 1 + the largest output (what `tests/device.rs` allows).
/// nvcc contracts `s + a * b` into one fused multiply-add and CUDA's
/// `tanhf` is within 2 ulps of the exact value. `sweep_with` under those
/// two changes moves the device test's boards by up to 4.4e-5 (k = 64; the
/// recurrence carries each rounding on along the diagonals), and the bound
/// keeps four times that
/// (`the_gpu_s_rounding_stays_within_the_device_tolerance`). The
/// simulation gives 2.24e-5 at 2x19x19, k = 10, where an H100 measured
/// 2.3e-5: that is the whole of the difference.
pub const DEVICE_TOLERANCE: f32 = 2.5e-4;

/// The boards `(C, H, W, k)` `tests/device.rs` sweeps on a GPU: square,
/// wide, 19x19, 64 units, and last one too large for the shared-memory
/// kernel ([`SHARED_LIMIT`]), which takes the global-memory one.
pub const DEVICE_TEST_SHAPES: [(usize, usize, usize, usize); 6] = [
    (2, 5, 5, 10),
    (2, 9, 9, 10),
    (2, 19, 19, 10),
    (2, 9, 9, 64),
    (3, 4, 11, 7),
    (2, 5, 5, 110),
];

/// [`sweep_host`] with the multiply-add `mad(s, a, b)` and the `tanh` given:
/// the twin's loops under another machine's rounding.
pub fn sweep_with(
    x: &[f32],
    weights: &[f32],
    d: Dims,
    mad: impl Fn(f32, f32, f32) -> f32,
    tanh: impl Fn(f32) -> f32,
) -> Vec<f32> {
    let Dims { b, c, h, w, k } = d;
    let hw = h * w;
    let (wi, rest) = weights.split_at(k * c);
    let (wh, rest) = rest.split_at(k * k);
    let (wb, wo) = rest.split_at(k);
    let mut out = vec![0f32; b * 4 * hw];
    let mut u = vec![0f32; hw * k];
    for bi in 0..b {
        let xb = &x[bi * c * hw..(bi + 1) * c * hw];
        for dir in 0..4 {
            let (flip_w, flip_h) = (dir & 1 != 0, dir & 2 != 0);
            let real = |vi: usize, vj: usize| {
                (
                    if flip_h { h - 1 - vi } else { vi },
                    if flip_w { w - 1 - vj } else { vj },
                )
            };
            for diag in 0..h + w - 1 {
                let lo = diag.saturating_sub(w - 1);
                let hi = diag.min(h - 1);
                for vi in lo..=hi {
                    let vj = diag - vi;
                    let (i, j) = real(vi, vj);
                    for a in 0..k {
                        let mut s = 0f32;
                        for ch in 0..c {
                            s = mad(s, wi[a * c + ch], xb[ch * hw + i * w + j]);
                        }
                        let up = (vi > 0).then(|| ((vi - 1) * w + vj) * k);
                        let left = (vj > 0).then(|| (vi * w + vj - 1) * k);
                        for g in 0..k {
                            let up_g = up.map_or(wb[g], |o| u[o + g]);
                            let left_g = left.map_or(wb[g], |o| u[o + g]);
                            s = mad(s, wh[a * k + g], up_g + left_g);
                        }
                        u[(vi * w + vj) * k + a] = tanh(s);
                    }
                }
            }
            let ob = &mut out[(bi * 4 + dir) * hw..(bi * 4 + dir + 1) * hw];
            for p in 0..hw {
                let (i, j) = real(p / w, p % w);
                let mut s = 0f32;
                for a in 0..k {
                    s = mad(s, wo[a], u[p * k + a]);
                }
                ob[i * w + j] = s;
            }
        }
    }
    out
}

struct Sweep {
    k: usize,
}

impl Sweep {
    /// The dimensions of planes `[B, C, H, W]` and packed weights, checked.
    fn dims(&self, planes: &Layout, packed: &Layout) -> Result<Dims> {
        let (b, c, h, w) = planes.shape().dims4()?;
        let d = Dims {
            b,
            c,
            h,
            w,
            k: self.k,
        };
        if packed.shape().dims() != [d.packed_len()] {
            candle_core::bail!(
                "mdrnn-sweep: {} packed weights for C = {c}, k = {}, expected {}",
                packed.shape().elem_count(),
                self.k,
                d.packed_len()
            );
        }
        if h == 0 || w == 0 || self.k == 0 {
            candle_core::bail!("mdrnn-sweep: an empty board or no hidden units");
        }
        Ok(d)
    }
}

impl CustomOp2 for Sweep {
    fn name(&self) -> &'static str {
        "mdrnn-sweep"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let d = self.dims(l1, l2)?;
        let x = super::f32_data("mdrnn-sweep", s1, l1)?;
        let weights = super::f32_data("mdrnn-sweep", s2, l2)?;
        let out = sweep_host(x, weights, d);
        Ok((CpuStorage::F32(out), Shape::from((d.b, 4, d.h * d.w))))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        use candle_core::backend::BackendStorage;
        use candle_core::cuda_backend::cudarc::driver::{LaunchConfig, PushKernelArg};
        use candle_core::cuda_backend::WrapErr;
        let d = self.dims(l1, l2)?;
        if !l1.is_contiguous() || !l2.is_contiguous() {
            candle_core::bail!("mdrnn-sweep: contiguous tensors only");
        }
        let dev = s1.device().clone();
        let hw = d.h * d.w;
        let x = s1.as_cuda_slice::<f32>()?.slice(l1.start_offset()..);
        let weights = s2.as_cuda_slice::<f32>()?.slice(l2.start_offset()..);
        // SAFETY: every element is written by the kernel below.
        let out = unsafe { dev.alloc::<f32>(d.b * 4 * hw)? };
        let shared = d.shared_bytes();
        let in_shared = shared <= SHARED_LIMIT;
        let name = if in_shared {
            "mdrnn_sweep_shared_f32"
        } else {
            "mdrnn_sweep_f32"
        };
        let func = dev.get_or_load_custom_func(name, "plies_mdrnn_sweep", PTX)?;
        let int = |v: usize| {
            i32::try_from(v)
                .map_err(|_| candle_core::Error::Msg(format!("mdrnn-sweep: {v} too large")))
        };
        let (c, h, w, k) = (int(d.c)?, int(d.h)?, int(d.w)?, int(d.k)?);
        let grid = (
            u32::try_from(d.b)
                .map_err(|_| candle_core::Error::Msg("mdrnn-sweep: batch too large".into()))?,
            4,
            1,
        );
        let cfg = LaunchConfig {
            grid_dim: grid,
            block_dim: (super::THREADS, 1, 1),
            shared_mem_bytes: if in_shared { shared as u32 } else { 0 },
        };
        // The whole board's state, for the kernel that keeps it in global
        // memory.
        let state = if in_shared {
            None
        } else {
            Some(dev.alloc_zeros::<f32>(d.b * 4 * hw * d.k)?)
        };
        let mut builder = func.builder();
        builder.arg(&x);
        builder.arg(&weights);
        if let Some(state) = &state {
            builder.arg(state);
        }
        builder.arg(&out);
        builder.arg(&c);
        builder.arg(&h);
        builder.arg(&w);
        builder.arg(&k);
        // SAFETY: the arguments match the kernel's signature in
        // kernels/mdrnn_sweep.cu, and `state` and `out` have its sizes.
        unsafe { builder.launch(cfg) }.w()?;
        Ok((
            candle_core::CudaStorage::wrap_cuda_slice(out, dev),
            Shape::from((d.b, 4, hw)),
        ))
    }
}

#[cfg(feature = "cuda")]
const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/mdrnn_sweep.ptx"));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_tensors::{max_abs, max_diff, SeededTensors};
    use crate::model::{Mdrnn, MdrnnConfig};
    use candle_core::{DType, Device};
    use candle_nn::{VarBuilder, VarMap};

    /// The device test's boards under a GPU's rounding: fused
    /// multiply-adds (nvcc's default contraction) and a tanh off by up to
    /// 2 ulps (CUDA's `tanhf` bound), against the plain twin, on the
    /// device test's inputs. The H100 measured 2.3e-5 at 2x19x19, k = 10;
    /// this gives 2.24e-5 there.
    #[test]
    fn the_gpu_s_rounding_stays_within_the_device_tolerance() {
        use rand::RngExt;
        let mut worst = 0f32;
        for (seed, (c, h, w, k)) in DEVICE_TEST_SHAPES.into_iter().enumerate() {
            let d = Dims { b: 17, c, h, w, k };
            // The device test's inputs.
            let uniform = |seed: u64, n: usize, scale: f32| -> Vec<f32> {
                let mut rng = crate::util::seeded_rng(seed, 0xd3);
                (0..n)
                    .map(|_| scale * (2.0 * rng.random::<f32>() - 1.0))
                    .collect()
            };
            let x = uniform(seed as u64, d.b * c * h * w, 1.0);
            let packed = uniform(100 + seed as u64, d.packed_len(), 0.5);
            let plain = sweep_host(&x, &packed, d);
            let noise = std::cell::RefCell::new(crate::util::seeded_rng(seed as u64, 0x7a));
            let gpu_like = sweep_with(
                &x,
                &packed,
                d,
                |s, a, b| a.mul_add(b, s),
                |v| {
                    let ulps = noise.borrow_mut().random_range(-2i32..=2);
                    let t = v.tanh();
                    f32::from_bits((t.to_bits() as i32 + ulps) as u32).clamp(-1.0, 1.0)
                },
            );
            let scale = 1.0 + plain.iter().fold(0f32, |m, v| m.max(v.abs()));
            let diff = plain
                .iter()
                .zip(&gpu_like)
                .fold(0f32, |m, (p, g)| m.max((p - g).abs()))
                / scale;
            assert!(
                diff > 0.0,
                "{c}x{h}x{w} k={k}: the rounding changed nothing"
            );
            worst = worst.max(diff);
        }
        assert!(
            worst < DEVICE_TOLERANCE / 4.0,
            "a GPU's rounding moves the twin by {worst}, near the device tolerance {DEVICE_TOLERANCE}"
        );
    }

    /// `mdrnn_sweep_shared_f32`'s indexing on the host: transposed
    /// weights, two diagonal buffers swapped after each diagonal, each
    /// point's output taken when its diagonal is done.
    fn sweep_two_diagonals(x: &[f32], weights: &[f32], d: Dims) -> Vec<f32> {
        let Dims { b, c, h, w, k } = d;
        let hw = h * w;
        let longest = h.min(w);
        let mut wi_t = vec![0f32; k * c];
        for t in 0..k * c {
            wi_t[(t % c) * k + t / c] = weights[t];
        }
        let mut wh_t = vec![0f32; k * k];
        for t in 0..k * k {
            wh_t[(t % k) * k + t / k] = weights[k * c + t];
        }
        let wb = &weights[k * c + k * k..k * c + k * k + k];
        let wo = &weights[k * c + k * k + k..];
        let mut out = vec![0f32; b * 4 * hw];
        for bi in 0..b {
            let xb = &x[bi * c * hw..];
            for dir in 0..4 {
                let (flip_w, flip_h) = (dir & 1 != 0, dir & 2 != 0);
                let mut prev = vec![0f32; longest * k];
                let mut cur = vec![0f32; longest * k];
                for diag in 0..h + w - 1 {
                    let lo = diag.saturating_sub(w - 1);
                    let hi = diag.min(h - 1);
                    let plo = diag.saturating_sub(1).saturating_sub(w - 1);
                    for t in 0..(hi - lo + 1) * k {
                        let (vi, a) = (lo + t / k, t % k);
                        let vj = diag - vi;
                        let i = if flip_h { h - 1 - vi } else { vi };
                        let j = if flip_w { w - 1 - vj } else { vj };
                        let mut s = 0f32;
                        for ch in 0..c {
                            s += wi_t[ch * k + a] * xb[ch * hw + i * w + j];
                        }
                        for g in 0..k {
                            let up = if vi > 0 {
                                prev[(vi - 1 - plo) * k + g]
                            } else {
                                wb[g]
                            };
                            let left = if vj > 0 {
                                prev[(vi - plo) * k + g]
                            } else {
                                wb[g]
                            };
                            s += wh_t[g * k + a] * (up + left);
                        }
                        cur[(vi - lo) * k + a] = s.tanh();
                    }
                    for t in 0..hi - lo + 1 {
                        let (vi, vj) = (lo + t, diag - lo - t);
                        let i = if flip_h { h - 1 - vi } else { vi };
                        let j = if flip_w { w - 1 - vj } else { vj };
                        let mut s = 0f32;
                        for a in 0..k {
                            s += wo[a] * cur[t * k + a];
                        }
                        out[(bi * 4 + dir) * hw + i * w + j] = s;
                    }
                    std::mem::swap(&mut prev, &mut cur);
                }
            }
        }
        out
    }

    /// The shared-memory kernel's indexing gives the twin's bits on the
    /// device test's boards (so only the GPU's rounding separates it from
    /// the twin, as for the global-memory kernel).
    #[test]
    fn two_diagonals_of_state_give_the_twins_values() {
        use rand::RngExt;
        for (seed, (c, h, w, k)) in DEVICE_TEST_SHAPES.into_iter().enumerate() {
            let d = Dims { b: 3, c, h, w, k };
            let mut rng = crate::util::seeded_rng(seed as u64, 0x5e);
            let x: Vec<f32> = (0..d.b * c * h * w)
                .map(|_| rng.random_range(-1.0f32..1.0))
                .collect();
            let packed: Vec<f32> = (0..d.packed_len())
                .map(|_| rng.random_range(-0.5f32..0.5))
                .collect();
            assert_eq!(
                sweep_two_diagonals(&x, &packed, d),
                sweep_host(&x, &packed, d),
                "{c}x{h}x{w}, k = {k}"
            );
        }
    }

    /// The device test's shapes take both kernels: all but the last fit
    /// the shared-memory one.
    #[test]
    fn the_device_test_takes_both_kernels() {
        let fits: Vec<bool> = DEVICE_TEST_SHAPES
            .iter()
            .map(|&(c, h, w, k)| Dims { b: 1, c, h, w, k }.shared_bytes() <= SHARED_LIMIT)
            .collect();
        let last = fits.len() - 1;
        assert!(fits[..last].iter().all(|&f| f), "{fits:?}");
        assert!(!fits[last]);
        // The shipped 19x19 MDRNN with 64 units fits.
        let big = Dims {
            b: 1,
            c: 3,
            h: 19,
            w: 19,
            k: 64,
        };
        assert!(big.shared_bytes() <= SHARED_LIMIT);
    }

    /// The twin, summed over the four directions, is the model's candle
    /// path on boards of several shapes (square, wide, tall, a line).
    #[test]
    fn the_twin_is_the_models_point_outputs() {
        let dev = Device::Cpu;
        let mut rng = SeededTensors::new(3);
        for (c, h, w, k) in [
            (2, 5, 5, 10),
            (3, 3, 7, 4),
            (2, 6, 2, 3),
            (1, 1, 4, 2),
            (2, 9, 9, 10),
        ] {
            let vm = VarMap::new();
            let cfg = MdrnnConfig {
                init_std: 0.5,
                ..MdrnnConfig::stones(h.max(w), k)
            };
            let cfg = MdrnnConfig {
                input: crate::model::InputShape::new([c, h, w], 0),
                ..cfg
            };
            let net = Mdrnn::new(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
            let get = |n: &str| vm.data().lock().unwrap()[n].as_tensor().clone();
            // Weights away from the defaults, so every term matters.
            for n in ["wi", "wh", "wb", "wo"] {
                let t = get(n);
                let v = rng.randn(0.0, 0.5, t.shape().clone(), &dev).unwrap();
                vm.data().lock().unwrap()[n].set(&v).unwrap();
            }
            let packed = pack_weights(&get("wi"), &get("wh"), &get("wb"), &get("wo")).unwrap();
            let planes = rng.rand(-1.0, 1.0, (3, c, h, w), &dev).unwrap();
            let per_dir = sweep(&planes, &packed, k).unwrap();
            assert_eq!(per_dir.dims(), [3, 4, h * w]);
            let summed = per_dir.sum(1).unwrap();
            let want = net.point_outputs(&planes).unwrap();
            // Float sums in another order: relative to the outputs' size.
            let (diff, scale) = (max_diff(&summed, &want), 1.0 + max_abs(&want));
            assert!(
                diff < 1e-5 * scale,
                "{c}x{h}x{w}, k = {k}: differs by {diff} (scale {scale})"
            );
        }
    }

    #[test]
    fn wrong_weight_counts_are_refused() {
        let dev = Device::Cpu;
        let planes = Tensor::zeros((1, 2, 3, 3), DType::F32, &dev).unwrap();
        let packed = Tensor::zeros(7, DType::F32, &dev).unwrap();
        let err = sweep(&planes, &packed, 2).unwrap_err().to_string();
        assert!(err.contains("expected 12"), "{err}");
    }
}
