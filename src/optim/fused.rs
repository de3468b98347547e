//! SGD with momentum, AdamW and RMSProp over every parameter in one launch
//! on CUDA (`kernels/optim.cu`), where candle's ops take eight (momentum)
//! to fifteen (RMSProp) launches, each allocating a parameter-sized
//! tensor, per parameter per step.
//!
//! The parameters and their state are updated in place through their
//! device addresses, gathered into a table each step (the gradients are
//! new tensors every step). [`momentum_element`], [`adamw_element`] and
//! [`rmsprop_element`] are the kernels' twins: the same operations in the
//! same order, each rounded on its own, which are also those of the CPU's
//! steps (the in-place rules of [`super::inplace`], candle's ops for
//! RMSProp), so a CUDA step gives the CPU's bits (tested on the
//! CPU against the optimizers, and on a GPU by `tests/device.rs`).

use candle_core::{Result, Tensor};

/// A momentum step's hyper-parameters as the kernel reads them (f32,
/// converted from the config's f64 as the CPU rules convert them).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(any(test, feature = "cuda")), allow(dead_code))]
pub(super) struct MomentumHyper {
    pub lr: f32,
    pub momentum: f32,
    /// One less the dampening: the gradient's weight in the buffer.
    pub blend_new: f32,
    pub weight_decay: f32,
    pub nesterov: bool,
}

impl MomentumHyper {
    pub fn new(c: &super::MomentumConfig) -> Self {
        MomentumHyper {
            lr: c.lr as f32,
            momentum: c.momentum as f32,
            blend_new: (1.0 - c.dampening) as f32,
            weight_decay: c.weight_decay as f32,
            nesterov: c.nesterov,
        }
    }
}

/// One value's step: the parameter and buffer after it, from the
/// parameter `p`, gradient `g` and buffer `buf` (ignored on the buffer's
/// first step, where it becomes the decayed gradient). The kernel's twin,
/// run by the tests.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) fn momentum_element(
    p: f32,
    g: f32,
    buf: f32,
    first: bool,
    h: &MomentumHyper,
) -> (f32, f32) {
    let g = if h.weight_decay != 0.0 {
        g + (p * h.weight_decay + 0.0)
    } else {
        g
    };
    let b = if first {
        g
    } else {
        (buf * h.momentum + 0.0) + (g * h.blend_new + 0.0)
    };
    let step = if h.nesterov {
        (g + (b * h.momentum + 0.0)) * h.lr + 0.0
    } else {
        b * h.lr + 0.0
    };
    (p - step, b)
}

/// AdamW's step as the kernel reads it (f32, converted from the f64 the
/// optimizer computes, as the CPU rules convert them).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(any(test, feature = "cuda")), allow(dead_code))]
pub(super) struct AdamWHyper {
    pub lr: f32,
    pub beta1: f32,
    pub beta1_new: f32,
    pub beta2: f32,
    pub beta2_new: f32,
    /// Bias corrections `1 / (1 - beta^t)`.
    pub scale_m: f32,
    pub scale_v: f32,
    pub eps: f32,
    /// `1 - lr * weight_decay`.
    pub decay: f32,
}

/// One value's AdamW step: the parameter and moments after it. The
/// kernel's twin, run by the tests.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) fn adamw_element(p: f32, g: f32, m: f32, v: f32, h: &AdamWHyper) -> (f32, f32, f32) {
    let m = (m * h.beta1 + 0.0) + (g * h.beta1_new + 0.0);
    let v = (v * h.beta2 + 0.0) + (g * g * h.beta2_new + 0.0);
    let m_hat = m * h.scale_m + 0.0;
    let v_hat = v * h.scale_v + 0.0;
    let denom = v_hat.sqrt() * 1.0 + h.eps;
    let step = (m_hat / denom) * h.lr + 0.0;
    ((p * h.decay + 0.0) - step, m, v)
}

/// RMSProp's step as the kernel reads it.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(any(test, feature = "cuda")), allow(dead_code))]
pub(super) struct RmsPropHyper {
    pub lr: f32,
    pub alpha: f32,
    /// `1 - alpha`.
    pub alpha_new: f32,
    pub eps: f32,
    pub weight_decay: f32,
    pub momentum: f32,
    pub centered: bool,
}

