//! Every model against its PyTorch twin (`scripts/torch_models.py`), and
//! through a checkpoint and back.
//!
//! Each model is built with a seed, saved as a plies checkpoint, and run on
//! fixed inputs by plies and by PyTorch (which loads the same
//! `model.safetensors`); values and policies must agree to 1e-5 in f32.
//!
//! Python: `$PLIES_TORCH_PYTHON`, else `.venv-torch/bin/python` in the
//! crate root; when neither has torch and safetensors, the test makes
//! `.venv-torch` with `pip install torch safetensors numpy` (about 5 GB).
//! If that fails too the parity test prints a note and passes, unless
//! `PLIES_REQUIRE_PYTHON=1` (as in CI), when it fails.

mod common;

use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};
use plies::checkpoint::{self, CheckpointConfig, TrainingInfo};
use plies::encode::{EncoderSpec, Perspective};
use plies::model::{
    build, seeded_init, Activation, Cnn3Config, Cnn3NetConfig, InputShape, LinearConfig,
    MdrnnConfig, MlpNetConfig, ModelConfig, OutputActivation, ResNetConfig, WeightInit,
};
use plies::util::seeded_rng;
use rand::RngExt;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const TOLERANCE: f32 = 1e-5;

struct Case {
    name: &'static str,
    cfg: ModelConfig,
    /// Planes and globals the encoder gives (the checkpoint's encoder).
    input: InputShape,
    /// Boards to run on, `[H, W]` (the mdrnn runs on other sizes too).
    boards: Vec<[usize; 2]>,
}

fn cases() -> Vec<Case> {
    let case = |name, cfg: ModelConfig, input: InputShape| Case {
        name,
        cfg,
        input,
        boards: vec![[input.planes[1], input.planes[2]]],
    };
    let mut v = vec![
        case(
            "linear",
            ModelConfig::Linear(LinearConfig::new(InputShape::new([6, 8, 8], 3))),
            InputShape::new([6, 8, 8], 3),
        ),
        case(
            "linear-globals-only",
            ModelConfig::Linear(LinearConfig {
                board: false,
                ..LinearConfig::new(InputShape::new([6, 8, 8], 5))
            }),
            InputShape::new([6, 8, 8], 5),
        ),
        case(
            "linear-material",
            ModelConfig::Linear(LinearConfig::arimaa_material()),
            InputShape::new([6, 8, 8], 0),
        ),
        case(
            "mlp",
            ModelConfig::Mlp(MlpNetConfig {
                inputs: 4 * 10 * 10 + 3,
                hidden: vec![40, 20],
                activation: Activation::Elliott { beta: 5.0 },
                init: WeightInit::FanIn,
                dropout: 0.2,
                output: OutputActivation::Tanh,
            }),
            InputShape::new([4, 10, 10], 3),
        ),
        case(
            "cnn3",
            ModelConfig::Cnn3(Cnn3NetConfig::new(
                InputShape::new([6, 8, 8], 0),
                Cnn3Config::default(),
            )),
            InputShape::new([6, 8, 8], 0),
        ),
        case(
            "resnet",
            ModelConfig::Resnet(ResNetConfig {
                channels: 16,
                value_hidden: 32,
                policy: true,
                ..ResNetConfig::tiny(InputShape::new([3, 7, 6], 2))
            }),
            InputShape::new([3, 7, 6], 2),
        ),
    ];
    let mut mdrnn = case(
        "mdrnn",
        ModelConfig::Mdrnn(MdrnnConfig {
            init_std: 0.5,
            ..MdrnnConfig::stones(7, 10)
        }),
        InputShape::new([2, 7, 7], 0),
    );
    mdrnn.boards.push([9, 5]);
    v.push(mdrnn);
    v
}

/// Builds the case's model with a seed; the resnet's batch-norm running
/// statistics are moved off their start by three training passes.
fn make(case: &Case, seed: u64) -> HashMap<String, Tensor> {
    let dev = Device::Cpu;
    let vm = VarMap::new();
    let net = build(&case.cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
    seeded_init(&vm, &case.cfg, &mut seeded_rng(seed, 0), &dev).unwrap();
    if matches!(case.cfg, ModelConfig::Resnet(_)) {
        for i in 0..3 {
            let (x, g) = inputs(case.input, case.boards[0], 16, seed + 100 + i);
            net.forward(&x, g.as_ref(), true).unwrap();
        }
    }
    let data = vm.data().lock().unwrap();
    data.iter()
        .map(|(k, v)| (k.clone(), v.as_tensor().copy().unwrap()))
        .collect()
}

fn inputs(input: InputShape, board: [usize; 2], b: usize, seed: u64) -> (Tensor, Option<Tensor>) {
    let dev = Device::Cpu;
    let c = input.planes[0];
    let [h, w] = board;
    let mut rng = seeded_rng(seed, 1);
    let planes: Vec<f32> = (0..b * c * h * w)
        .map(|_| [-1.0, 0.0, 0.0, 0.0, 1.0][rng.random_range(0..5usize)])
        .collect();
    let planes = Tensor::from_vec(planes, (b, c, h, w), &dev).unwrap();
    let globals = (input.globals > 0).then(|| {
        let g: Vec<f32> = (0..b * input.globals)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect();
        Tensor::from_vec(g, (b, input.globals), &dev).unwrap()
    });
    (planes, globals)
}

fn save_checkpoint(dir: &Path, case: &Case, tensors: &HashMap<String, Tensor>) {
    let encoder = EncoderSpec {
        name: format!("test-{}", case.name),
        version: 1,
        shape: case.input.planes,
        globals: case.input.globals,
        perspective: Perspective::SideToMove,
    };
    let cfg = CheckpointConfig::new(
        "test",
        encoder,
        case.cfg.clone(),
        TrainingInfo {
            method: "parity test".into(),
            seed: Some(1),
            ..Default::default()
        },
    );
    checkpoint::save(dir, &cfg, tensors).unwrap();
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.dims(), b.dims());
    (a - b)
        .unwrap()
        .abs()
        .unwrap()
        .flatten_all()
        .unwrap()
        .max(0)
        .unwrap()
        .to_scalar::<f32>()
        .unwrap()
}

