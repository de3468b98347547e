//! A fully connected network on the flattened input (planes, then globals).
//!
//! ```text
//! planes [B, C, H, W] -> flatten [B, C*H*W] ++ globals [B, G] -> [B, inputs]
//!   -> hidden.0: Linear -> activation (-> dropout when training) -> ...
//!   -> out: Linear to 1 -> output activation (default identity)     [B]
//! ```
//!
//! Tensor names (PyTorch's `nn.Linear` layout): `hidden.{i}.weight`
//! `[out, in]`, `hidden.{i}.bias` `[out]`, `out.weight` `[1, last]`,
//! `out.bias` `[1]`.
//!
//! [`MlpConfig`] is the network's shape alone, shared with the plain-Rust
//! [`super::NativeMlp`]; [`MlpNetConfig`] (what `ModelConfig::Mlp` holds)
//! adds dropout and the output activation.

use super::dropout::Dropout;
use super::init::{fan_in_bound, Draw, TensorInit};
use super::io::{Batch, ModelInput, ModelIo, ModelOutput, OutputActivation};
use super::size::{add, mul, ParamCount, Sizes};
use super::{Activation, ModelError, ValueNet, WeightInit};
use candle_core::{Result, Tensor};
use candle_nn::{Init, Linear, Module, VarBuilder};
use serde::{Deserialize, Serialize};

/// The shape of an MLP: inputs, hidden layers, activation, first weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MlpConfig {
    pub inputs: usize,
    pub hidden: Vec<usize>,
    pub activation: Activation,
    pub init: WeightInit,
}

impl MlpConfig {
    /// The size fields (`inputs`, `hidden[i]`) and the parameter count
    /// they give.
    pub(crate) fn sizes(&self) -> Sizes {
        let mut fields = vec![("inputs".to_string(), self.inputs)];
        fields.extend(
            self.hidden
                .iter()
                .enumerate()
                .map(|(i, &h)| (format!("hidden[{i}]"), h)),
        );
        Sizes::new("mlp", fields, |v| {
            let (mut fan_in, mut n) = (v[0], Some(0));
            for &h in &v[1..] {
                n = add(&[n, mul(&[h, fan_in]), Some(h)]);
                fan_in = h;
            }
            Some(ParamCount {
                trainable: add(&[n, Some(fan_in), Some(1)])?,
                running: 0,
            })
        })
    }

    pub fn expected_tensors(&self) -> Vec<(String, Vec<usize>)> {
        let mut v = Vec::new();
        let mut fan_in = self.inputs;
        for (i, &h) in self.hidden.iter().enumerate() {
            v.push((format!("hidden.{i}.weight"), vec![h, fan_in]));
            v.push((format!("hidden.{i}.bias"), vec![h]));
            fan_in = h;
        }
        v.push(("out.weight".into(), vec![1, fan_in]));
        v.push(("out.bias".into(), vec![1]));
        v
    }
}

/// `ModelConfig::Mlp`: an [`MlpConfig`] plus training-time dropout and the
/// output activation. `inputs` is the flattened `C*H*W + G` (the MLP does
/// not need the board's shape); the JSON of older checkpoints, without
/// `dropout` and `output`, reads as dropout 0 and identity output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MlpNetConfig {
    pub inputs: usize,
    pub hidden: Vec<usize>,
    pub activation: Activation,
    pub init: WeightInit,
    /// Probability of zeroing a hidden unit while training (default 0).
    #[serde(default)]
    pub dropout: f64,
    /// Default identity.
    #[serde(default)]
    pub output: OutputActivation,
}

impl From<MlpConfig> for MlpNetConfig {
    fn from(c: MlpConfig) -> Self {
        MlpNetConfig {
            inputs: c.inputs,
            hidden: c.hidden,
            activation: c.activation,
            init: c.init,
            dropout: 0.0,
            output: OutputActivation::Identity,
        }
    }
}

impl MlpNetConfig {
    /// The network's shape (what [`super::NativeMlp`] reads).
    pub fn shape(&self) -> MlpConfig {
        MlpConfig {
            inputs: self.inputs,
            hidden: self.hidden.clone(),
            activation: self.activation,
            init: self.init,
        }
    }

    pub fn expected_tensors(&self) -> Vec<(String, Vec<usize>)> {
        self.shape().expected_tensors()
    }

