//! plies and Python's huggingface_hub sharing one cache, both ways, for
//! checkpoints and datasets.

use crate::common::{self, text};
use crate::env::Env;
use crate::files::{copy_dir, files_equal, root, snapshot, CKPT_FILES, TTT};
use crate::server::Hub;
use std::path::{Path, PathBuf};
use std::process::Command;

fn hub_python() -> Option<PathBuf> {
    common::PythonEnv {
        env_var: "PLIES_HUB_PYTHON",
        venv: ".venv-hub",
        import: "huggingface_hub, safetensors, numpy",
        packages: &["huggingface_hub==2.4.0", "safetensors", "numpy"],
    }
    .find()
}

fn interop(python: &Path, env: &Env, args: &[&str]) -> serde_json::Value {
    let o = env
        .apply(&mut Command::new(python))
        .arg(root().join("scripts/hub_interop.py"))
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "hub_interop.py {args:?}:\n{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", text(&o)))
}

#[test]
fn plies_and_huggingface_hub_share_one_cache_both_ways() {
    let Some(python) = hub_python() else { return };
    let Some(hub) = Hub::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let env = Env::new(&hub, tmp.path());
    let ttt = root().join(TTT);

    // plies uploads and downloads; Python finds every file in the cache
    // without the network, and safetensors loads the weights.
    env.ok(&["hub", "upload", ttt.to_str().unwrap(), "team/from-plies"]);
    env.ok(&["hub", "download", "team/from-plies"]);
    let before = hub.requests();
    let found = interop(
        &python,
        &env,
        &[
            "cached",
            "team/from-plies",
            "config.json",
            "model.safetensors",
            "README.md",
        ],
    );
    assert_eq!(hub.requests(), before, "local_files_only asked the network");
    let ck = plies::checkpoint::load(&ttt, None, None).unwrap();
    let tensors = found["model.safetensors"]["tensors"].as_object().unwrap();
    for (name, shape) in ck.config.model.expected_tensors() {
        let got: Vec<usize> = serde_json::from_value(tensors[&name].clone()).unwrap();
        assert_eq!(got, shape, "{name}");
    }

    // Python uploads and downloads; plies reads the checkpoint from that
    // cache with the hub unreachable.
    let copy = tmp.path().join("ttt-copy");
    copy_dir(&ttt, &copy);
    interop(
        &python,
        &env,
        &["upload", copy.to_str().unwrap(), "team/from-python"],
    );
    let got = interop(&python, &env, &["download", "team/from-python"]);
    let snap = PathBuf::from(got["snapshot"].as_str().unwrap());
    files_equal(&ttt, &snap, &CKPT_FILES);
    let offline = Env {
        endpoint: "http://127.0.0.1:9".into(),
        ..Env::new(&hub, tmp.path())
    };
    offline.ok(&[
        "match",
        "--game",
        "tictactoe",
        "--a",
        "greedy:eval=ckpt:hf:team/from-python",
        "--b",
        "random",
        "--games",
        "2",
    ]);

    // A dataset: plies uploads it, Python downloads it with the sha256 the
    // manifest lists, and plies' download verifies it.
    let data = tmp.path().join("data");
    env.ok(&[
        "data",
        "generate",
        "--game",
        "tictactoe",
        "--a",
        "random",
        "--b",
        "random",
        "--games",
        "80",
        "--seed",
        "4",
        "--shard-rows",
        "100",
        "--out",
        data.to_str().unwrap(),
        "--quiet",
    ]);
    env.ok(&[
        "hub",
        "upload",
        data.to_str().unwrap(),
        "team/ttt-data",
        "--repo-type",
        "dataset",
    ]);
    let py = interop(
        &python,
        &env,
        &["download", "team/ttt-data", "--kind", "dataset"],
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join("manifest.json")).unwrap()).unwrap();
    let shards = manifest["shards"].as_array().unwrap();
    assert!(shards.len() > 1);
    for s in shards {
        assert_eq!(py["files"][s["file"].as_str().unwrap()], s["sha256"], "{s}");
    }
    let json = env.ok(&[
        "hub",
        "download",
        "team/ttt-data",
        "--repo-type",
        "dataset",
        "--json",
    ]);
    assert!(json.contains("sha256 of every shard"), "{json}");
    let dir = snapshot(&json);
    files_equal(&data, &dir, &["manifest.json"]);
}
