//! Reading and validating a checkpoint.

use super::{CheckpointConfig, CheckpointError, CONFIG_FILE, FORMAT_VERSION, WEIGHTS_FILE};
use crate::model::{build, ModelConfig, ModelError, NativeMlp, OutputActivation, ValueNet};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A validated checkpoint: its config and its weights (on the CPU).
pub struct Checkpoint {
    pub dir: PathBuf,
    pub config: CheckpointConfig,
    pub tensors: HashMap<String, Tensor>,
}

/// Loads the checkpoint in `dir`. With `game` / `encoder`, refuses one made
/// for another game or trained on another encoder.
pub fn load(
    dir: &Path,
    game: Option<&str>,
    encoder: Option<&str>,
) -> Result<Checkpoint, CheckpointError> {
    // A checkpoint's files stay in its folder (a hub snapshot's, in its
    // repository's folder of the cache): a link out of it is refused.
    let inside = |name: &str| {
        crate::util::safe_name::inside(dir, name).map_err(|source| CheckpointError::UnsafeName {
            dir: dir.to_path_buf(),
            name: source,
        })
    };
    let config_path = inside(CONFIG_FILE)?;
    let text =
        crate::util::text::read_text(&config_path).map_err(|source| CheckpointError::Io {
            path: config_path.clone(),
            source,
        })?;
    let config: CheckpointConfig =
        serde_json::from_str(&text).map_err(|e| CheckpointError::Config {
            path: config_path.clone(),
            why: e.to_string(),
        })?;
    if config.format_version != FORMAT_VERSION {
        return Err(CheckpointError::Version {
            path: config_path,
            found: config.format_version,
            expected: FORMAT_VERSION,
        });
    }
    if let Some(g) = game {
        if config.game != g {
            return Err(CheckpointError::GameMismatch {
                path: config_path,
                expected: g.into(),
                found: config.game.clone(),
            });
        }
    }
    if let Some(e) = encoder {
        if config.encoder.name != e {
            return Err(CheckpointError::EncoderMismatch {
                path: config_path,
                expected: e.into(),
                found: config.encoder.name.clone(),
            });
        }
    }
    config
        .model
        .validate()
        .and_then(|()| {
            config
                .model
                .check_input(config.encoder.shape, config.encoder.globals)
        })
        .map_err(|e| CheckpointError::Config {
            path: config_path.clone(),
            why: format!("model: {e} ('{}')", config.encoder.name),
        })?;
    let weights_path = inside(WEIGHTS_FILE)?;
    let bytes = std::fs::read(&weights_path).map_err(|source| CheckpointError::Io {
        path: weights_path.clone(),
        source,
    })?;
    validate_weights(&weights_path, &bytes, &config.model)?;
    let tensors = candle_core::safetensors::load_buffer(&bytes, &Device::Cpu)?
        .into_iter()
        .map(|(k, t)| Ok((k, t.to_dtype(DType::F32)?)))
        .collect::<Result<HashMap<String, Tensor>, candle_core::Error>>()?;
    check_finite(&weights_path, &tensors)?;
    Ok(Checkpoint {
        dir: dir.to_path_buf(),
        config,
        tensors,
    })
}

/// Refuses a NaN or infinite weight, naming the tensor (in name order, so
/// the same file always names the same one).
fn check_finite(path: &Path, tensors: &HashMap<String, Tensor>) -> Result<(), CheckpointError> {
    let mut names: Vec<&String> = tensors.keys().collect();
    names.sort();
    for name in names {
        let values = tensors[name].flatten_all()?.to_vec1::<f32>()?;
        if let Some((index, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(CheckpointError::NonFinite {
                path: path.to_path_buf(),
                name: name.clone(),
                value: format!("{v}"),
                index,
            });
        }
    }
    Ok(())
}

fn validate_weights(path: &Path, bytes: &[u8], model: &ModelConfig) -> Result<(), CheckpointError> {
    let st =
        safetensors::SafeTensors::deserialize(bytes).map_err(|e| CheckpointError::Weights {
            path: path.to_path_buf(),
            why: e.to_string(),
        })?;
    let expected = model.expected_tensors();
    for (name, shape) in &expected {
        let view = st
            .tensor(name)
            .map_err(|_| CheckpointError::MissingTensor {
                path: path.to_path_buf(),
                name: name.clone(),
                shape: shape.clone(),
            })?;
        if view.shape() != shape.as_slice() {
            return Err(CheckpointError::ShapeMismatch {
                path: path.to_path_buf(),
                name: name.clone(),
                expected: shape.clone(),
                found: view.shape().to_vec(),
            });
        }
        use safetensors::Dtype;
        if !matches!(
            view.dtype(),
            Dtype::F32 | Dtype::F64 | Dtype::F16 | Dtype::BF16
        ) {
            return Err(CheckpointError::Dtype {
                path: path.to_path_buf(),
                name: name.clone(),
                found: format!("{:?}", view.dtype()),
            });
        }
    }
    for name in st.names() {
        if !expected.iter().any(|(n, _)| n == name) {
            return Err(CheckpointError::unexpected_tensor(path, name, &expected));
        }
    }
    Ok(())
}

impl Checkpoint {
    /// The candle model on `device`.
    pub fn model(&self, device: &Device) -> Result<Box<dyn ValueNet>, CheckpointError> {
        let on_device = self
            .tensors
            .iter()
            .map(|(k, t)| Ok((k.clone(), t.to_device(device)?)))
            .collect::<Result<HashMap<_, _>, candle_core::Error>>()?;
        let vb = VarBuilder::from_tensors(on_device, DType::F32, device);
        Ok(build(&self.config.model, vb)?)
    }

    /// The plain-Rust MLP, for one-hidden-layer MLP checkpoints with an
    /// identity output.
    pub fn native_mlp(&self) -> Result<NativeMlp, CheckpointError> {
        match &self.config.model {
            ModelConfig::Mlp(c) if c.output == OutputActivation::Identity => {
                Ok(NativeMlp::from_tensors(&c.shape(), &self.tensors)?)
            }
            other => Err(ModelError::Config(format!(
                "the plain-Rust MLP reads one-hidden-layer mlp checkpoints with an identity \
                 output, this one is {}",
                other.describe()
            ))
            .into()),
        }
    }
}
