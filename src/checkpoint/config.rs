//! `config.json`: what the weights are and how they were made.

use crate::encode::EncoderSpec;
use crate::model::ModelConfig;
use serde::{Deserialize, Serialize};

pub const FORMAT_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointConfig {
    pub format_version: u32,
    pub game: String,
    pub encoder: EncoderSpec,
    pub model: ModelConfig,
    pub training: TrainingInfo,
    /// `plies <version>` that wrote it.
    pub program: String,
}

/// Training provenance.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct TrainingInfo {
    /// e.g. "td_lambda", "supervised".
    pub method: String,
    pub seed: Option<u64>,
    /// sha256 of the training dataset's manifest.json, when one was used.
    pub dataset_manifest_sha256: Option<String>,
    pub dataset: Option<String>,
    /// Training examples seen (games for TD, positions for supervised).
    pub examples: u64,
    /// Hyperparameters and final metrics, free-form.
    pub hyperparameters: serde_json::Value,
    pub metrics: serde_json::Value,
}

impl CheckpointConfig {
    pub fn new(
        game: &str,
        encoder: EncoderSpec,
        model: ModelConfig,
        training: TrainingInfo,
    ) -> Self {
        CheckpointConfig {
            format_version: FORMAT_VERSION,
            game: game.to_string(),
            encoder,
            model,
            training,
            program: format!("plies {}", env!("CARGO_PKG_VERSION")),
        }
    }
}
