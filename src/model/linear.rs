//! A linear evaluation: one weight per (plane, square), Bonanza-style
//! piece-square tables when the planes are one per piece type.
//!
//! ```text
//! value = output( sum_{c,h,w} planes[c,h,w] * psq[c,h,w] + globals . g + bias )
//! ```
//!
//! Tensor names:
//!
//! | name | shape |
//! | --- | --- |
//! | `psq.weight` | `[C, H, W]` |
//! | `psq.bias` | `[1]` |
//! | `globals.weight` | `[G]` (only when `G > 0`) |
//!
//! For `arimaa-6x8x8` (planes rabbit, cat, dog, horse, camel, elephant, +1
//! own, -1 opponent) that is 384 piece-square weights.
//! [`LinearConfig::arimaa_material`] starts them from Bonanza's material
//! values (elephant 20000, camel 5000, horse 3000, dog 1800, cat 1500,
//! rabbit 1000) times 1/5000, so a rabbit ahead is a logit of 0.2 (a
//! sigmoid value of 0.55) and a camel ahead 1.0 (0.73).

use super::init::{fan_in_bound, Draw, TensorInit};
use super::io::{Batch, InputShape, ModelInput, ModelIo, ModelOutput, OutputActivation};
use super::size::{add, input_fields, mul, ParamCount, Sizes};
use super::{ModelError, ValueNet};
use candle_core::{Result, Tensor};
use candle_nn::{Init, VarBuilder};
use serde::{Deserialize, Serialize};

/// Material values of Arimaa's pieces in `arimaa-6x8x8` plane order
/// (rabbit, cat, dog, horse, camel, elephant), as the Bonanza study uses them.
pub const ARIMAA_MATERIAL: [f64; 6] = [1000.0, 1500.0, 1800.0, 3000.0, 5000.0, 20000.0];

/// How a linear model's weights start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LinearInit {
    /// Uniform in `+-1/sqrt(C*H*W + G)`.
    #[default]
    FanIn,
    /// All zero (the value of every position is `output(0)`).
    Zeros,
    /// Every square of plane `c` starts at `values[c] * scale`; bias and
    /// globals start at 0.
    Material { values: Vec<f64>, scale: f64 },
}

fn sigmoid() -> OutputActivation {
    OutputActivation::Sigmoid
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinearConfig {
    pub input: InputShape,
    /// Default sigmoid.
    #[serde(default = "sigmoid")]
    pub output: OutputActivation,
    #[serde(default)]
    pub init: LinearInit,
}

impl LinearConfig {
    /// Fan-in initialised piece-square weights with a sigmoid output.
    pub fn new(input: InputShape) -> Self {
        LinearConfig {
            input,
            output: OutputActivation::Sigmoid,
            init: LinearInit::FanIn,
        }
    }

    /// The `arimaa-6x8x8` piece-square model, starting from material values.
    pub fn arimaa_material() -> Self {
        LinearConfig {
            input: InputShape::new([6, 8, 8], 0),
            output: OutputActivation::Sigmoid,
            init: LinearInit::Material {
                values: ARIMAA_MATERIAL.to_vec(),
                scale: 1.0 / 5000.0,
            },
        }
    }

    pub fn validate(&self) -> std::result::Result<(), ModelError> {
        self.input.validate("linear")?;
        if let LinearInit::Material { values, scale } = &self.init {
            if values.len() != self.input.planes[0] {
                return Err(ModelError::field(
                    "linear",
                    "init.values",
                    format!(
                        "needs one value per plane ({}), got {}",
                        self.input.planes[0],
                        values.len()
                    ),
                ));
            }
            if !scale.is_finite() || values.iter().any(|v| !v.is_finite()) {
                return Err(ModelError::field(
                    "linear",
                    "init",
                    "values and scale must be finite numbers",
                ));
            }
        }
        self.sizes().check_weights()
    }

    /// The size fields and the parameter count they give.
    pub(crate) fn sizes(&self) -> Sizes {
        Sizes::new("linear", input_fields(&self.input), |v| {
            Some(ParamCount {
                trainable: add(&[mul(&v[..3]), Some(1), Some(v[3])])?,
                running: 0,
            })
        })
    }

    pub fn expected_tensors(&self) -> Vec<(String, Vec<usize>)> {
        let mut v = vec![
            ("psq.weight".into(), self.input.planes.to_vec()),
            ("psq.bias".into(), vec![1]),
        ];
        if self.input.globals > 0 {
            v.push(("globals.weight".into(), vec![self.input.globals]));
        }
        v
    }

    pub fn init_plan(&self) -> Vec<TensorInit> {
        let a = fan_in_bound(self.input.features());
        self.expected_tensors()
            .into_iter()
            .map(|(name, shape)| {
                let draw = match &self.init {
                    LinearInit::FanIn => Draw::Uniform(a),
                    LinearInit::Zeros => Draw::Const(0.0),
                    LinearInit::Material { values, scale } if name == "psq.weight" => {
                        let per_plane = self.input.points();
                        Draw::Values(
                            values
                                .iter()
                                .flat_map(|&v| std::iter::repeat_n((v * scale) as f32, per_plane))
                                .collect(),
                        )
                    }
                    LinearInit::Material { .. } => Draw::Const(0.0),
                };
                TensorInit::new(name, shape, draw)
            })
            .collect()
    }
}

/// The linear model; see the module docs.
pub struct Linear {
    /// `psq.weight` as `[C*H*W, 1]`.
    psq: Tensor,
    bias: Tensor,
    /// `globals.weight` as `[G, 1]`.
    globals: Option<Tensor>,
    io: ModelIo,
}

impl Linear {
    pub fn new(cfg: &LinearConfig, vb: VarBuilder) -> std::result::Result<Self, ModelError> {
        cfg.validate()?;
        let a = fan_in_bound(cfg.input.features()) as f64;
        let init = Init::Uniform { lo: -a, up: a };
        let psq = vb
            .get_with_hints(cfg.input.planes.as_slice(), "psq.weight", init)?
            .reshape((cfg.input.plane_len(), 1))?;
        let bias = vb.get_with_hints(1, "psq.bias", init)?;
        let globals = (cfg.input.globals > 0)
            .then(|| {
                vb.get_with_hints(cfg.input.globals, "globals.weight", init)?
                    .reshape((cfg.input.globals, 1))
            })
            .transpose()?;
        Ok(Linear {
            psq,
            bias,
            globals,
            io: ModelIo::new("linear", ModelInput::planes(cfg.input), cfg.output),
        })
    }
}

impl ValueNet for Linear {
    fn io(&self) -> &ModelIo {
        &self.io
    }

    fn forward_checked(&self, x: Batch<'_>) -> Result<ModelOutput> {
        let y = self.weighted_sum(x.planes, x.globals)?;
        Ok(ModelOutput {
            value: self.io.output.forward(&y)?,
            policy: None,
        })
    }

    fn pre_activation(
        &self,
        planes: &Tensor,
        globals: Option<&Tensor>,
        _train: bool,
    ) -> Result<Tensor> {
        self.io.check(planes, globals)?;
        self.weighted_sum(planes, globals)
    }
}

impl Linear {
    /// `planes . psq + globals . g + bias`, before the output activation.
    fn weighted_sum(&self, planes: &Tensor, globals: Option<&Tensor>) -> Result<Tensor> {
        let mut y = planes.flatten_from(1)?.matmul(&self.psq)?;
        if let (Some(w), Some(g)) = (&self.globals, globals) {
            y = (y + g.matmul(w)?)?;
        }
        y.squeeze(1)?.broadcast_add(&self.bias)
    }
}