/// Saves every model, loads it back, and checks the loaded model gives the
/// same outputs as the one that was saved.
#[test]
fn every_model_round_trips_through_a_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    for case in cases() {
        let tensors = make(&case, 3);
        let dir = tmp.path().join(case.name);
        save_checkpoint(&dir, &case, &tensors);
        let ck = checkpoint::load(&dir, Some("test"), None).unwrap();
        assert_eq!(ck.config.model, case.cfg);
        let loaded = ck.model(&Device::Cpu).unwrap();
        let original = build(
            &case.cfg,
            VarBuilder::from_tensors(tensors.clone(), DType::F32, &Device::Cpu),
        )
        .unwrap();
        for &board in &case.boards {
            let (x, g) = inputs(case.input, board, 5, 11);
            let a = original.forward(&x, g.as_ref(), false).unwrap();
            let b = loaded.forward(&x, g.as_ref(), false).unwrap();
            assert_eq!(max_abs_diff(&a.value, &b.value), 0.0, "{}", case.name);
            assert_eq!(a.policy.is_some(), case.cfg.has_policy(), "{}", case.name);
            if let (Some(p), Some(q)) = (&a.policy, &b.policy) {
                assert_eq!(max_abs_diff(p, q), 0.0, "{}", case.name);
            }
        }
        // The saved config refuses another encoder's planes.
        let text = std::fs::read_to_string(dir.join("config.json")).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["encoder"]["shape"][0] = 5.into();
        std::fs::write(dir.join("config.json"), v.to_string()).unwrap();
        let e = checkpoint::load(&dir, None, None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("config.json") && e.contains("input"),
            "{}: {e}",
            case.name
        );
    }
}

fn python() -> Option<PathBuf> {
    common::PythonEnv {
        env_var: "PLIES_TORCH_PYTHON",
        venv: ".venv-torch",
        import: "torch, safetensors, numpy",
        packages: &["torch", "safetensors", "numpy"],
    }
    .find()
}

#[test]
fn every_model_matches_pytorch() {
    let Some(python) = python() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut args: Vec<PathBuf> = Vec::new();
    let mut expected = Vec::new();
    for case in cases() {
        let dir = tmp.path().join(case.name);
        save_checkpoint(&dir, &case, &make(&case, 7));
        let net = checkpoint::load(&dir, None, None)
            .unwrap()
            .model(&Device::Cpu)
            .unwrap();
        for (n, &board) in case.boards.iter().enumerate() {
            let (x, g) = inputs(case.input, board, 6, 21 + n as u64);
            let mut t = HashMap::from([("planes".to_string(), x.clone())]);
            if let Some(g) = &g {
                t.insert("globals".into(), g.clone());
            }
            let input_file = tmp.path().join(format!("{}-{n}-in.safetensors", case.name));
            let out_file = tmp
                .path()
                .join(format!("{}-{n}-out.safetensors", case.name));
            candle_core::safetensors::save(&t, &input_file).unwrap();
            args.extend([dir.clone(), input_file, out_file.clone()]);
            let ours = net.forward(&x, g.as_ref(), false).unwrap();
            expected.push((
                format!("{} {}x{}", case.name, board[0], board[1]),
                ours,
                out_file,
            ));
        }
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(&python)
        .arg(format!("{root}/scripts/torch_models.py"))
        .args(&args)
        .output()
        .expect("run scripts/torch_models.py");
    assert!(
        out.status.success(),
        "torch_models.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut worst = Vec::new();
    for (name, ours, file) in expected {
        let theirs = candle_core::safetensors::load(&file, &Device::Cpu).unwrap();
        let dv = max_abs_diff(&ours.value, &theirs["value"]);
        let v: Vec<f32> = ours.value.to_vec1().unwrap();
        let spread =
            v.iter().fold(f32::MIN, |a, &b| a.max(b)) - v.iter().fold(f32::MAX, |a, &b| a.min(b));
        assert!(
            spread > 1e-4,
            "{name}: values {v:?} do not vary, a weak comparison"
        );
        let dp = match (&ours.policy, theirs.get("policy")) {
            (Some(p), Some(q)) => Some(max_abs_diff(p, q)),
            (None, None) => None,
            (a, b) => panic!(
                "{name}: policy {} here, {} in PyTorch",
                a.is_some(),
                b.is_some()
            ),
        };
        let dp_text = dp.map_or("-".to_string(), |d| format!("{d:.2e}"));
        eprintln!("{name}: max |value diff| {dv:.2e}, max |policy diff| {dp_text}");
        worst.push((name, dv, dp));
    }
    for (name, dv, dp) in worst {
        assert!(dv <= TOLERANCE, "{name}: value differs by {dv}");
        assert!(
            dp.unwrap_or(0.0) <= TOLERANCE,
            "{name}: policy differs by {dp:?}"
        );
    }
}
