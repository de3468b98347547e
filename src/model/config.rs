//! Model configurations, stored in a checkpoint's `config.json`.
//!
//! `ModelConfig` is a serde enum tagged `kind`: `linear`, `mlp`, `cnn3`,
//! `resnet`, `mdrnn`. The input geometry lives in the config: every kind
//! but `mlp` carries `input: {"planes": [C, H, W], "globals": G}`; the
//! `mlp` carries `inputs = C*H*W + G` (it flattens the planes, and this
//! keeps older checkpoints readable). [`ModelConfig::check_input`]
//! compares that with an encoder's shape.

use super::init::TensorInit;
use super::io::{InputShape, OutputActivation};
use super::size::{ParamCount, Sizes};
use super::{
    Cnn3NetConfig, Cnn3Output, LinearConfig, MdrnnConfig, MlpNetConfig, ModelError, ResNetConfig,
};
use crate::util::memory::MemoryLimit;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelConfig {
    Linear(LinearConfig),
    Mlp(MlpNetConfig),
    Cnn3(Cnn3NetConfig),
    Resnet(ResNetConfig),
    Mdrnn(MdrnnConfig),
}

/// How fresh weights are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WeightInit {
    /// Every weight and bias uniform in `[-a, a]`.
    Uniform { a: f64 },
    /// PyTorch-style: uniform in `[-1/sqrt(fan_in), 1/sqrt(fan_in)]`.
    FanIn,
}

/// Batch-norm running statistics: saved with the weights, never trained.
pub fn is_running_stat(name: &str) -> bool {
    name.ends_with(".running_mean") || name.ends_with(".running_var")
}

