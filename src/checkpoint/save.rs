//! Writing a checkpoint atomically: everything goes to a temporary sibling
//! directory that replaces the target only once complete.

use super::{model_card, CheckpointConfig, CheckpointError, CARD_FILE, CONFIG_FILE, WEIGHTS_FILE};
use crate::util::atomic::write_atomic_with;
use crate::util::replace::swap_in;
use candle_core::Tensor;
use std::collections::HashMap;
use std::path::Path;

/// Writes `tensors` with `cfg` to the directory `dir`, replacing a previous
/// checkpoint there only after the new one is fully written.
pub fn save(
    dir: &Path,
    cfg: &CheckpointConfig,
    tensors: &HashMap<String, Tensor>,
) -> Result<(), CheckpointError> {
    check_tensors(dir, cfg, tensors)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CheckpointError::Io { path, source }
    };
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "checkpoint".into());
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    remove_stale(&parent, &name);
    let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
    }
    std::fs::create_dir(&tmp).map_err(io(&tmp))?;
    let f32_tensors: HashMap<String, Tensor> = tensors
        .iter()
        .map(|(k, t)| Ok((k.clone(), t.to_dtype(candle_core::DType::F32)?)))
        .collect::<Result<_, candle_core::Error>>()?;
    let weights = tmp.join(WEIGHTS_FILE);
    // Through the atomic writer for the file mode: safetensors stages its
    // file in a private (0600) temporary file.
    write_atomic_with(&weights, |tmp| {
        candle_core::safetensors::save(&f32_tensors, tmp).map_err(|e| CheckpointError::Weights {
            path: weights.clone(),
            why: e.to_string(),
        })
    })?;
    let config = tmp.join(CONFIG_FILE);
    let json = serde_json::to_string_pretty(cfg).map_err(|e| CheckpointError::Config {
        path: config.clone(),
        why: e.to_string(),
    })?;
    std::fs::write(&config, json + "\n").map_err(io(&config))?;
    let card = tmp.join(CARD_FILE);
    std::fs::write(&card, model_card(cfg)).map_err(io(&card))?;
    // Swapped in whole: `dir` names a complete checkpoint at every instant.
    swap_in(&tmp, dir)?;
    Ok(())
}

/// Removes the staging directories (`.NAME.tmp-PID`, and `.NAME.old-PID` of
/// earlier versions) that killed savers of `name` left in `parent`; a
/// living process's are its own business.
fn remove_stale(parent: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        let Some(rest) = file.strip_prefix(&format!(".{name}.")) else {
            continue;
        };
        let pid = rest
            .strip_prefix("tmp-")
            .or_else(|| rest.strip_prefix("old-"))
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| p != std::process::id() && !alive(p)) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(unix)]
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only asks whether the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn alive(_: u32) -> bool {
    true
}

fn check_tensors(
    dir: &Path,
    cfg: &CheckpointConfig,
    tensors: &HashMap<String, Tensor>,
) -> Result<(), CheckpointError> {
    let path = dir.join(WEIGHTS_FILE);
    let expected = cfg.model.expected_tensors();
    for (name, shape) in &expected {
        match tensors.get(name) {
            None => {
                return Err(CheckpointError::MissingTensor {
                    path,
                    name: name.clone(),
                    shape: shape.clone(),
                })
            }
            Some(t) if t.dims() != shape.as_slice() => {
                return Err(CheckpointError::ShapeMismatch {
                    path,
                    name: name.clone(),
                    expected: shape.clone(),
                    found: t.dims().to_vec(),
                })
            }
            _ => {}
        }
    }
    if let Some(extra) = tensors
        .keys()
        .find(|k| !expected.iter().any(|(n, _)| n == *k))
    {
        return Err(CheckpointError::unexpected_tensor(&path, extra, &expected));
    }
    Ok(())
}
