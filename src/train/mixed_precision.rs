//! Training below f32 (`plies train --precision`), with the weights, the
//! gradients the optimizer reads, its state, checkpoints and the
//! validation pass in f32 whatever it is:
//!
//! - `f32`: everything in f32 (on CUDA, products in full f32, not TF32).
//! - `tf32`: f32 values, matrix products on CUDA's TF32 tensor cores (a
//!   10-bit mantissa for the products' inputs, f32 sums). CUDA only.
//! - `bf16`: mixed precision. Each trainable variable has a bf16 compute
//!   copy, refreshed from its f32 master before every step; the forward and
//!   backward passes run on the copies; their gradients are widened to f32
//!   and the optimizer steps the masters. Batch-norm running statistics
//!   stay f32 and are shared (candle's batch norm keeps its statistics in
//!   f32 for bf16 inputs). bf16 has f32's exponent range, so no loss
//!   scaling is needed. On the CPU it runs candle's stock ops in bf16: it
//!   is there to test the path, not for speed.

use candle_core::backprop::GradStore;
use candle_core::{DType, Device, Tensor, Var};
use candle_nn::{VarBuilder, VarMap};

use crate::infer::plan::Precision;
use crate::model::{build, is_running_stat, CastNet, ModelConfig, ValueNet};

/// Why `model` does not train in bf16, if it does not: the MDRNN's
/// recurrences carry each point's state across the whole board, and bf16
/// rounds it at every step.
pub fn bf16_refusal(model: &ModelConfig) -> Option<&'static str> {
    match model {
        ModelConfig::Mdrnn(_) => Some(
            "the MDRNN's recurrences across the board compound bf16's rounding; \
             it trains in f32 or tf32",
        ),
        _ => None,
    }
}

/// TF32 products for f32 on CUDA while it lives, as candle keeps them: one
/// setting of the process, restored on drop.
pub struct Tf32Products {
    #[cfg(feature = "cuda")]
    before: bool,
}

impl Tf32Products {
    /// On for `Precision::Tf32`, off (full f32 products) otherwise.
    pub fn set(precision: Precision) -> Tf32Products {
        #[cfg(feature = "cuda")]
        {
            let before = candle_core::cuda::gemm_reduced_precision_f32();
            candle_core::cuda::set_gemm_reduced_precision_f32(precision == Precision::Tf32);
            Tf32Products { before }
        }
        #[cfg(not(feature = "cuda"))]
        {
            let _ = precision;
            Tf32Products {}
        }
    }
}

impl Drop for Tf32Products {
    fn drop(&mut self) {
        #[cfg(feature = "cuda")]
        candle_core::cuda::set_gemm_reduced_precision_f32(self.before);
    }
}

/// The compute copy of a model in a lower precision (see the module docs).
pub struct ComputeCopy {
    /// The model over the copies, with f32 inputs and outputs.
    pub net: Box<dyn ValueNet>,
    /// The copies of the trainable variables, in the masters' order.
    pub vars: Vec<Var>,
    /// (master, copy) for each trainable variable.
    pairs: Vec<(Var, Var)>,
}

impl ComputeCopy {
    /// Copies of `master`'s trainable variables (in `masters` order) in
    /// `dtype` and the model `cfg` built over them, on `device`.
    pub fn new(
        cfg: &ModelConfig,
        master: &VarMap,
        masters: &[Var],
        dtype: DType,
        device: &Device,
    ) -> candle_core::Result<ComputeCopy> {
        let compute = VarMap::new();
        let mut pairs = Vec::with_capacity(masters.len());
        {
            let m = lock(master);
            let mut c = lock(&compute);
            for (name, var) in m.iter() {
                let copy = if is_running_stat(name) {
                    var.clone()
                } else {
                    // Detached, so an f32 copy is a copy, not the master.
                    Var::from_tensor(&var.as_tensor().to_dtype(dtype)?.detach())?
                };
                c.insert(name.clone(), copy);
            }
            let by_id: std::collections::HashMap<_, _> = m
                .iter()
                .map(|(name, v)| (v.as_tensor().id(), name))
                .collect();
            for v in masters {
                let copy = by_id
                    .get(&v.as_tensor().id())
                    .and_then(|name| c.get(*name))
                    .ok_or_else(|| {
                        candle_core::Error::Msg(
                            "a trainable variable outside the model's variables".into(),
                        )
                    })?;
                pairs.push((v.clone(), copy.clone()));
            }
        }
        let before = lock(&compute).len();
        let inner = build(cfg, VarBuilder::from_varmap(&compute, dtype, device))
            .map_err(candle_core::Error::wrap)?;
        if lock(&compute).len() != before {
            candle_core::bail!("the compute copy's model asked for variables the master lacks");
        }
        Ok(ComputeCopy {
            net: Box::new(CastNet::new(inner, dtype)),
            vars: pairs.iter().map(|(_, c)| c.clone()).collect(),
            pairs,
        })
    }

