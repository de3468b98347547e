//! Checkpoints: round trip through safetensors + config.json, and clear
//! refusals for every way a checkpoint can disagree with what is asked.

use candle_core::{DType, Device, Tensor};
use plies::checkpoint::{self, CheckpointConfig, CheckpointError, TrainingInfo};
use plies::encode::{tictactoe_encoder, Encoder};
use plies::game::{Game, TicTacToe};
use plies::infer::backend::CandleBackend;
use plies::infer::{mlp_evaluator, Evaluator, ModelEvaluator};
use plies::model::{Activation, MlpConfig, ModelConfig, NativeMlp, WeightInit};
use plies::util::seeded_rng;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

fn mlp_cfg() -> MlpConfig {
    MlpConfig {
        inputs: 9,
        hidden: vec![12],
        activation: Activation::Elliott { beta: 5.0 },
        init: WeightInit::Uniform { a: 0.2 },
    }
}

fn write(dir: &Path) -> (NativeMlp, CheckpointConfig) {
    let net = NativeMlp::new(&mlp_cfg(), &mut seeded_rng(4, 0)).unwrap();
    let enc = tictactoe_encoder("tictactoe-9").unwrap();
    let cfg = CheckpointConfig::new(
        "tictactoe",
        enc.spec(),
        ModelConfig::Mlp(mlp_cfg().into()),
        TrainingInfo {
            method: "test".into(),
            seed: Some(4),
            ..Default::default()
        },
    );
    checkpoint::save(dir, &cfg, &net.to_tensors(&Device::Cpu).unwrap()).unwrap();
    (net, cfg)
}

fn positions() -> Vec<TicTacToe> {
    [".../.../...", "x../.../...", "x../.o./...", "xo./.x./..o"]
        .iter()
        .filter_map(|t| TicTacToe::from_text(t).ok())
        .collect()
}

#[test]
fn round_trip_gives_the_same_values_on_candle_and_native() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ck");
    let (net, cfg) = write(&dir);
    for f in ["model.safetensors", "config.json", "README.md"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let ck = checkpoint::load(&dir, Some("tictactoe"), Some("tictactoe-9")).unwrap();
    assert_eq!(ck.config, cfg);
    let enc: Arc<dyn Encoder<TicTacToe>> = Arc::from(tictactoe_encoder("tictactoe-9").unwrap());
    let native = mlp_evaluator(enc.clone(), &net);
    let backend =
        CandleBackend::new(ck.model(&Device::Cpu).unwrap(), Device::Cpu, DType::F32).unwrap();
    let candle = ModelEvaluator::new(enc, Box::new(backend), "ck");
    let ps = positions();
    assert!(ps.len() >= 3);
    let a = native.evaluate(&ps).unwrap();
    let b = candle.evaluate(&ps).unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 1e-5, "{x} vs {y}");
    }
    assert!(a.iter().any(|v| v.abs() > 1e-3));
    let card = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(card.contains("hidden.0.weight") && card.contains("tictactoe-9"));
}

fn rewrite_weights(dir: &Path, f: impl Fn(&mut HashMap<String, Tensor>)) {
    let p = dir.join("model.safetensors");
    let mut t = candle_core::safetensors::load(&p, &Device::Cpu).unwrap();
    f(&mut t);
    candle_core::safetensors::save(&t, &p).unwrap();
}

#[test]
fn a_config_with_a_byte_order_mark_loads_as_without() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ck");
    let (_, cfg) = write(&dir);
    let path = dir.join("config.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
    let ck = checkpoint::load(&dir, Some("tictactoe"), Some("tictactoe-9")).unwrap();
    assert_eq!(ck.config, cfg);
}

#[test]
fn a_tensor_of_the_wrong_shape_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ck");
    write(&dir);
    rewrite_weights(&dir, |t| {
        t.insert(
            "hidden.0.bias".into(),
            Tensor::zeros(13, candle_core::DType::F32, &Device::Cpu).unwrap(),
        );
    });
    match checkpoint::load(&dir, None, None) {
        Err(e @ CheckpointError::ShapeMismatch { .. }) => {
            let s = e.to_string();
            assert!(
                s.contains("hidden.0.bias") && s.contains("[13]") && s.contains("[12]"),
                "{s}"
            );
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a wrong shape was accepted"),
    }
}

