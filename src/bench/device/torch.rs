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
    pub train_batches: Vec<usize>,
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
    /// `(batch, eager, compiled, bf16 autocast)` positions/s of training
    /// steps, one per training batch.
    #[serde(default)]
    pub train: Vec<PeerTrainRow>,
    /// Why torch.compile gave no figure for this network.
    pub compile_note: Option<String>,
    /// `(batch, rates)` of PyTorch as its users tune it (CUDA only).
    #[serde(default)]
    pub tuned: Vec<(usize, TunedRates)>,
    /// Why a tuned figure is missing.
    #[serde(default)]
    pub tuned_note: Option<String>,
}

/// `(batch, eager, compiled, bf16 autocast)` positions/s of training steps.
pub type PeerTrainRow = (usize, Option<f64>, Option<f64>, Option<f64>);

/// PyTorch's forward pass, positions/s, tuned as its users run it on a GPU
/// (cudnn.benchmark on in every mode).
#[derive(Deserialize, Serialize, Debug, Default, Clone, Copy, PartialEq)]
#[serde(default)]
pub struct TunedRates {
    /// f32 with TF32 products.
    pub tf32: Option<f64>,
    /// bf16 autocast.
    pub bf16: Option<f64>,
    /// CUDA-graph replay, f32 (batch <= 64).
    pub graph: Option<f64>,
    /// CUDA-graph replay under bf16 autocast (batch <= 64).
    pub graph_bf16: Option<f64>,
}

impl TunedRates {
    pub fn any(&self) -> bool {
        [self.tf32, self.bf16, self.graph, self.graph_bf16]
            .iter()
            .any(Option::is_some)
    }

    /// PyTorch's faster bf16 mode (autocast or its graph replay): what
    /// plies' bf16 is compared with.
    pub fn best_bf16(&self) -> Option<f64> {
        match (self.bf16, self.graph_bf16) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peer_s_tuned_rates_are_read_and_may_be_absent() {
        let with = r#"{"torch": "2.11", "device_name": "H100", "nets": [{"name": "cnn3",
            "max_abs_diff": 1e-7, "infer": [[64, 10.0, null]], "train": [[256, 5.0, null, 9.0]],
            "compile_note": null, "tuned": [[64, {"tf32": 11.0, "bf16": 12.0,
            "graph": 40.0, "graph_bf16": null}]], "tuned_note": "graph_bf16 at 64: no"}]}"#;
        let r: PeerResult = serde_json::from_str(with).expect("parses");
        let net = &r.nets[0];
        assert_eq!(net.tuned[0].0, 64);
        assert_eq!(net.tuned[0].1.graph, Some(40.0));
        assert_eq!(net.tuned[0].1.graph_bf16, None);
        assert!(net.tuned[0].1.any());
        assert_eq!(net.tuned_note.as_deref(), Some("graph_bf16 at 64: no"));
        assert_eq!(net.train, [(256, Some(5.0), None, Some(9.0))]);
        // A peer on a CPU writes no tuned rates.
        let without = r#"{"torch": "2.11", "device_name": null, "nets": [{"name": "cnn3",
            "max_abs_diff": null, "infer": [], "train": [], "compile_note": null}]}"#;
        let r: PeerResult = serde_json::from_str(without).expect("parses");
        assert!(r.nets[0].tuned.is_empty() && r.nets[0].tuned_note.is_none());
        assert!(!TunedRates::default().any());
    }
}