impl RmsPropHyper {
    pub fn new(c: &super::RmsPropConfig) -> Self {
        RmsPropHyper {
            lr: c.lr as f32,
            alpha: c.alpha as f32,
            alpha_new: (1.0 - c.alpha) as f32,
            eps: c.eps as f32,
            weight_decay: c.weight_decay as f32,
            momentum: c.momentum as f32,
            centered: c.centered,
        }
    }
}

/// One value's RMSProp step: the parameter, square average, gradient
/// average (centered) and momentum buffer after it. The kernel's twin,
/// run by the tests.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) fn rmsprop_element(
    p: f32,
    g: f32,
    [sq, ga, buf]: [f32; 3],
    h: &RmsPropHyper,
) -> (f32, [f32; 3]) {
    let g = if h.weight_decay != 0.0 {
        g + (p * h.weight_decay + 0.0)
    } else {
        g
    };
    let sq = (sq * h.alpha + 0.0) + (g * g * h.alpha_new + 0.0);
    let (ga, avg) = if h.centered {
        let ga = ga + ((g - ga) * h.alpha_new + 0.0);
        (ga, (sq - ga * ga).sqrt())
    } else {
        (ga, sq.sqrt())
    };
    let avg = avg * 1.0 + h.eps;
    let (buf, update) = if h.momentum > 0.0 {
        let buf = (buf * h.momentum + 0.0) + g / avg;
        (buf, buf * h.lr + 0.0)
    } else {
        (buf, (g / avg) * h.lr + 0.0)
    };
    (p - update, [sq, ga, buf])
}

/// Which step a launch runs.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(super) enum Rule {
    Momentum(MomentumHyper),
    AdamW(AdamWHyper),
    RmsProp(RmsPropHyper),
}

impl Rule {
    /// Whether `states` are the ones the rule's kernel reads and writes.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    fn has_states(&self, states: &[Option<&Tensor>; 3]) -> bool {
        let present = states.map(|s| s.is_some());
        match self {
            Rule::Momentum(_) => present == [true, false, false],
            Rule::AdamW(_) => present == [true, true, false],
            Rule::RmsProp(h) => present == [true, h.centered, h.momentum > 0.0],
        }
    }
}

/// One parameter's share of a fused step.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(super) struct Entry<'a> {
    pub param: &'a Tensor,
    pub grad: &'a Tensor,
    /// The rule's state tensors, in the kernel's order: momentum's buffer;
    /// AdamW's two moments; RMSProp's square average, gradient average
    /// (centered) and momentum buffer (momentum > 0).
    pub states: [Option<&'a Tensor>; 3],
    /// The state's first step (momentum's buffer becomes the gradient).
    pub first: bool,
}

/// Whether a fused step takes these tensors: all f32, contiguous and on
/// one CUDA device (with the `cuda` feature), unless candle's ops are
/// forced (`PLIES_KERNELS=candle`, as the device ops step aside).
pub(super) fn takes(tensors: &[&Tensor]) -> bool {
    cfg!(feature = "cuda")
        && !crate::util::candle_ops::candle_ops_forced()
        && !tensors.is_empty()
        && tensors.iter().all(|t| {
            t.device().is_cuda()
                && t.dtype() == candle_core::DType::F32
                && t.is_contiguous()
                && t.device().same_device(tensors[0].device())
        })
}

