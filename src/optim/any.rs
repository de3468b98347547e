//! Choosing an optimizer by configuration.

use candle_core::backprop::GradStore;
use candle_core::{Result, Tensor, Var};
use candle_nn::Optimizer;
use serde::{Deserialize, Serialize};

use std::collections::HashMap;

use super::{
    non_negative, AdamW, AdamWConfig, Momentum, MomentumConfig, OptimizerState, RmsProp,
    RmsPropConfig,
};

/// Which optimizer to train with, and its hyper-parameters.
///
/// Serialized as an internally tagged object: the `"kind"` field names the
/// optimizer and the other fields are its config's (missing ones take the
/// config's defaults, unknown ones are errors):
///
/// | `kind` | variant | fields |
/// | --- | --- | --- |
/// | `"sgd"` | [`OptimizerConfig::Sgd`] | `lr` (required) |
/// | `"momentum"` | [`OptimizerConfig::Momentum`] | [`MomentumConfig`]: `lr`, `momentum`, `dampening`, `weight_decay`, `nesterov` |
/// | `"rmsprop"` (or `"rms_prop"`) | [`OptimizerConfig::RmsProp`] | [`RmsPropConfig`]: `lr`, `alpha`, `eps`, `weight_decay`, `momentum`, `centered` |
/// | `"adamw"` (or `"adam_w"`) | [`OptimizerConfig::AdamW`] | [`AdamWConfig`]: `lr`, `beta1`, `beta2`, `eps`, `weight_decay` |
///
/// Nesterov momentum is not a variant of its own: it is
/// `{"kind": "momentum", "nesterov": true, ...}`.
///
/// ```
/// use plies::optim::{MomentumConfig, OptimizerConfig};
/// let cfg: OptimizerConfig =
///     serde_json::from_str(r#"{"kind": "momentum", "lr": 0.1, "nesterov": true}"#).unwrap();
/// assert_eq!(
///     cfg,
///     OptimizerConfig::Momentum(MomentumConfig { lr: 0.1, nesterov: true, ..Default::default() })
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OptimizerConfig {
    /// candle-nn's plain SGD: `p -= lr * g`.
    Sgd {
        /// Learning rate.
        lr: f64,
    },
    /// SGD with momentum (Nesterov when `nesterov` is set), as
    /// `torch.optim.SGD`.
    Momentum(MomentumConfig),
    /// RMSProp, as `torch.optim.RMSprop`.
    #[serde(rename = "rmsprop", alias = "rms_prop")]
    RmsProp(RmsPropConfig),
    /// candle-nn's AdamW, as `torch.optim.AdamW`.
    #[serde(rename = "adamw", alias = "adam_w")]
    AdamW(AdamWConfig),
}

impl Default for OptimizerConfig {
    /// AdamW with candle's defaults.
    fn default() -> Self {
        Self::AdamW(AdamWConfig::default())
    }
}

impl OptimizerConfig {
    /// The learning rate this config starts with.
    pub fn lr(&self) -> f64 {
        match self {
            Self::Sgd { lr } => *lr,
            Self::Momentum(c) => c.lr,
            Self::RmsProp(c) => c.lr,
            Self::AdamW(c) => c.lr,
        }
    }

    /// The same config with another learning rate.
    pub fn with_lr(mut self, new_lr: f64) -> Self {
        match &mut self {
            Self::Sgd { lr } => *lr = new_lr,
            Self::Momentum(c) => c.lr = new_lr,
            Self::RmsProp(c) => c.lr = new_lr,
            Self::AdamW(c) => c.lr = new_lr,
        }
        self
    }

    /// Values the optimizer keeps per parameter (momentum buffers, moment
    /// estimates), for sizing a run's memory.
    pub fn state_per_param(&self) -> u64 {
        match self {
            Self::Sgd { .. } => 0,
            Self::Momentum(c) => u64::from(c.momentum != 0.0),
            Self::RmsProp(c) => 1 + u64::from(c.momentum != 0.0) + u64::from(c.centered),
            Self::AdamW(_) => 2,
        }
    }

    /// The `"kind"` tag this config serializes with.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Sgd { .. } => "sgd",
            Self::Momentum(_) => "momentum",
            Self::RmsProp(_) => "rmsprop",
            Self::AdamW(_) => "adamw",
        }
    }

    /// Checks the hyper-parameters (see each config's `validate`).
    pub fn validate(&self) -> std::result::Result<(), super::OptimError> {
        match self {
            Self::Sgd { lr } => non_negative("SGD", "lr", *lr),
            Self::Momentum(c) => c.validate(),
            Self::RmsProp(c) => c.validate(),
            Self::AdamW(c) => c.validate(),
        }
    }
}

