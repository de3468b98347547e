//! The models `--model` names: the presets, JSON model files and
//! checkpoints to continue from, each checked against the dataset.

use std::collections::HashMap;
use std::path::Path;

use candle_core::Tensor;

use super::FitError;
use crate::checkpoint::{self, CheckpointSource};
use crate::dataset::Dataset;
use crate::model::{
    Cnn3Config, Cnn3NetConfig, InputShape, LinearConfig, MdrnnConfig, MlpNetConfig, ModelConfig,
    OutputActivation, ResNetConfig, WeightInit,
};

/// The model presets `--model` accepts by name.
pub const PRESETS: [&str; 6] = [
    "linear",
    "mlp",
    "cnn3",
    "resnet-tiny",
    "resnet-small",
    "mdrnn",
];

/// The model preset `name` for inputs of `input` (see [`PRESETS`]).
pub fn preset(name: &str, input: InputShape) -> Option<ModelConfig> {
    Some(match name {
        "linear" => ModelConfig::Linear(LinearConfig::new(input)),
        "mlp" => ModelConfig::Mlp(MlpNetConfig {
            inputs: input.features(),
            hidden: vec![256, 64],
            activation: crate::model::Activation::Tanh,
            init: WeightInit::FanIn,
            dropout: 0.0,
            output: OutputActivation::Sigmoid,
        }),
        "cnn3" => ModelConfig::Cnn3(Cnn3NetConfig::new(input, Cnn3Config::default())),
        "resnet-tiny" => ModelConfig::Resnet(ResNetConfig::tiny(input)),
        "resnet-small" => ModelConfig::Resnet(ResNetConfig::small(input)),
        "mdrnn" => ModelConfig::Mdrnn(MdrnnConfig {
            input,
            ..MdrnnConfig::stones(input.planes[1], 10)
        }),
        _ => return None,
    })
}

/// Resolves `--model`: a preset name ([`PRESETS`], its input taken from the
/// dataset's encoder), a JSON file of a [`ModelConfig`] (a missing `input`,
/// or an mlp's `inputs`, is filled from the encoder), or a checkpoint
/// directory or `ckpt:hf:ORG/NAME[@REV]` (its config and weights, to
/// continue training from or fine-tune). The
/// result fits the dataset, or the error names the field that does not.
pub fn resolve_model(
    spec: &str,
    dataset: &Dataset,
) -> Result<(ModelConfig, Option<HashMap<String, Tensor>>), FitError> {
    let ds = dataset.spec();
    let enc = &ds.encoder;
    let input = InputShape::new(enc.shape, enc.globals);
    let bad = |why: String| FitError::Model {
        source_name: spec.to_string(),
        why,
    };
    let (cfg, weights) = if CheckpointSource::names_checkpoint(spec) {
        let dir = CheckpointSource::parse(spec)?.directory()?;
        let ck = checkpoint::load(&dir, None, None)?;
        let cp = dir.join(checkpoint::CONFIG_FILE).display().to_string();
        if ck.config.game != ds.game {
            return Err(FitError::Model {
                source_name: cp,
                why: format!(
                    "field `game` is {:?} but the dataset {} is {:?}",
                    ck.config.game,
                    dataset.dir().display(),
                    ds.game
                ),
            });
        }
        if ck.config.encoder.name != enc.name || ck.config.encoder.version != enc.version {
            return Err(FitError::Model {
                source_name: cp,
                why: format!(
                    "field `encoder.name` is {:?} v{} but the dataset {} is encoded with {:?} v{}",
                    ck.config.encoder.name,
                    ck.config.encoder.version,
                    dataset.dir().display(),
                    enc.name,
                    enc.version
                ),
            });
        }
        (ck.config.model.clone(), Some(ck.tensors))
    } else if let Some(cfg) = preset(spec, input) {
        (cfg, None)
    } else if Path::new(spec).is_file() {
        let path = Path::new(spec);
        let text = crate::util::text::read_text(path).map_err(|source| FitError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
        if let Some(obj) = v.as_object_mut() {
            let is_mlp = obj.get("kind").and_then(|k| k.as_str()) == Some("mlp");
            if is_mlp && !obj.contains_key("inputs") {
                obj.insert("inputs".into(), input.features().into());
            } else if !is_mlp && !obj.contains_key("input") {
                obj.insert(
                    "input".into(),
                    serde_json::json!({"planes": enc.shape, "globals": enc.globals}),
                );
            }
        }
        let cfg: ModelConfig = serde_json::from_value(v).map_err(|e| {
            bad(format!(
                "not a model config ({e}); expected {{\"kind\": \"linear|mlp|cnn3|resnet|mdrnn\", ...}}"
            ))
        })?;
        (cfg, None)
    } else {
        return Err(bad(format!(
            "neither a preset ({}), a JSON file nor a checkpoint directory",
            PRESETS.join(", ")
        )));
    };
    cfg.validate().map_err(|e| bad(e.to_string()))?;
    cfg.check_input(enc.shape, enc.globals).map_err(|e| {
        bad(format!(
            "{e} (dataset {} uses encoder {} with planes {:?} and {} globals)",
            dataset.dir().display(),
            enc.name,
            enc.shape,
            enc.globals
        ))
    })?;
    Ok((cfg, weights))
}