    /// Every copy takes its master's value (before each step, and after the
    /// masters are restored from a saved run): on CUDA in bf16 all in one
    /// launch, elsewhere a cast per tensor; the same bits either way.
    pub fn refresh(&self) -> candle_core::Result<()> {
        let pairs: Vec<(&Tensor, &Tensor)> = self
            .pairs
            .iter()
            .map(|(master, copy)| (master.as_tensor(), copy.as_tensor()))
            .collect();
        if crate::optim::refresh_bf16_in_one_launch(&pairs)? {
            return Ok(());
        }
        for (master, copy) in &self.pairs {
            copy.set(&master.as_tensor().to_dtype(copy.dtype())?)?;
        }
        Ok(())
    }

    /// `grads` of the copies moved to their masters, widened to the
    /// masters' type and added to any gradient a master has of its own (a
    /// weight penalty taken on the masters).
    pub fn to_masters(&self, grads: &mut GradStore) -> candle_core::Result<()> {
        for (master, copy) in &self.pairs {
            let Some(g) = grads.remove(copy.as_tensor()) else {
                continue;
            };
            let g = g.to_dtype(master.dtype())?;
            let g = match grads.remove(master.as_tensor()) {
                Some(own) => (g + own)?,
                None => g,
            };
            grads.insert(master.as_tensor(), g);
        }
        Ok(())
    }
}