#[test]
fn missing_and_extra_tensors_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ck");
    write(&dir);
    rewrite_weights(&dir, |t| {
        t.remove("out.bias");
    });
    let e = checkpoint::load(&dir, None, None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("'out.bias' is missing"), "{e}");
    write(&dir);
    rewrite_weights(&dir, |t| {
        t.insert(
            "hidden.1.weight".into(),
            Tensor::zeros((2, 2), candle_core::DType::F32, &Device::Cpu).unwrap(),
        );
    });
    let e = checkpoint::load(&dir, None, None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("hidden.1.weight") && e.contains("not part of"),
        "{e}"
    );
}

#[test]
fn another_encoder_or_game_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ck");
    write(&dir);
    let e = checkpoint::load(&dir, None, Some("tictactoe-2x3x3"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("tictactoe-9") && e.contains("tictactoe-2x3x3"),
        "{e}"
    );
    let e = checkpoint::load(&dir, Some("gomoku"), None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("gomoku"), "{e}");
}

#[test]
fn truncated_weights_and_bad_config_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ck");
    write(&dir);
    let p = dir.join("model.safetensors");
    let bytes = std::fs::read(&p).unwrap();
    std::fs::write(&p, &bytes[..bytes.len() - 10]).unwrap();
    let e = checkpoint::load(&dir, None, None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("model.safetensors") && e.contains("not a readable safetensors"),
        "{e}"
    );
    write(&dir);
    let c = dir.join("config.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&c).unwrap()).unwrap();
    v["model"]["hidden"] = "x".into();
    std::fs::write(&c, v.to_string()).unwrap();
    let e = checkpoint::load(&dir, None, None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("config.json"), "{e}");
}

#[test]
fn saving_refuses_tensors_that_disagree_with_the_config_and_keeps_the_old_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ck");
    let (_, cfg) = write(&dir);
    let mut bad = HashMap::new();
    bad.insert(
        "out.bias".to_string(),
        Tensor::zeros(1, candle_core::DType::F32, &Device::Cpu).unwrap(),
    );
    assert!(checkpoint::save(&dir, &cfg, &bad).is_err());
    assert!(checkpoint::load(&dir, None, None).is_ok());
}

/// Checkpoint files get the mode `File::create` would give under the
/// umask, not the private mode of a library's temporary file.
#[cfg(unix)]
#[test]
fn checkpoint_files_get_the_umask_mode() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: umask only sets the process's file-creation mask; 022 is the
    // usual default, so tests creating files meanwhile are unaffected.
    let old = unsafe { libc::umask(0o022) };
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    write(&ck);
    // SAFETY: as above, restoring the previous mask.
    unsafe { libc::umask(old) };
    for f in ["model.safetensors", "config.json", "README.md"] {
        let mode = std::fs::metadata(ck.join(f)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "{f}: {mode:o}");
    }
}

/// The run state beside a checkpoint (`run-state/`) gets the umask's mode
/// too: its tensors are written through a library that stages in 0600.
#[cfg(unix)]
#[test]
fn run_state_files_get_the_umask_mode() {
    use plies::train::run_state::{self, RunState, RUN_STATE_VERSION};
    use std::os::unix::fs::PermissionsExt;
    let state = RunState {
        version: RUN_STATE_VERSION,
        args: serde_json::json!({}),
        epoch: 1,
        batch: 0,
        step: 3,
        train_loss_sum: 0.0,
        train_batches: 0,
        train_positions: 0,
        epoch_seconds: 0.0,
        best_valid_loss: None,
        best_epoch: None,
        bad_epochs: 0,
        history: Vec::new(),
        finished: false,
        stopped_early: false,
    };
    let tensors: HashMap<String, Tensor> = [(
        "w".to_string(),
        Tensor::ones(4, candle_core::DType::F32, &Device::Cpu).unwrap(),
    )]
    .into();
    // SAFETY: as in `checkpoint_files_get_the_umask_mode`.
    let old = unsafe { libc::umask(0o022) };
    let dir = tempfile::tempdir().unwrap();
    let saved = run_state::save(dir.path(), &state, &tensors, &tensors);
    // SAFETY: restoring the previous mask.
    unsafe { libc::umask(old) };
    saved.unwrap();
    let rs = run_state::find(dir.path()).expect("a complete run state");
    for f in ["weights.safetensors", "optimizer.safetensors", "state.json"] {
        let mode = std::fs::metadata(rs.join(f)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "{f}: {mode:o}");
    }
    let loaded = run_state::load(&rs).unwrap();
    assert_eq!(loaded.state, state);
}

