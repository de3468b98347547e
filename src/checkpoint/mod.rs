//! Checkpoints: `model.safetensors` + `config.json` + `README.md` (a model
//! card), the layout of a Hugging Face model repository, so one can be
//! shared there and read from Python with `safetensors`.
//!
//! Loading checks everything before any weight is used: the config parses,
//! the encoder is the one the caller asked for, and the tensor names, shapes
//! and dtypes are exactly those the model config implies.

mod builtin;
mod card;
mod config;
mod error;
mod load;
mod save;
#[cfg(feature = "hub")]
mod share;
mod source;

pub use builtin::{builtin, Builtin, BUILTINS};
pub use card::model_card;
pub use config::{CheckpointConfig, TrainingInfo, FORMAT_VERSION};
pub use error::CheckpointError;
pub use load::{load, Checkpoint};
pub use save::save;
#[cfg(feature = "hub")]
pub use share::{download_checked, upload_checked, ShareError, ShareReport};
pub use source::{open, CheckpointSource, BUILTIN_PREFIX};

pub const WEIGHTS_FILE: &str = "model.safetensors";
pub const CONFIG_FILE: &str = "config.json";
pub const CARD_FILE: &str = "README.md";