fn lock(vm: &VarMap) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Var>> {
    match vm.data().lock() {
        Ok(d) => d,
        Err(p) => p.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor};

    use super::*;
    use crate::model::{seeded_init, trainable_vars, InputShape};
    use crate::train::trainer::preset;
    use crate::util::seeded_rng;

    /// A model's seeded master variables, and a batch with targets.
    fn setup(name: &str) -> (ModelConfig, VarMap, Box<dyn ValueNet>, Tensor, Tensor) {
        let dev = Device::Cpu;
        let cfg = preset(name, InputShape::new([6, 8, 8], 0)).unwrap();
        let vm = VarMap::new();
        let net = build(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
        seeded_init(&vm, &cfg, &mut seeded_rng(3, 0), &dev).unwrap();
        let mut rng = seeded_rng(4, 0);
        let planes: Vec<f32> = (0..32 * 6 * 64)
            .map(|_| f32::from(rand::RngExt::random_bool(&mut rng, 0.2)))
            .collect();
        let planes = Tensor::from_vec(planes, (32, 6, 8, 8), &dev).unwrap();
        let y: Vec<f32> = (0..32).map(|i| (i % 3) as f32 / 2.0).collect();
        (cfg, vm, net, planes, Tensor::new(y, &dev).unwrap())
    }

    fn loss(net: &dyn ValueNet, planes: &Tensor, y: &Tensor) -> Tensor {
        let v = net.forward(planes, None, true).unwrap().value;
        assert_eq!(v.dtype(), DType::F32);
        (v - y).unwrap().sqr().unwrap().mean_all().unwrap()
    }

    /// The gradients of a step on copies of `dtype`, as the masters receive
    /// them (after `to_masters`), beside the f32 model's own.
    fn gradients(name: &str, dtype: DType) -> Vec<(Vec<f32>, Vec<f32>)> {
        let (cfg, vm, net, planes, y) = setup(name);
        let masters = trainable_vars(&vm);
        let copy = ComputeCopy::new(&cfg, &vm, &masters, dtype, &Device::Cpu).unwrap();
        assert!(copy.vars.iter().all(|v| v.dtype() == dtype));
        let exact = loss(net.as_ref(), &planes, &y).backward().unwrap();
        copy.refresh().unwrap();
        let mut grads = loss(copy.net.as_ref(), &planes, &y).backward().unwrap();
        copy.to_masters(&mut grads).unwrap();
        let flat = |t: &Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        masters
            .iter()
            .zip(&copy.vars)
            .map(|(m, c)| {
                assert!(
                    grads.get(c.as_tensor()).is_none(),
                    "{name}: a copy's gradient left"
                );
                let g = grads.get(m.as_tensor()).unwrap();
                assert_eq!(g.dtype(), DType::F32);
                (flat(g), flat(exact.get(m.as_tensor()).unwrap()))
            })
            .collect()
    }

    /// Copies in f32 run the same step as the model itself: the masters get
    /// its gradients bit for bit (the copies, their refresh, the gradients'
    /// move and the shared batch-norm statistics lose nothing).
    #[test]
    fn f32_copies_hand_the_masters_the_models_own_gradients() {
        for name in ["cnn3", "resnet-tiny", "mlp", "linear"] {
            for (got, want) in gradients(name, DType::F32) {
                assert_eq!(got, want, "{name}");
            }
        }
    }

    /// bf16 copies hand the masters a descent direction of the f32 loss:
    /// close to the f32 gradient in direction and length. Tensor by tensor
    /// the errors are large where gradients cancel (biases, a one-channel
    /// batch norm: at these weights rounding the weights alone to bf16
    /// moves resnet-tiny's tower gradients by about 8%), so the check is on
    /// the whole gradient, which is what a step follows.
    #[test]
    fn bf16_copies_hand_the_masters_a_descent_direction_close_to_f32s() {
        for name in ["cnn3", "resnet-tiny", "mlp"] {
            let (mut dot, mut got2, mut want2) = (0f64, 0f64, 0f64);
            for (got, want) in gradients(name, DType::BF16) {
                for (g, w) in got.iter().zip(&want) {
                    dot += (*g as f64) * (*w as f64);
                    got2 += (*g as f64).powi(2);
                    want2 += (*w as f64).powi(2);
                }
            }
            let cos = dot / (got2 * want2).sqrt();
            let descent = dot / want2;
            assert!(cos > 0.98, "{name}: cosine {cos}");
            assert!(
                (descent - 1.0).abs() < 0.05,
                "{name}: descent ratio {descent}"
            );
        }
    }

    /// `refresh` gives each copy its master's value, rounded to bf16;
    /// running statistics are shared, not copied.
    #[test]
    fn refresh_takes_the_masters_values() {
        let (cfg, vm, _, _, _) = setup("resnet-tiny");
        let masters = trainable_vars(&vm);
        let copy = ComputeCopy::new(&cfg, &vm, &masters, DType::BF16, &Device::Cpu).unwrap();
        for m in &masters {
            m.set(&m.as_tensor().affine(1.5, 0.25).unwrap()).unwrap();
        }
        copy.refresh().unwrap();
        for (m, c) in masters.iter().zip(&copy.vars) {
            let want = m.as_tensor().to_dtype(DType::BF16).unwrap();
            let diff = (c.as_tensor() - want).unwrap().abs().unwrap();
            let worst: f32 = diff
                .to_dtype(DType::F32)
                .unwrap()
                .flatten_all()
                .unwrap()
                .max(0)
                .unwrap()
                .to_scalar()
                .unwrap();
            assert_eq!(worst, 0.0);
        }
        let stats = lock(&vm).iter().filter(|(n, _)| is_running_stat(n)).count();
        assert!(stats > 0);
        assert_eq!(masters.len() + stats, lock(&vm).len());
    }
}
