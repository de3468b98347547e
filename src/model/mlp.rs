//! A fully connected network with a linear value output.
//!
//! Tensor names: `hidden.{i}.weight` `[out, in]`, `hidden.{i}.bias` `[out]`,
//! `out.weight` `[1, last]`, `out.bias` `[1]` (PyTorch's `nn.Linear` layout).

use super::{Activation, ModelError, ValueNet, WeightInit};
use candle_core::{Result, Tensor};
use candle_nn::{Init, Linear, Module, VarBuilder};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MlpConfig {
    pub inputs: usize,
    pub hidden: Vec<usize>,
    pub activation: Activation,
    pub init: WeightInit,
}

impl MlpConfig {
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

pub struct Mlp {
    hidden: Vec<Linear>,
    out: Linear,
    activation: Activation,
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
    pub fn new(cfg: &MlpConfig, vb: VarBuilder) -> std::result::Result<Self, ModelError> {
        if cfg.inputs == 0 {
            return Err(ModelError::Config("mlp needs at least one input".into()));
        }
        if cfg.hidden.contains(&0) {
            return Err(ModelError::Config("a hidden layer has 0 units".into()));
        }
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
        })
    }
}

impl ValueNet for Mlp {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut h = x.clone();
        for l in &self.hidden {
            h = self.activation.forward(&l.forward(&h)?)?;
        }
        self.out.forward(&h)?.squeeze(1)
    }
}
