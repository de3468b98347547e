//! The latest epoch's model files in the output folder itself
//! (`model.safetensors`, `config.json`, `README.md`), replaced file by file
//! from a complete checkpoint written beside them.

use std::collections::HashMap;
use std::path::Path;

use candle_core::Tensor;

use super::error::io_err;
use super::FitError;
use crate::checkpoint::{self, CheckpointConfig};

/// Writes the model files into `out` itself: an atomic checkpoint in a
/// hidden sibling, then each file renamed into place.
pub(super) fn save_final(
    out: &Path,
    cfg: &CheckpointConfig,
    tensors: &HashMap<String, Tensor>,
) -> Result<(), FitError> {
    let staging = out.join(".final");
    checkpoint::save(&staging, cfg, tensors)?;
    for f in [
        checkpoint::WEIGHTS_FILE,
        checkpoint::CONFIG_FILE,
        checkpoint::CARD_FILE,
    ] {
        let (from, to) = (staging.join(f), out.join(f));
        std::fs::rename(&from, &to).map_err(io_err(&to))?;
    }
    std::fs::remove_dir_all(&staging).map_err(io_err(&staging))?;
    Ok(())
}
