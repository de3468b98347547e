//! `ModelConfig::Cnn3`: [`Cnn3`] (Zaffetti's three-layer CNN, see
//! `cnn3.rs`) behind the [`ValueNet`] interface.
//!
//! The config is the CNN's own fields plus the input geometry:
//! `{"kind": "cnn3", "input": {"planes": [6, 8, 8], "globals": 0},
//! "filters": 48, "kernel": [4, 4], "hidden": 384, "output": "sigmoid"}`.
//! The CNN reads planes only: `input.globals` must be 0. Its output
//! activation is the CNN's own `output` field (sigmoid or relu). Tensor
//! names are [`Cnn3`]'s: `conv.weight` `[F, C, kh, kw]`, `conv.bias` `[F]`,
//! `hidden.weight`, `hidden.bias`, `out.weight` `[1, hidden]`, `out.bias` `[1]`.

use super::init::{fan_in_bound, Draw, TensorInit};
use super::io::{Batch, InputShape, ModelInput, ModelIo, ModelOutput, OutputActivation};
use super::size::{add, input_fields, mul, ParamCount, Sizes};
use super::{Cnn3, Cnn3Config, ModelError, ValueNet};
use candle_core::Result;
use candle_nn::VarBuilder;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cnn3NetConfig {
    pub input: InputShape,
    #[serde(flatten)]
    pub net: Cnn3Config,
}

impl Cnn3NetConfig {
    pub fn new(input: InputShape, net: Cnn3Config) -> Self {
        Cnn3NetConfig { input, net }
    }

    pub fn validate(&self) -> std::result::Result<(), ModelError> {
        self.input.validate_planes_only("cnn3")?;
        self.net.validate(self.input.planes)?;
        self.sizes().check_weights()
    }

    /// The size fields and the parameter count they give.
    pub(crate) fn sizes(&self) -> Sizes {
        let mut fields = input_fields(&self.input);
        fields.truncate(3);
        fields.extend([
            ("filters".to_string(), self.net.filters),
            ("kernel[0]".into(), self.net.kernel[0]),
            ("kernel[1]".into(), self.net.kernel[1]),
            ("hidden".into(), self.net.hidden),
        ]);
        Sizes::new("cnn3", fields, |v| {
            let &[c, h, w, f, kh, kw, hidden] = v else {
                return None;
            };
            let (oh, ow) = ((h + 1).saturating_sub(kh), (w + 1).saturating_sub(kw));
            Some(ParamCount {
                trainable: add(&[
                    mul(&[f, c, kh, kw]),
                    Some(f),
                    mul(&[hidden, f, oh, ow]),
                    mul(&[hidden, 2]),
                    Some(1),
                ])?,
                running: 0,
            })
        })
    }

    pub fn expected_tensors(&self) -> Vec<(String, Vec<usize>)> {
        self.net.expected_tensors(self.input.planes)
    }

    /// PyTorch's default bounds, `+-1/sqrt(fan_in)` per layer.
    pub fn init_plan(&self) -> Vec<TensorInit> {
        let [c, _, _] = self.input.planes;
        let [kh, kw] = self.net.kernel;
        let [f, oh, ow] = self.net.conv_output(self.input.planes);
        self.expected_tensors()
            .into_iter()
            .map(|(name, shape)| {
                let fan_in = match name.split('.').next() {
                    Some("conv") => c * kh * kw,
                    Some("hidden") => f * oh * ow,
                    _ => self.net.hidden,
                };
                TensorInit::new(name, shape, Draw::Uniform(fan_in_bound(fan_in)))
            })
            .collect()
    }
}

/// The adapter; see the module docs.
pub struct Cnn3Net {
    net: Cnn3,
    io: ModelIo,
}

impl Cnn3Net {
    pub fn new(cfg: &Cnn3NetConfig, vb: VarBuilder) -> std::result::Result<Self, ModelError> {
        cfg.validate()?;
        Ok(Cnn3Net {
            net: Cnn3::new(&cfg.net, cfg.input.planes, vb)?,
            io: ModelIo::new(
                "cnn3",
                ModelInput::planes(cfg.input),
                OutputActivation::Sigmoid,
            ),
        })
    }
}

impl ValueNet for Cnn3Net {
    fn io(&self) -> &ModelIo {
        &self.io
    }

    fn forward_checked(&self, x: Batch<'_>) -> Result<ModelOutput> {
        Ok(ModelOutput {
            value: self.net.forward_t(x.planes, x.train)?.squeeze(1)?,
            policy: None,
        })
    }
}