impl ModelConfig {
    /// `"linear"`, `"mlp"`, `"cnn3"`, `"resnet"` or `"mdrnn"`.
    pub fn kind(&self) -> &'static str {
        match self {
            ModelConfig::Linear(_) => "linear",
            ModelConfig::Mlp(_) => "mlp",
            ModelConfig::Cnn3(_) => "cnn3",
            ModelConfig::Resnet(_) => "resnet",
            ModelConfig::Mdrnn(_) => "mdrnn",
        }
    }

    /// Checks the config's own fields.
    pub fn validate(&self) -> Result<(), ModelError> {
        match self {
            ModelConfig::Linear(c) => c.validate(),
            ModelConfig::Mlp(c) => c.validate(),
            ModelConfig::Cnn3(c) => c.validate(),
            ModelConfig::Resnet(c) => c.validate(),
            ModelConfig::Mdrnn(c) => c.validate(),
        }
    }

    /// The tensors a checkpoint of this model must hold: `(name, shape)`,
    /// sorted by name.
    pub fn expected_tensors(&self) -> Vec<(String, Vec<usize>)> {
        let mut v = match self {
            ModelConfig::Linear(c) => c.expected_tensors(),
            ModelConfig::Mlp(c) => c.expected_tensors(),
            ModelConfig::Cnn3(c) => c.expected_tensors(),
            ModelConfig::Resnet(c) => c.expected_tensors(),
            ModelConfig::Mdrnn(c) => c.expected_tensors(),
        };
        v.sort();
        v
    }

    /// How every tensor starts (see [`super::seeded_init`]).
    pub fn init_plan(&self) -> Vec<TensorInit> {
        match self {
            ModelConfig::Linear(c) => c.init_plan(),
            ModelConfig::Mlp(c) => c.init_plan(),
            ModelConfig::Cnn3(c) => c.init_plan(),
            ModelConfig::Resnet(c) => c.init_plan(),
            ModelConfig::Mdrnn(c) => c.init_plan(),
        }
    }

    /// The size fields and the parameter count they give.
    fn sizes(&self) -> Sizes {
        match self {
            ModelConfig::Linear(c) => c.sizes(),
            ModelConfig::Mlp(c) => c.shape().sizes(),
            ModelConfig::Cnn3(c) => c.sizes(),
            ModelConfig::Resnet(c) => c.sizes(),
            ModelConfig::Mdrnn(c) => c.sizes(),
        }
    }

    /// The parameter count, worked out from the sizes with checked
    /// arithmetic (no tensor list is built): an error names the field that
    /// makes it overflow.
    pub fn param_count(&self) -> Result<ParamCount, ModelError> {
        self.sizes().count()
    }

    /// Floats a training forward pass keeps per position for its backward
    /// pass (every layer's output, pre- and post-activation, plus the
    /// input), an upper estimate used to bound a pass's memory before it
    /// runs; saturating, so an absurd config gives `u64::MAX`.
    pub fn activation_floats(&self) -> u64 {
        let plane = |i: &super::InputShape| {
            let [c, h, w] = i.planes.map(|v| v as u64);
            (c.saturating_mul(h).saturating_mul(w), h.saturating_mul(w))
        };
        let sum = |terms: &[u64]| terms.iter().fold(0u64, |a, &t| a.saturating_add(t));
        match self {
            ModelConfig::Linear(c) => sum(&[plane(&c.input).0, c.input.globals as u64, 2]),
            ModelConfig::Mlp(c) => {
                let hidden = sum(&c.hidden.iter().map(|&h| h as u64).collect::<Vec<_>>());
                // Pre-activation, activation and dropout mask per unit.
                sum(&[c.inputs as u64, hidden.saturating_mul(3), 2])
            }
            ModelConfig::Cnn3(c) => {
                let (input, cells) = plane(&c.input);
                let conv = (c.net.filters as u64).saturating_mul(cells);
                sum(&[
                    input,
                    conv.saturating_mul(3),
                    (c.net.hidden as u64).saturating_mul(3),
                    2,
                ])
            }
            ModelConfig::Resnet(c) => {
                let (input, cells) = plane(&c.input);
                let map = (c.channels as u64).saturating_mul(cells);
                // Per convolution: its column buffer (3x3 taps), output,
                // normalised output and activation; two a block, one stem.
                let per_conv = map.saturating_mul(9 + 3);
                let convs = (c.blocks as u64).saturating_mul(2).saturating_add(1);
                sum(&[
                    input,
                    per_conv.saturating_mul(convs),
                    (c.policy_planes as u64 + 1)
                        .saturating_mul(cells)
                        .saturating_mul(3),
                    (c.value_hidden as u64).saturating_mul(3),
                    2,
                ])
            }
            ModelConfig::Mdrnn(c) => {
                let (input, cells) = plane(&c.input);
                // Four sweeps, each a hidden state and its gates per cell.
                let sweep = (c.hidden as u64).saturating_mul(cells).saturating_mul(6);
                sum(&[input, sweep.saturating_mul(4), 2])
            }
        }
    }

    /// Trainable parameters (batch-norm running statistics excluded);
    /// `usize::MAX` where the count overflows, which
    /// [`validate`](Self::validate) refuses.
    pub fn num_params(&self) -> usize {
        self.param_count()
            .ok()
            .and_then(|c| usize::try_from(c.trainable).ok())
            .unwrap_or(usize::MAX)
    }

    /// Refuses a model whose parameters, at `bytes_per_param` each (the
    /// weights, their gradients and the optimizer's state when training),
    /// need more memory than there is, naming the size field at fault.
    pub fn check_memory(&self, bytes_per_param: u64) -> Result<(), ModelError> {
        let limit = MemoryLimit::current().map_err(|error| ModelError::Memory {
            model: self.kind().into(),
            error,
        })?;
        self.check_memory_under(bytes_per_param, &limit)
    }

    /// [`check_memory`](Self::check_memory) against `limit`.
    pub fn check_memory_under(
        &self,
        bytes_per_param: u64,
        limit: &MemoryLimit,
    ) -> Result<(), ModelError> {
        self.sizes().check(bytes_per_param, limit)
    }

    /// The input geometry, for every kind but `mlp` (which knows only its
    /// flattened `inputs`).
    pub fn input(&self) -> Option<InputShape> {
        match self {
            ModelConfig::Linear(c) => Some(c.input),
            ModelConfig::Mlp(_) => None,
            ModelConfig::Cnn3(c) => Some(c.input),
            ModelConfig::Resnet(c) => Some(c.input),
            ModelConfig::Mdrnn(c) => Some(c.input),
        }
    }

    /// How many policy logits the model returns per position (`[B, len]`):
    /// one per board point and policy plane; `None` without a policy head.
    pub fn policy_len(&self) -> Option<usize> {
        match self {
            ModelConfig::Resnet(c) => c.policy.then(|| c.policy_planes * c.input.points()),
            ModelConfig::Mdrnn(c) => Some(c.input.points()),
            _ => None,
        }
    }

    /// Whether the model returns policy logits `[B, len]` ([`Self::policy_len`]).
    pub fn has_policy(&self) -> bool {
        match self {
            ModelConfig::Resnet(c) => c.policy,
            ModelConfig::Mdrnn(_) => true,
            _ => false,
        }
    }

    /// The scale of the value: sigmoid values are in `[0, 1]` like the
    /// labels, the others in `[-1, 1]` (cnn3's relu output is trained on
    /// `[0, 1]` labels and so counts as sigmoid here).
    pub fn output(&self) -> OutputActivation {
        match self {
            ModelConfig::Linear(c) => c.output,
            ModelConfig::Mlp(c) => c.output,
            ModelConfig::Cnn3(c) => match c.net.output {
                Cnn3Output::Sigmoid | Cnn3Output::Relu => OutputActivation::Sigmoid,
            },
            ModelConfig::Resnet(c) => c.output,
            ModelConfig::Mdrnn(c) => c.output,
        }
    }

    /// Refuses an encoder whose planes `[C, H, W]` or global count differ
    /// from the config's, naming the field. The mdrnn runs on any board:
    /// only its `C` and `G` must match.
    pub fn check_input(&self, planes: [usize; 3], globals: usize) -> Result<(), ModelError> {
        let mismatch = |field: &str, model_has: String, encoder_gives: String| {
            Err(ModelError::InputMismatch {
                model: self.kind().into(),
                field: field.into(),
                model_has,
                encoder_gives,
            })
        };
        let given = InputShape::new(planes, globals);
        if given.checked_features().is_none() {
            return Err(ModelError::field(
                self.kind(),
                "input",
                format!(
                    "cannot take the encoder's planes {planes:?} and {globals} globals: more \
                     values than memory can index"
                ),
            ));
        }
        match self {
            ModelConfig::Mlp(c) => {
                if c.inputs != given.features() {
                    return mismatch(
                        "inputs",
                        c.inputs.to_string(),
                        format!(
                            "{} features (planes {planes:?} = {} values + {globals} globals)",
                            given.features(),
                            given.plane_len()
                        ),
                    );
                }
            }
            other => {
                let Some(input) = other.input() else {
                    return Ok(());
                };
                let any_board = matches!(other, ModelConfig::Mdrnn(_));
                if any_board && input.planes[0] != planes[0] {
                    return mismatch(
                        "input.planes[0]",
                        format!("{} planes", input.planes[0]),
                        format!("{} planes ({planes:?})", planes[0]),
                    );
                }
                if !any_board && input.planes != planes {
                    return mismatch(
                        "input.planes",
                        format!("{:?}", input.planes),
                        format!("{planes:?}"),
                    );
                }
                if input.globals != globals {
                    return mismatch(
                        "input.globals",
                        input.globals.to_string(),
                        globals.to_string(),
                    );
                }
            }
        }
        Ok(())
    }

    /// A short description for tables and model cards.
    pub fn describe(&self) -> String {
        let body = match self {
            ModelConfig::Linear(c) if !c.board => format!(
                "linear over {} globals (no board term) -> {:?}",
                c.input.globals, c.output
            ),
            ModelConfig::Linear(c) => format!(
                "linear piece-square {:?}{} -> {:?}",
                c.input.planes,
                globals(c.input.globals),
                c.output
            ),
            ModelConfig::Mlp(c) => {
                let hidden: Vec<String> = c.hidden.iter().map(|h| h.to_string()).collect();
                let mut s = format!(
                    "mlp {}-{}-1 ({:?})",
                    c.inputs,
                    hidden.join("-"),
                    c.activation
                );
                if c.dropout > 0.0 {
                    s += &format!(" dropout {}", c.dropout);
                }
                if c.output != OutputActivation::Identity {
                    s += &format!(" -> {:?}", c.output);
                }
                s
            }
            ModelConfig::Cnn3(c) => format!(
                "cnn3 {:?} -> {} filters {}x{} -> {} -> 1 ({:?})",
                c.input.planes,
                c.net.filters,
                c.net.kernel[0],
                c.net.kernel[1],
                c.net.hidden,
                c.net.output
            ),
            ModelConfig::Resnet(c) => format!(
                "resnet {:?}{} {} blocks x {} channels, value head {}{} -> {:?}",
                c.input.planes,
                globals(c.input.globals),
                c.blocks,
                c.channels,
                c.value_hidden,
                if c.policy { ", policy head" } else { "" },
                c.output
            ),
            ModelConfig::Mdrnn(c) => format!(
                "mdrnn {} planes (trained on {}x{}), k = {} -> {:?}",
                c.input.planes[0], c.input.planes[1], c.input.planes[2], c.hidden, c.output
            ),
        };
        format!("{body}, {} parameters", self.num_params())
    }
}

fn globals(g: usize) -> String {
    if g > 0 {
        format!(" + {g} globals")
    } else {
        String::new()
    }
}