/// Whether a fused step takes `entries`: every parameter, gradient and
/// state tensor ([`takes`]).
pub(super) fn takes_entries(entries: &[Entry<'_>]) -> bool {
    let all: Vec<&Tensor> = entries
        .iter()
        .flat_map(|e| [Some(e.param), Some(e.grad)].into_iter().chain(e.states))
        .flatten()
        .collect();
    takes(&all)
}

/// Runs one step of `rule` over `entries` in one launch.
pub(super) fn step(entries: &[Entry<'_>], rule: Rule) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    #[cfg(feature = "cuda")]
    {
        cuda::step(entries, rule)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = rule;
        candle_core::bail!("the fused optimizer step needs the `cuda` feature")
    }
}

/// Mixed precision's bf16 compute copies refreshed from their f32 masters
/// (`(master, copy)` pairs), every tensor in one launch, where a cast and
/// a `set` take two launches and an allocation per tensor. `Ok(false)`,
/// doing nothing, where the launch does not take the pairs (off CUDA,
/// other types, not contiguous, candle's ops forced): the caller refreshes
/// them its own way. The kernel rounds as the CPU's cast rounds (to
/// nearest even, a NaN kept a NaN), so the copies get the same bits.
pub(crate) fn refresh_bf16_in_one_launch(pairs: &[(&Tensor, &Tensor)]) -> Result<bool> {
    let masters: Vec<&Tensor> = pairs.iter().map(|(master, _)| *master).collect();
    let fits = takes(&masters)
        && pairs.iter().all(|(master, copy)| {
            copy.dtype() == candle_core::DType::BF16
                && copy.is_contiguous()
                && copy.elem_count() == master.elem_count()
                && copy.device().same_device(master.device())
        });
    if !fits {
        return Ok(false);
    }
    #[cfg(feature = "cuda")]
    cuda::refresh_bf16(pairs)?;
    Ok(cfg!(feature = "cuda"))
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::{Entry, Rule};
    use candle_core::cuda_backend::cudarc::driver::{DevicePtr, LaunchConfig, PushKernelArg};
    use candle_core::cuda_backend::{CudaDType, WrapErr};
    use candle_core::{Result, Storage, Tensor};

    const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/optim.ptx"));
    const THREADS: u32 = 256;

    /// `t`'s device address (its first value), with its device.
    fn address(t: &Tensor) -> Result<(u64, candle_core::CudaDevice)> {
        address_as::<f32>(t)
    }

    /// `t`'s device address as a tensor of `T`, with its device.
    fn address_as<T: CudaDType>(t: &Tensor) -> Result<(u64, candle_core::CudaDevice)> {
        let (storage, layout) = t.storage_and_layout();
        let Storage::Cuda(cs) = &*storage else {
            candle_core::bail!("fused step: a tensor is not on CUDA");
        };
        let stream = cs.device.cuda_stream();
        let slice = cs.as_cuda_slice::<T>()?;
        let (ptr, _record) = slice.device_ptr(&stream);
        Ok((
            ptr + (layout.start_offset() * std::mem::size_of::<T>()) as u64,
            cs.device.clone(),
        ))
    }

    /// The grid of a launch over `tensors` tensors, the longest `longest`
    /// values: blocks grid-stride over a tensor's values, one row of
    /// blocks per tensor.
    fn grid(tensors: usize, longest: usize) -> Result<LaunchConfig> {
        let tensors = u32::try_from(tensors)
            .ok()
            .filter(|&t| t <= 65_535)
            .ok_or_else(|| candle_core::Error::Msg("fused step: over 65,535 tensors".into()))?;
        Ok(LaunchConfig {
            grid_dim: (
                (longest.div_ceil(THREADS as usize)).clamp(1, 1024) as u32,
                tensors,
                1,
            ),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        })
    }

    pub(super) fn refresh_bf16(pairs: &[(&Tensor, &Tensor)]) -> Result<()> {
        let mut table = Vec::with_capacity(3 * pairs.len());
        let mut longest = 0usize;
        let mut device = None;
        for (master, copy) in pairs {
            let (from, dev) = address(master)?;
            table.extend([
                from,
                address_as::<half::bf16>(copy)?.0,
                master.elem_count() as u64,
            ]);
            longest = longest.max(master.elem_count());
            device.get_or_insert(dev);
        }
        let Some(dev) = device else { return Ok(()) };
        let cfg = grid(pairs.len(), longest)?;
        let table = dev.cuda_stream().clone_htod(&table).w()?;
        let f = dev.get_or_load_custom_func("refresh_bf16", "plies_optim", PTX)?;
        let mut b = f.builder();
        b.arg(&table);
        // SAFETY: the argument matches the kernel's signature; each table
        // row is a live contiguous f32 master and a bf16 copy of the stated
        // length (borrowed until the launch is queued; freed memory is
        // reused only in stream order).
        unsafe { b.launch(cfg) }.w()?;
        Ok(())
    }

    pub(super) fn step(entries: &[Entry<'_>], rule: Rule) -> Result<()> {
        let mut table = Vec::with_capacity(6 * entries.len());
        let mut longest = 0usize;
        let mut device = None;
        for e in entries {
            let n = e.param.elem_count();
            if e.grad.elem_count() != n || e.states.iter().flatten().any(|t| t.elem_count() != n) {
                candle_core::bail!("fused optimizer step: a gradient or state of another size");
            }
            if !rule.has_states(&e.states) {
                candle_core::bail!("fused optimizer step: the state tensors do not fit the rule");
            }
            let (p, dev) = address(e.param)?;
            table.extend([p, address(e.grad)?.0]);
            for t in e.states {
                table.push(match t {
                    Some(t) => address(t)?.0,
                    None => 0,
                });
            }
            table.push(n as u64 | (u64::from(e.first) << 63));
            longest = longest.max(n);
            device.get_or_insert(dev);
        }
        let Some(dev) = device else { return Ok(()) };
        let cfg = grid(entries.len(), longest)?;
        let table = dev.cuda_stream().clone_htod(&table).w()?;
        match rule {
            Rule::Momentum(h) => {
                let f = dev.get_or_load_custom_func("momentum_step_f32", "plies_optim", PTX)?;
                let nesterov = i32::from(h.nesterov);
                let mut b = f.builder();
                b.arg(&table)
                    .arg(&h.lr)
                    .arg(&h.momentum)
                    .arg(&h.blend_new)
                    .arg(&h.weight_decay)
                    .arg(&nesterov);
                // SAFETY: the arguments match the kernel's signature; every
                // address in the table is a live f32 tensor of the stated
                // length (the entries borrow them until the launch is
                // queued, and freed memory is reused only in stream order).
                unsafe { b.launch(cfg) }.w()?;
            }
            Rule::AdamW(h) => {
                let f = dev.get_or_load_custom_func("adamw_step_f32", "plies_optim", PTX)?;
                let mut b = f.builder();
                b.arg(&table)
                    .arg(&h.lr)
                    .arg(&h.beta1)
                    .arg(&h.beta1_new)
                    .arg(&h.beta2)
                    .arg(&h.beta2_new)
                    .arg(&h.scale_m)
                    .arg(&h.scale_v)
                    .arg(&h.eps)
                    .arg(&h.decay);
                // SAFETY: as above, with both moments in the table.
                unsafe { b.launch(cfg) }.w()?;
            }
            Rule::RmsProp(h) => {
                let f = dev.get_or_load_custom_func("rmsprop_step_f32", "plies_optim", PTX)?;
                let (centered, with_momentum) =
                    (i32::from(h.centered), i32::from(h.momentum > 0.0));
                let mut b = f.builder();
                b.arg(&table)
                    .arg(&h.lr)
                    .arg(&h.alpha)
                    .arg(&h.alpha_new)
                    .arg(&h.eps)
                    .arg(&h.weight_decay)
                    .arg(&h.momentum)
                    .arg(&centered)
                    .arg(&with_momentum);
                // SAFETY: as above, with the states the flags name.
                unsafe { b.launch(cfg) }.w()?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optim::{AdamW, AdamWConfig, Momentum, MomentumConfig, RmsProp, RmsPropConfig};
    use candle_core::{Device, Var};
    use candle_nn::Optimizer;

    /// Three steps of optimizer `O` on seeded CPU vars, beside `twin`
    /// stepping host copies value by value (parameter, gradient, the
    /// value's state `S`, the step's index from 0): every parameter must
    /// match bit for bit after every step.
    fn assert_twin_steps<O: Optimizer, S: Clone + Default>(
        seed: u64,
        config: O::Config,
        what: &str,
        mut twin: impl FnMut(&mut f32, f32, &mut S, usize),
    ) {
        let dev = Device::Cpu;
        let mut rng = crate::model::test_tensors::SeededTensors::new(seed);
        let shapes: [&[usize]; 3] = [&[4, 3, 3, 3], &[7], &[5, 6]];
        let vars: Vec<Var> = shapes
            .iter()
            .map(|s| Var::from_tensor(&rng.randn(0.0, 1.0, *s, &dev).unwrap()).unwrap())
            .collect();
        let values =
            |v: &Var| -> Vec<f32> { v.as_tensor().flatten_all().unwrap().to_vec1().unwrap() };
        let mut host: Vec<Vec<f32>> = vars.iter().map(values).collect();
        let mut states: Vec<Vec<S>> = host.iter().map(|p| vec![S::default(); p.len()]).collect();
        let mut opt = O::new(vars.clone(), config).unwrap();
        for step in 0..3 {
            // sum(v * g) has gradient g (times one) for each var.
            let mut loss = Tensor::zeros((), candle_core::DType::F32, &dev).unwrap();
            let mut grads = Vec::new();
            for v in &vars {
                let g = rng.randn(0.0, 1.0, v.shape(), &dev).unwrap();
                grads.push(g.flatten_all().unwrap().to_vec1::<f32>().unwrap());
                loss = (loss + (v.as_tensor() * g).unwrap().sum_all().unwrap()).unwrap();
            }
            opt.step(&loss.backward().unwrap()).unwrap();
            for ((p, st), g) in host.iter_mut().zip(&mut states).zip(&grads) {
                for i in 0..p.len() {
                    twin(&mut p[i], g[i], &mut st[i], step);
                }
            }
            for (v, p) in vars.iter().zip(&host) {
                assert_eq!(&values(v), p, "{what}, step {step}");
            }
        }
    }

    /// The twin gives the optimizer's own CPU steps bit for bit (so the
    /// kernel, which runs the twin's operations, gives them on a GPU) for
    /// Nesterov and plain momentum, with weight decay and dampening.
    #[test]
    fn the_twin_is_the_optimizers_step() {
        let configs = [
            MomentumConfig {
                lr: 0.01,
                momentum: 0.9,
                nesterov: true,
                ..Default::default()
            },
            MomentumConfig {
                lr: 0.03,
                momentum: 0.8,
                dampening: 0.25,
                weight_decay: 1e-3,
                ..Default::default()
            },
            MomentumConfig {
                lr: 0.02,
                momentum: 0.95,
                weight_decay: 5e-4,
                nesterov: true,
                ..Default::default()
            },
        ];
        for cfg in configs {
            let h = MomentumHyper::new(&cfg);
            assert_twin_steps::<Momentum, f32>(12, cfg, &format!("{cfg:?}"), |p, g, buf, step| {
                (*p, *buf) = momentum_element(*p, g, *buf, step == 0, &h);
            });
        }
    }

    /// The AdamW twin, with the optimizer's bias corrections, gives its
    /// CPU steps bit for bit, with and without weight decay.
    #[test]
    fn the_adamw_twin_is_the_optimizers_step() {
        for cfg in [
            AdamWConfig {
                lr: 1e-3,
                ..Default::default()
            },
            AdamWConfig {
                lr: 3e-3,
                beta1: 0.8,
                beta2: 0.99,
                eps: 1e-6,
                weight_decay: 0.05,
            },
        ] {
            let what = format!("{cfg:?}");
            assert_twin_steps::<AdamW, (f32, f32)>(13, cfg, &what, |p, g, (m, v), step| {
                let t = step as i32 + 1;
                let h = AdamWHyper {
                    lr: cfg.lr as f32,
                    beta1: cfg.beta1 as f32,
                    beta1_new: (1.0 - cfg.beta1) as f32,
                    beta2: cfg.beta2 as f32,
                    beta2_new: (1.0 - cfg.beta2) as f32,
                    scale_m: (1.0 / (1.0 - cfg.beta1.powi(t))) as f32,
                    scale_v: (1.0 / (1.0 - cfg.beta2.powi(t))) as f32,
                    eps: cfg.eps as f32,
                    decay: (1.0 - cfg.lr * cfg.weight_decay) as f32,
                };
                (*p, *m, *v) = adamw_element(*p, g, *m, *v, &h);
            });
        }
    }

    /// The RMSProp twin gives the optimizer's CPU steps (candle's ops)
    /// bit for bit: plain, centered with momentum, and with weight decay.
    #[test]
    fn the_rmsprop_twin_is_the_optimizers_step() {
        for cfg in [
            RmsPropConfig {
                lr: 1e-3,
                ..Default::default()
            },
            RmsPropConfig {
                lr: 5e-3,
                alpha: 0.95,
                eps: 1e-6,
                momentum: 0.9,
                centered: true,
                ..Default::default()
            },
            RmsPropConfig {
                lr: 2e-3,
                weight_decay: 0.01,
                momentum: 0.5,
                ..Default::default()
            },
        ] {
            let h = RmsPropHyper::new(&cfg);
            let what = format!("{cfg:?}");
            assert_twin_steps::<RmsProp, [f32; 3]>(14, cfg, &what, |p, g, state, _| {
                (*p, *state) = rmsprop_element(*p, g, *state, &h);
            });
        }
    }

    #[test]
    fn the_cpu_is_not_taken() {
        let t = Tensor::zeros(3, candle_core::DType::F32, &Device::Cpu).unwrap();
        assert!(!takes(&[&t]));
        assert!(!takes(&[]));
        // The bf16 refresh leaves CPU copies to the caller's cast.
        let copy = Tensor::zeros(3, candle_core::DType::BF16, &Device::Cpu).unwrap();
        assert!(!refresh_bf16_in_one_launch(&[(&t, &copy)]).unwrap());
    }
}
