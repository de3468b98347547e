//! The model being trained: its graph and variables drawn from the seed
//! (or the starting weights), and the optimizer over them.

use candle_core::backprop::GradStore;
use candle_core::{DType, Device, Var};
use candle_nn::{VarBuilder, VarMap};

use super::weights::restore;
use super::{FitConfig, FitError};
use crate::infer::plan::Precision;
use crate::model::{build, seeded_init, trainable_vars, ValueNet};
use crate::optim::AnyOptimizer;
use crate::train::mixed_precision::ComputeCopy;
use crate::train::regularize::penalized_vars;
use crate::util::seeded_rng;

/// A model with its variables: the f32 masters (what the optimizer steps,
/// checkpoints save and validation runs) and, in bf16, the compute copy
/// the training steps run on ([`crate::train::mixed_precision`]).
pub(super) struct Trainee {
    pub varmap: VarMap,
    pub net: Box<dyn ValueNet>,
    /// The variables the optimizer steps.
    pub tvars: Vec<Var>,
    /// The variables the l1 and l2 penalties weigh.
    pub pvars: Vec<Var>,
    compute: Option<ComputeCopy>,
}

impl Trainee {
    /// Builds `cfg.model` on `device` with its seeded starting weights, and
    /// the optimizer of `cfg`.
    pub fn build(cfg: &FitConfig, device: &Device) -> Result<(Trainee, AnyOptimizer), FitError> {
        let varmap = VarMap::new();
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, device);
        let net = build(&cfg.model, vb)?;
        seeded_init(
            &varmap,
            &cfg.model,
            &mut seeded_rng(cfg.seed, 0x6d6f_6465),
            device,
        )?;
        if let Some(w) = &cfg.init_weights {
            restore(&varmap, w, &cfg.model_source)?;
        }
        let tvars: Vec<Var> = trainable_vars(&varmap);
        let pvars = penalized_vars(&varmap);
        let opt = AnyOptimizer::new(tvars.clone(), &cfg.optimizer)?;
        let compute = match cfg.precision {
            Precision::Bf16 => Some(ComputeCopy::new(
                &cfg.model,
                &varmap,
                &tvars,
                DType::BF16,
                device,
            )?),
            Precision::F32 | Precision::Tf32 => None,
        };
        Ok((
            Trainee {
                varmap,
                net,
                tvars,
                pvars,
                compute,
            },
            opt,
        ))
    }

    /// The model a training step runs.
    pub fn step_net(&self) -> &dyn ValueNet {
        match &self.compute {
            Some(c) => c.net.as_ref(),
            None => self.net.as_ref(),
        }
    }

    /// The variables a step's gradients are taken on.
    pub fn step_vars(&self) -> &[Var] {
        match &self.compute {
            Some(c) => &c.vars,
            None => &self.tvars,
        }
    }

    /// Before a step: the compute copy takes the masters' values.
    pub fn begin_step(&self) -> candle_core::Result<()> {
        match &self.compute {
            Some(c) => c.refresh(),
            None => Ok(()),
        }
    }

    /// After a step's backward pass: its gradients as the optimizer reads
    /// them, on the f32 masters.
    pub fn to_masters(&self, grads: &mut GradStore) -> candle_core::Result<()> {
        match &self.compute {
            Some(c) => c.to_masters(grads),
            None => Ok(()),
        }
    }
}