    pub fn validate(&self) -> std::result::Result<(), ModelError> {
        if self.inputs == 0 {
            return Err(ModelError::field("mlp", "inputs", "must be > 0"));
        }
        if let Some(i) = self.hidden.iter().position(|&h| h == 0) {
            return Err(ModelError::field(
                "mlp",
                &format!("hidden[{i}]"),
                "has 0 units; every layer needs at least 1",
            ));
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(ModelError::field(
                "mlp",
                "dropout",
                format!("must be in [0, 1), got {}", self.dropout),
            ));
        }
        if let Activation::Elliott { beta } = self.activation {
            if !(beta.is_finite() && beta > 0.0) {
                return Err(ModelError::field(
                    "mlp",
                    "activation.beta",
                    format!("must be a finite number > 0, got {beta}"),
                ));
            }
        }
        if let WeightInit::Uniform { a } = self.init {
            if !(a.is_finite() && a >= 0.0) {
                return Err(ModelError::field(
                    "mlp",
                    "init.a",
                    format!("must be a finite number >= 0, got {a}"),
                ));
            }
        }
        self.shape().sizes().check_weights()
    }

    pub fn init_plan(&self) -> Vec<TensorInit> {
        self.expected_tensors()
            .into_iter()
            .map(|(name, shape)| {
                let layer = name.rsplit_once('.').map(|(l, _)| l).unwrap_or(&name);
                let fan_in = self
                    .expected_tensors()
                    .iter()
                    .find(|(n, _)| n == &format!("{layer}.weight"))
                    .and_then(|(_, s)| s.get(1).copied())
                    .unwrap_or(1);
                let a = match self.init {
                    WeightInit::Uniform { a } => a as f32,
                    WeightInit::FanIn => fan_in_bound(fan_in),
                };
                TensorInit::new(name, shape, Draw::Uniform(a))
            })
            .collect()
    }
}

pub struct Mlp {
    hidden: Vec<Linear>,
    out: Linear,
    activation: Activation,
    /// Seeded dropout after each hidden layer ([`super::dropout`]).
    drops: Vec<Dropout>,
    io: ModelIo,
}

fn init_for(init: WeightInit, fan_in: usize) -> Init {
    let a = match init {
        WeightInit::Uniform { a } => a,
        WeightInit::FanIn => 1.0 / (fan_in as f64).sqrt(),
    };
    Init::Uniform { lo: -a, up: a }
}

fn layer(fan_in: usize, fan_out: usize, init: WeightInit, vb: VarBuilder) -> Result<Linear> {
    let i = init_for(init, fan_in);
    let w = vb.get_with_hints((fan_out, fan_in), "weight", i)?;
    let b = vb.get_with_hints(fan_out, "bias", i)?;
    Ok(Linear::new(w, Some(b)))
}

impl Mlp {
    pub fn new(cfg: &MlpNetConfig, vb: VarBuilder) -> std::result::Result<Self, ModelError> {
        cfg.validate()?;
        let mut hidden = Vec::new();
        let mut fan_in = cfg.inputs;
        for (i, &h) in cfg.hidden.iter().enumerate() {
            hidden.push(layer(fan_in, h, cfg.init, vb.pp(format!("hidden.{i}")))?);
            fan_in = h;
        }
        let out = layer(fan_in, 1, cfg.init, vb.pp("out"))?;
        Ok(Mlp {
            hidden,
            out,
            activation: cfg.activation,
            drops: (0..cfg.hidden.len())
                .map(|i| Dropout::new(cfg.dropout, &format!("hidden.{i}")))
                .collect(),
            io: ModelIo::new("mlp", ModelInput::Features(cfg.inputs), cfg.output),
        })
    }

    /// Values `[B]` of flattened inputs `[B, inputs]`.
    pub fn forward_flat(&self, x: &Tensor, train: bool) -> Result<Tensor> {
        let mut h = x.clone();
        for (l, d) in self.hidden.iter().zip(&self.drops) {
            h = self.activation.forward(&l.forward(&h)?)?;
            h = d.forward(&h, train)?;
        }
        self.io.output.forward(&self.out.forward(&h)?.squeeze(1)?)
    }
}

impl ValueNet for Mlp {
    fn io(&self) -> &ModelIo {
        &self.io
    }

    /// Planes of any rank >= 2 are flattened from dimension 1
    /// ([`ModelInput::Features`]).
    fn forward_checked(&self, batch: Batch<'_>) -> Result<ModelOutput> {
        let x = batch.planes.flatten_from(1)?;
        let x = match batch.globals {
            Some(g) if g.dim(1)? > 0 => Tensor::cat(&[&x, &g.to_dtype(x.dtype())?], 1)?,
            _ => x,
        };
        Ok(ModelOutput {
            value: self.forward_flat(&x, batch.train)?,
            policy: None,
        })
    }
}
