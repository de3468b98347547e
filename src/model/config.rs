//! Model configurations, stored in a checkpoint's `config.json`.

use super::MlpConfig;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelConfig {
    Mlp(MlpConfig),
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

impl ModelConfig {
    /// The tensors a checkpoint of this model must hold: `(name, shape)`,
    /// sorted by name.
    pub fn expected_tensors(&self) -> Vec<(String, Vec<usize>)> {
        let mut v = match self {
            ModelConfig::Mlp(c) => c.expected_tensors(),
        };
        v.sort();
        v
    }

    /// Number of input features.
    pub fn inputs(&self) -> usize {
        match self {
            ModelConfig::Mlp(c) => c.inputs,
        }
    }

    /// A short description for tables and model cards.
    pub fn describe(&self) -> String {
        match self {
            ModelConfig::Mlp(c) => {
                let hidden: Vec<String> = c.hidden.iter().map(|h| h.to_string()).collect();
                format!(
                    "mlp {}-{}-1 ({:?})",
                    c.inputs,
                    hidden.join("-"),
                    c.activation
                )
            }
        }
    }
}
