use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum CheckpointError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file of the checkpoint that resolves, through a symbolic link,
    /// outside its folder.
    #[error("{dir}: refused: the {name}")]
    UnsafeName {
        dir: PathBuf,
        name: crate::util::safe_name::UnsafeName,
    },
    /// `builtin:NAME` names no checkpoint shipped in the program.
    #[error("builtin:{name}: no such checkpoint ships with plies (shipped: {known})")]
    UnknownBuiltin { name: String, known: String },
    #[error("{path}: not a valid checkpoint config: {why}")]
    Config { path: PathBuf, why: String },
    #[error("{path}: checkpoint format version {found}, this program reads {expected}")]
    Version {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error(
        "{path}: the checkpoint was trained with encoder '{found}', but '{expected}' was asked for"
    )]
    EncoderMismatch {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("{path}: the checkpoint is for game '{found}', not '{expected}'")]
    GameMismatch {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("{path}: not a readable safetensors file: {why}")]
    Weights { path: PathBuf, why: String },
    #[error("{path}: tensor '{name}' is missing (the config's model needs shape {shape:?})")]
    MissingTensor {
        path: PathBuf,
        name: String,
        shape: Vec<usize>,
    },
    #[error(
        "{path}: tensor '{name}' has shape {found:?}, but the config's model needs {expected:?}"
    )]
    ShapeMismatch {
        path: PathBuf,
        name: String,
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    #[error(
        "{path}: tensor '{name}' is not part of the config's model (expected tensors: {expected})"
    )]
    UnexpectedTensor {
        path: PathBuf,
        name: String,
        expected: String,
    },
    #[error("{path}: tensor '{name}' has dtype {found}, expected a float type")]
    Dtype {
        path: PathBuf,
        name: String,
        found: String,
    },
    /// A weight is NaN or infinite: a diverged run's output, which would
    /// give NaN predictions everywhere it is used.
    #[error("{path}: tensor '{name}' holds {value} at flat index {index}; weights must be finite")]
    NonFinite {
        path: PathBuf,
        name: String,
        /// `NaN`, `inf` or `-inf`.
        value: String,
        index: usize,
    },
    #[error("model: {0}")]
    Model(#[from] crate::model::ModelError),
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
    /// A checkpoint on the hub that could not be had (boxed: it names a
    /// repository, a file and an endpoint).
    #[error(transparent)]
    Hub(Box<crate::hub::HubError>),
}

impl From<crate::hub::HubError> for CheckpointError {
    fn from(e: crate::hub::HubError) -> Self {
        CheckpointError::Hub(Box::new(e))
    }
}

/// A failed directory swap is an I/O error about the checkpoint directory.
impl From<crate::util::AtomicWriteError> for CheckpointError {
    fn from(e: crate::util::AtomicWriteError) -> Self {
        CheckpointError::Io {
            path: e.path,
            source: e.source,
        }
    }
}

impl CheckpointError {
    /// Tensor `name` of the weights file `path` is not among the model's
    /// `expected` tensors (listed in the message).
    pub(crate) fn unexpected_tensor(
        path: &std::path::Path,
        name: &str,
        expected: &[(String, Vec<usize>)],
    ) -> Self {
        CheckpointError::UnexpectedTensor {
            path: path.to_path_buf(),
            name: name.to_string(),
            expected: expected
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}