/// A shipped checkpoint resolves by name from any folder (as an engine a
/// manager starts in its own folder would), plays through a player spec,
/// and a checkpoint of another game or an unknown name is refused.
#[test]
fn a_shipped_checkpoint_plays_from_any_folder() {
    let away = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_plies"))
        .current_dir(away.path())
        .args([
            "match",
            "--game",
            "tictactoe",
            "--a",
            "greedy:eval=builtin:tictactoe",
            "--b",
            "random",
            "--games",
            "20",
            "--seed",
            "5",
            "--json",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["a"], "greedy:eval=builtin:tictactoe");
    // The TD-trained network at one ply beats random moves clearly (two
    // random players score about +0.2 for whoever moves first, 0 overall).
    assert!(report["equity"].as_f64().unwrap() > 0.5, "{report}");
    let source = plies::checkpoint::CheckpointSource::parse("ckpt:builtin:tictactoe").unwrap();
    assert_eq!(source.to_string(), "builtin:tictactoe");
    let e = source.open(Some("gomoku"), None).err().unwrap().to_string();
    assert!(e.contains("'tictactoe', not 'gomoku'"), "{e}");
    let e = plies::checkpoint::CheckpointSource::parse("builtin:chess")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("builtin:chess") && e.contains("shipped: tictactoe"),
        "{e}"
    );
}

/// Every shipped checkpoint loads as its game and, in a search its card
/// rates it in, clearly beats the same search on a random evaluator (20
/// games, colours alternating): what the network knows, not the search,
/// wins. (Here: +0.65 for Tic-tac-toe's, +0.90 for Connect Four's, +0.70
/// for Pentago's, +1.00 for Amazons', Gomoku's and Arimaa's.)
#[test]
fn every_shipped_checkpoint_plays_its_game() {
    for b in plies::checkpoint::BUILTINS {
        let ck = plies::checkpoint::load(&b.materialize().unwrap(), None, None).unwrap();
        let game = ck.config.game.clone();
        // Each plays in a search its card rates it in: Arimaa's table at
        // one whole turn of alpha-beta (a 50-simulation MCTS there would
        // take minutes a game); the Amazons network with no lookahead (50
        // simulations see little of its 2,000 opening moves); Gomoku's
        // inside the threat player, where it values the quiet moves; the
        // other networks as MCTS leaf evaluators.
        let search = match game.as_str() {
            "arimaa" => "alphabeta:depth=1",
            "amazons" => "greedy",
            "gomoku" => "threats",
            _ => "mcts:sims=50,reuse=off",
        };
        let sep = if search.contains(':') { ',' } else { ':' };
        let spec = format!("{search}{sep}eval=builtin:{}", b.name);
        let twin = format!("{search}{sep}eval=random");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_plies"))
            .env("RAYON_NUM_THREADS", "2")
            .args(["match", "--game", &game, "--a", &spec, "--b", &twin])
            .args(["--games", "20", "--seed", "3", "--json"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "builtin:{}: {text}{}",
            b.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value = serde_json::from_str(&text).unwrap();
        let equity = report["equity"].as_f64().unwrap();
        assert!(equity >= 0.4, "builtin:{} ({game}): {report}", b.name);
    }
}
