//! The model being trained: its graph and variables drawn from the seed
//! (or the starting weights), and the optimizer over them.

use candle_core::{DType, Device, Var};
use candle_nn::{VarBuilder, VarMap};

use super::weights::restore;
use super::{FitConfig, FitError};
use crate::model::{build, seeded_init, trainable_vars, ValueNet};
use crate::optim::AnyOptimizer;
use crate::train::regularize::penalized_vars;
use crate::util::seeded_rng;

/// A model with its variables.
pub(super) struct Trainee {
    pub varmap: VarMap,
    pub net: Box<dyn ValueNet>,
    /// The variables the optimizer steps.
    pub tvars: Vec<Var>,
    /// The variables the l1 and l2 penalties weigh.
    pub pvars: Vec<Var>,
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
        Ok((
            Trainee {
                varmap,
                net,
                tvars,
                pvars,
            },
            opt,
        ))
    }
}
