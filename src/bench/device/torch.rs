//! The PyTorch peer of `plies bench device`
//! (`scripts/bench_torch_device.py`): the same checkpoints, the same input
//! planes and batch sizes, on the same device, eager and under
//! torch.compile, in the same run.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::super::peer::{self, PeerError};
use super::super::Result;
use crate::util::write_atomic;

/// What the peer measures for one network (written to `torch-plan.json`).
#[derive(Serialize, Default)]
pub struct PeerNet {
    pub name: String,
    /// A plies checkpoint directory (`scripts/torch_models.py` loads it).
    pub checkpoint: PathBuf,
    /// A safetensors file: `planes` `[B, C, H, W]` as `U8`, and `expected`,
    /// plies' f32 values of the first rows.
    pub inputs: PathBuf,
    pub batches: Vec<usize>,
    pub train_batch: usize,
    /// Whether torch.compile is tried on this network.
    pub compile: bool,
}

#[derive(Serialize)]
pub struct PeerPlan {
    pub device: String,
    pub seconds: f64,
    pub rounds: usize,
    pub seed: u64,
    pub nets: Vec<PeerNet>,
}

/// The peer's figures for one network; `None` where one did not run, with
/// the reason in the notes.
#[derive(Deserialize, Debug, Default)]
pub struct PeerNetResult {
    pub name: String,
    /// Max |PyTorch - plies| over the `expected` values.
    pub max_abs_diff: Option<f64>,
    /// `(batch, eager positions/s, compiled positions/s)`.
    pub infer: Vec<(usize, Option<f64>, Option<f64>)>,
    /// `(batch, eager, compiled)` positions/s of training steps.
    pub train: Option<(usize, Option<f64>, Option<f64>)>,
    /// Why torch.compile gave no figure for this network.
    pub compile_note: Option<String>,
}

#[derive(Deserialize, Debug)]
pub struct PeerResult {
    pub torch: String,
    /// The GPU as PyTorch names it (`None` on a CPU).
    pub device_name: Option<String>,
    pub nets: Vec<PeerNetResult>,
}

/// Runs the peer on `plan` (written to `dir/torch-plan.json`).
pub fn run(
    plan: &PeerPlan,
    dir: &Path,
    python: Option<PathBuf>,
) -> Result<std::result::Result<PeerResult, PeerError>> {
    let plan_file = dir.join("torch-plan.json");
    let text = serde_json::to_string_pretty(plan).expect("the plan serialises");
    write_atomic(&plan_file, text.as_bytes())?;
    Ok(run_plan(&plan_file, python))
}

fn run_plan(
    plan_file: &Path,
    python: Option<PathBuf>,
) -> std::result::Result<PeerResult, PeerError> {
    let python = peer::find_python(python, "PLIES_TORCH_PYTHON", ".venv-torch");
    peer::require_modules(
        &python,
        "torch, safetensors",
        "set --python or PLIES_TORCH_PYTHON, or \
         `python3 -m venv .venv-torch && .venv-torch/bin/pip install torch safetensors numpy`",
    )?;
    let mut cmd = Command::new(&python);
    cmd.arg(peer::script_path("bench_torch_device.py"))
        .arg(plan_file)
        .stderr(std::process::Stdio::inherit());
    let out = peer::run_peer(&mut cmd, "the PyTorch device benchmark")?;
    serde_json::from_slice(&out.stdout).map_err(|e| PeerError::Output {
        what: "the PyTorch device benchmark",
        why: format!("{e}: {}", String::from_utf8_lossy(&out.stdout)),
    })
}