/// Any of the optimizers an [`OptimizerConfig`] can name, behind one type.
///
/// ```
/// # use candle_core::{DType, Device};
/// # use candle_nn::VarMap;
/// # use plies::optim::{AnyOptimizer, OptimizerConfig};
/// # fn main() -> candle_core::Result<()> {
/// let varmap = VarMap::new();
/// let _ = varmap.get((2, 2), "w", candle_nn::Init::Const(1.0), DType::F32, &Device::Cpu)?;
/// let mut opt = AnyOptimizer::new(varmap.all_vars(), &OptimizerConfig::Sgd { lr: 0.1 })?;
/// assert_eq!(opt.learning_rate(), 0.1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub enum AnyOptimizer {
    /// candle-nn's plain SGD.
    Sgd(candle_nn::SGD),
    /// [`Momentum`] SGD, Nesterov included.
    Momentum(Momentum),
    /// [`RmsProp`].
    RmsProp(RmsProp),
    /// [`AdamW`] (the same steps as candle-nn's).
    AdamW(AdamW),
}

impl AnyOptimizer {
    /// Builds the optimizer `cfg` names over `vars` (non-float vars are
    /// ignored). Invalid hyper-parameters are errors.
    pub fn new(vars: Vec<Var>, cfg: &OptimizerConfig) -> Result<Self> {
        cfg.validate()?;
        Ok(match *cfg {
            OptimizerConfig::Sgd { lr } => Self::Sgd(candle_nn::SGD::new(vars, lr)?),
            OptimizerConfig::Momentum(c) => Self::Momentum(Momentum::new(vars, c)?),
            OptimizerConfig::RmsProp(c) => Self::RmsProp(RmsProp::new(vars, c)?),
            OptimizerConfig::AdamW(c) => Self::AdamW(AdamW::new(vars, c)?),
        })
    }

    /// Applies one update from gradients already computed.
    pub fn step(&mut self, grads: &GradStore) -> Result<()> {
        match self {
            Self::Sgd(o) => o.step(grads),
            Self::Momentum(o) => o.step(grads),
            Self::RmsProp(o) => o.step(grads),
            Self::AdamW(o) => o.step(grads),
        }
    }

    /// Back-propagates `loss` and applies one update.
    pub fn backward_step(&mut self, loss: &Tensor) -> Result<()> {
        let grads = loss.backward()?;
        self.step(&grads)
    }

    /// The current learning rate.
    pub fn learning_rate(&self) -> f64 {
        match self {
            Self::Sgd(o) => o.learning_rate(),
            Self::Momentum(o) => o.learning_rate(),
            Self::RmsProp(o) => o.learning_rate(),
            Self::AdamW(o) => o.learning_rate(),
        }
    }

    /// Sets the learning rate used by the next steps (state is kept).
    pub fn set_learning_rate(&mut self, lr: f64) {
        match self {
            Self::Sgd(o) => o.set_learning_rate(lr),
            Self::Momentum(o) => o.set_learning_rate(lr),
            Self::RmsProp(o) => o.set_learning_rate(lr),
            Self::AdamW(o) => o.set_learning_rate(lr),
        }
    }

    /// The optimizer's state as named tensors (empty for plain SGD), for
    /// [`AnyOptimizer::load_state`] after a restart. Together with the
    /// weights and the learning rate it determines the next steps exactly.
    pub fn state(&self) -> Result<OptimizerState> {
        match self {
            Self::Sgd(_) => Ok(Vec::new()),
            Self::Momentum(o) => o.state(),
            Self::RmsProp(o) => o.state(),
            Self::AdamW(o) => o.state(),
        }
    }

    /// Restores the state [`AnyOptimizer::state`] gave, into an optimizer
    /// built from the same config over the same vars. A tensor that is
    /// missing, unexpected, or of another shape or dtype is an error naming
    /// it, and nothing changes then.
    pub fn load_state(&mut self, state: &HashMap<String, Tensor>) -> Result<()> {
        match self {
            Self::Sgd(_) => match state.keys().min() {
                None => Ok(()),
                Some(name) => Err(super::OptimError::State {
                    name: name.clone(),
                    why: "plain SGD has no state".into(),
                }
                .into()),
            },
            Self::Momentum(o) => o.load_state(state),
            Self::RmsProp(o) => o.load_state(state),
            Self::AdamW(o) => o.load_state(state),
        }
    }

