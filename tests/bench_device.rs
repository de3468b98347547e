//! `plies bench device --device cpu --quick`, end to end with its PyTorch
//! peer: every row of the quick plan is in the JSON, PyTorch computes the
//! same values from the same checkpoint, and nothing is named a GPU (no
//! timing assertions).
//!
//! Python: as tests/model_parity.rs (`$PLIES_TORCH_PYTHON`, else
//! `.venv-torch`); without torch the PyTorch half is skipped with a note,
//! unless `PLIES_REQUIRE_PYTHON=1`, when the test fails.

mod common;

use plies::bench::device::plan::plan;
use serde_json::Value;
use std::process::Command;

fn python() -> Option<std::path::PathBuf> {
    common::PythonEnv {
        env_var: "PLIES_TORCH_PYTHON",
        venv: ".venv-torch",
        import: "torch, safetensors, numpy",
        packages: &["torch", "safetensors", "numpy"],
    }
    .find()
}

fn rate(v: &Value, key: &str) -> Option<f64> {
    v[key].as_f64().filter(|x| x.is_finite() && *x > 0.0)
}

#[test]
fn quick_cpu_run_reports_every_row() {
    let python = python();
    let out = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_plies"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "bench", "device", "--device", "cpu", "--quick", "--json", "--out",
        ])
        .arg(out.path());
    match &python {
        Some(p) => cmd.arg("--python").arg(p),
        None => cmd.arg("--no-torch"),
    };
    let o = cmd.output().expect("run plies");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("device-bench.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(v, file, "the file holds what was printed");
    assert!(out.path().join("device-bench.txt").exists());

    assert_eq!(v["device"], "cpu");
    assert_eq!(v["gpu"], Value::Null, "a CPU run names no GPU");
    assert_eq!(v["quick"], true);
    let p = plan(true);
    let infer = v["infer"].as_array().unwrap();
    let train = v["train"].as_array().unwrap();
    let nets = v["nets"].as_array().unwrap();
    assert_eq!(infer.len(), p.nets.len() * p.batches.len());
    assert_eq!(train.len(), p.nets.len() * p.train_batches.len());
    assert_eq!(nets.len(), p.nets.len());
    let mut rows = infer.iter();
    for (i, net) in p.nets.iter().enumerate() {
        for &batch in &p.batches {
            let r = rows.next().unwrap();
            assert_eq!(
                (r["net"].as_str(), r["batch"].as_u64()),
                (Some(net.name.as_str()), Some(batch as u64))
            );
            assert!(rate(r, "plies").is_some(), "{r}");
            if python.is_some() {
                assert!(rate(r, "torch_eager").is_some(), "{r}");
                assert!(r["plies_over_eager"].as_f64().is_some(), "{r}");
                // --quick compiles the first network only; a compile that
                // fails says why instead.
                let compiled = rate(r, "torch_compile").is_some();
                let note = nets[i]["compile_note"].as_str().unwrap_or("");
                if i == 0 {
                    assert!(compiled || !note.is_empty(), "{r} {note}");
                } else {
                    assert!(!compiled && note.starts_with("not tried"), "{r} {note}");
                }
            }
        }
        for (k, &batch) in p.train_batches.iter().enumerate() {
            let t = &train[i * p.train_batches.len() + k];
            assert_eq!(t["net"].as_str(), Some(net.name.as_str()));
            assert_eq!(t["batch"].as_u64(), Some(batch as u64));
            assert!(rate(t, "plies").is_some(), "{t}");
            // bf16 training has a figure, or says why not (the MDRNN).
            let mdrnn = net.name.starts_with("mdrnn");
            assert_eq!(rate(t, "plies_bf16").is_some(), !mdrnn, "{t}");
            assert_eq!(t["bf16_note"].is_string(), mdrnn, "{t}");
            if python.is_some() {
                assert!(rate(t, "torch_eager").is_some(), "{t}");
                assert!(rate(t, "torch_bf16").is_some(), "{t}");
            }
        }
        let n = &nets[i];
        // bf16 has a figure and an accuracy cost, or says why not.
        assert!(
            n["bf16_max_abs_diff"].is_f64() != n["bf16_note"].is_string(),
            "{n}"
        );
        if python.is_some() {
            let d = n["torch_max_abs_diff"].as_f64().expect("parity checked");
            assert!(d < 1e-4, "{}: PyTorch differs by {d}", net.name);
        }
    }
    // The MDRNNs run in bf16 on the CPU: figures and a nonzero cost.
    let mdrnn = nets
        .iter()
        .find(|n| n["net"].as_str().unwrap().starts_with("mdrnn"))
        .unwrap();
    assert!(
        mdrnn["bf16_max_abs_diff"].as_f64().unwrap() > 0.0,
        "{mdrnn}"
    );
    let threads: Vec<u64> = v["mcts"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert!(rate(r, "batched_sims_per_s").is_some(), "{r}");
            r["threads"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(
        threads,
        p.mcts_threads.iter().map(|&t| t as u64).collect::<Vec<_>>()
    );
    let targets = v["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 4);
    // No quick row is at batch >= 1024 or 512 threads.
    assert_eq!(targets[1]["status"], "unmeasured");
    assert_eq!(targets[3]["status"], "unmeasured");
    if python.is_none() {
        assert_eq!(targets[0]["status"], "unmeasured");
        // bf16 training: plies' figures, but no autocast's to compare.
        assert_eq!(targets[2]["status"], "unmeasured");
        assert!(v["torch_note"].as_str().unwrap().contains("--no-torch"));
    }
}

#[test]
fn an_unknown_device_is_refused_naming_it() {
    let o = common::plies(&[
        "bench",
        "device",
        "--device",
        "tpu",
        "--quick",
        "--no-torch",
    ]);
    assert!(!o.status.success());
    let text = common::text(&o);
    assert!(
        text.contains("--device tpu") && text.contains("expected cpu, cuda"),
        "{text}"
    );
}