    /// The `"kind"` of config this optimizer was built from.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Sgd(_) => "sgd",
            Self::Momentum(_) => "momentum",
            Self::RmsProp(_) => "rmsprop",
            Self::AdamW(_) => "adamw",
        }
    }
}

impl Optimizer for AnyOptimizer {
    type Config = OptimizerConfig;

    fn new(vars: Vec<Var>, config: OptimizerConfig) -> Result<Self> {
        AnyOptimizer::new(vars, &config)
    }

    fn step(&mut self, grads: &GradStore) -> Result<()> {
        AnyOptimizer::step(self, grads)
    }

    fn learning_rate(&self) -> f64 {
        AnyOptimizer::learning_rate(self)
    }

    fn set_learning_rate(&mut self, lr: f64) {
        AnyOptimizer::set_learning_rate(self, lr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device};

    #[test]
    fn serde_tags_and_defaults() {
        let cases = [
            (
                r#"{"kind":"sgd","lr":0.5}"#,
                OptimizerConfig::Sgd { lr: 0.5 },
            ),
            (
                r#"{"kind":"momentum","nesterov":true}"#,
                OptimizerConfig::Momentum(MomentumConfig {
                    nesterov: true,
                    ..Default::default()
                }),
            ),
            (
                r#"{"kind":"rmsprop","centered":true}"#,
                OptimizerConfig::RmsProp(RmsPropConfig {
                    centered: true,
                    ..Default::default()
                }),
            ),
            (
                r#"{"kind":"rms_prop"}"#,
                OptimizerConfig::RmsProp(RmsPropConfig::default()),
            ),
            (
                r#"{"kind":"adamw","lr":0.003}"#,
                OptimizerConfig::AdamW(AdamWConfig {
                    lr: 0.003,
                    ..Default::default()
                }),
            ),
        ];
        for (json, want) in cases {
            let got: OptimizerConfig = serde_json::from_str(json).unwrap();
            assert_eq!(got, want, "{json}");
            let back: OptimizerConfig =
                serde_json::from_str(&serde_json::to_string(&got).unwrap()).unwrap();
            assert_eq!(back, want);
            assert!(serde_json::to_string(&got)
                .unwrap()
                .contains(&format!(r#""kind":"{}""#, got.kind())));
        }
        for bad in [
            r#"{"kind":"adam"}"#,
            r#"{"kind":"momentum","momentun":0.5}"#,
            r#"{"kind":"sgd"}"#,
            r#"{"lr":0.1}"#,
        ] {
            assert!(
                serde_json::from_str::<OptimizerConfig>(bad).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn every_kind_steps_and_sets_lr() -> Result<()> {
        let cfgs = [
            OptimizerConfig::Sgd { lr: 0.1 },
            OptimizerConfig::Momentum(MomentumConfig::default()),
            OptimizerConfig::RmsProp(RmsPropConfig::default()),
            OptimizerConfig::AdamW(AdamWConfig::default()),
        ];
        for cfg in cfgs {
            let w = Var::ones((2, 3), DType::F32, &Device::Cpu)?;
            let mut opt = AnyOptimizer::new(vec![w.clone()], &cfg)?;
            assert_eq!(opt.kind(), cfg.kind());
            assert_eq!(opt.learning_rate(), cfg.lr());
            opt.set_learning_rate(0.05);
            assert_eq!(opt.learning_rate(), 0.05);
            opt.backward_step(&w.as_tensor().sqr()?.sum_all()?)?;
            let sum = w.as_tensor().sum_all()?.to_scalar::<f32>()?;
            assert!(sum < 6.0, "{cfg:?}: {sum}");
        }
        Ok(())
    }

    /// A run interrupted after 3 steps, its weights and optimizer state
    /// saved through safetensors and loaded into fresh vars and a fresh
    /// optimizer, takes the same next steps bit for bit.
    #[test]
    fn state_round_trip_continues_exactly() -> Result<()> {
        let cfgs = [
            OptimizerConfig::Sgd { lr: 0.1 },
            OptimizerConfig::Momentum(MomentumConfig {
                nesterov: true,
                weight_decay: 0.01,
                ..Default::default()
            }),
            OptimizerConfig::RmsProp(RmsPropConfig {
                centered: true,
                momentum: 0.5,
                ..Default::default()
            }),
            OptimizerConfig::AdamW(AdamWConfig {
                lr: 0.01,
                ..Default::default()
            }),
        ];
        let dir = std::env::temp_dir().join(format!("plies-optim-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let loss = |w: &Var, k: f64| -> Result<Tensor> {
            (w.as_tensor().sqr()? * k)?.sum_all()? + w.as_tensor().sin()?.sum_all()?
        };
        for cfg in cfgs {
            let init = Tensor::new(&[[0.3f32, -1.2], [2.0, 0.7]], &Device::Cpu)?;
            let w = Var::from_tensor(&init)?;
            let mut opt = AnyOptimizer::new(vec![w.clone()], &cfg)?;
            for k in 0..3 {
                opt.backward_step(&loss(&w, 1.0 + k as f64)?)?;
            }
            let path = dir.join(format!("{}.safetensors", cfg.kind()));
            let st: HashMap<String, Tensor> = opt.state()?.into_iter().collect();
            if !st.is_empty() {
                candle_core::safetensors::save(&st, &path)?;
            }
            let wpath = dir.join("w.safetensors");
            candle_core::safetensors::save(
                &HashMap::from([("w".to_string(), w.as_tensor().copy()?)]),
                &wpath,
            )?;
            for k in 3..6 {
                opt.backward_step(&loss(&w, 1.0 + k as f64)?)?;
            }
            let straight = w.flatten_all()?.to_vec1::<f32>()?;

            let w2 = Var::from_tensor(&candle_core::safetensors::load(&wpath, &Device::Cpu)?["w"])?;
            let mut opt2 = AnyOptimizer::new(vec![w2.clone()], &cfg)?;
            let loaded = if st.is_empty() {
                HashMap::new()
            } else {
                candle_core::safetensors::load(&path, &Device::Cpu)?
            };
            opt2.load_state(&loaded)?;
            for k in 3..6 {
                opt2.backward_step(&loss(&w2, 1.0 + k as f64)?)?;
            }
            assert_eq!(straight, w2.flatten_all()?.to_vec1::<f32>()?, "{cfg:?}");

            // Without the state, momentum-like optimizers diverge.
            if !st.is_empty() {
                let w3 =
                    Var::from_tensor(&candle_core::safetensors::load(&wpath, &Device::Cpu)?["w"])?;
                let mut opt3 = AnyOptimizer::new(vec![w3.clone()], &cfg)?;
                for k in 3..6 {
                    opt3.backward_step(&loss(&w3, 1.0 + k as f64)?)?;
                }
                assert_ne!(straight, w3.flatten_all()?.to_vec1::<f32>()?, "{cfg:?}");
            }
        }
        std::fs::remove_dir_all(&dir)?;
        Ok(())
    }

    #[test]
    fn mismatched_state_is_refused_naming_the_tensor() -> Result<()> {
        let w = Var::ones((2, 3), DType::F32, &Device::Cpu)?;
        let cfg = OptimizerConfig::AdamW(AdamWConfig::default());
        let mut opt = AnyOptimizer::new(vec![w.clone()], &cfg)?;
        opt.backward_step(&w.as_tensor().sum_all()?)?;
        let mut st: HashMap<String, Tensor> = opt.state()?.into_iter().collect();
        st.insert(
            "0.exp_avg".into(),
            Tensor::zeros((3, 2), DType::F32, &Device::Cpu)?,
        );
        let err = opt.load_state(&st).unwrap_err().to_string();
        assert!(err.contains("0.exp_avg") && err.contains("shape"), "{err}");
        let mut rms = AnyOptimizer::new(
            vec![w.clone()],
            &OptimizerConfig::RmsProp(RmsPropConfig::default()),
        )?;
        let err = rms.load_state(&st).unwrap_err().to_string();
        assert!(err.contains("square_avg") || err.contains("step"), "{err}");
        Ok(())
    }

    #[test]
    fn invalid_config_is_an_error() {
        assert!(AnyOptimizer::new(vec![], &OptimizerConfig::Sgd { lr: f64::NAN }).is_err());
        let cfg = OptimizerConfig::Momentum(MomentumConfig {
            nesterov: true,
            dampening: 0.5,
            ..Default::default()
        });
        let err = AnyOptimizer::new(vec![], &cfg).unwrap_err();
        assert!(err.to_string().contains("nesterov"), "{err}");
    }
}
