//! `plies hub` and `ckpt:hf:` against `scripts/hub_server.py`, a loopback
//! server speaking the hub protocol (standard-library Python, so these
//! tests need only `python3`), and Python's `huggingface_hub` and
//! `safetensors` (`scripts/hub_interop.py`) through the same server and
//! the same cache directory.
//!
//! Python with huggingface_hub: `$PLIES_HUB_PYTHON`, else
//! `.venv-hub/bin/python` in the crate root (created with pip when
//! missing); without it the interop test prints a note and passes, unless
//! `PLIES_REQUIRE_PYTHON=1` (as in CI), when it fails.

mod common;

use common::text;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const TOKEN: &str = "hf_test_token";
const TTT: &str = "checkpoints/tictactoe-mlp80-td";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The loopback hub, stopped when dropped.
struct Hub {
    child: Child,
    url: String,
}

impl Hub {
    fn start() -> Option<Hub> {
        let child = Command::new("python3")
            .arg(root().join("scripts/hub_server.py"))
            .args(["--token", TOKEN, "--max-seconds", "600"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                let required = std::env::var("PLIES_REQUIRE_PYTHON").is_ok_and(|v| v == "1");
                assert!(
                    !required,
                    "PLIES_REQUIRE_PYTHON=1 but python3 cannot run: {e}"
                );
                eprintln!("skipped: python3 cannot run the test hub ({e})");
                return None;
            }
        };
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("http://127.0.0.1:"), "hub said {line:?}");
        Some(Hub {
            child,
            url: line.trim().to_string(),
        })
    }

    /// One request to the server's test endpoints; the body of the answer.
    fn call(&self, method: &str, path: &str, body: &str) -> String {
        let addr = self.url.trim_start_matches("http://");
        let mut s = TcpStream::connect(addr).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        answer
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default()
    }

    /// Makes the server fail GETs of `file` (`500`, `cut`, `corrupt`).
    fn fault(&self, file: &str, kind: &str) {
        self.call(
            "POST",
            "/_test/fault",
            &format!(r#"{{"file":"{file}","kind":"{kind}"}}"#),
        );
    }

    fn clear_faults(&self) {
        self.call("POST", "/_test/fault", "{}");
    }

    /// How many hub requests (not these test calls) the server has answered.
    fn requests(&self) -> usize {
        let log: Vec<String> = serde_json::from_str(&self.call("GET", "/_test/log", "")).unwrap();
        log.iter().filter(|l| !l.contains(" /_test/")).count()
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A cache directory and the environment plies and Python share.
struct Env {
    endpoint: String,
    token: String,
    home: PathBuf,
}

impl Env {
    fn new(hub: &Hub, dir: &Path) -> Env {
        Env {
            endpoint: hub.url.clone(),
            token: TOKEN.into(),
            home: dir.join("hf-home"),
        }
    }

    fn cache(&self) -> PathBuf {
        self.home.join("hub")
    }

    fn apply<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        cmd.env("HF_ENDPOINT", &self.endpoint)
            .env("HF_TOKEN", &self.token)
            .env("HF_HUB_CACHE", self.cache())
            .env("HF_HOME", &self.home)
            .env_remove("HUGGINGFACE_HUB_CACHE")
            .env("HF_HUB_DISABLE_TELEMETRY", "1")
            // The test hub speaks the LFS protocol, not Xet storage.
            .env("HF_HUB_DISABLE_XET", "1")
            .env("RAYON_NUM_THREADS", "2")
    }

    fn plies(&self, args: &[&str]) -> Output {
        self.apply(&mut Command::new(env!("CARGO_BIN_EXE_plies")))
            .args(args)
            .output()
            .unwrap()
    }

    /// stdout of a run that must succeed.
    fn ok(&self, args: &[&str]) -> String {
        let o = self.plies(args);
        assert!(o.status.success(), "plies {args:?}:\n{}", text(&o));
        String::from_utf8_lossy(&o.stdout).to_string()
    }

    fn fails(&self, args: &[&str]) -> String {
        let o = self.plies(args);
        assert!(
            !o.status.success(),
            "plies {args:?} should fail:\n{}",
            text(&o)
        );
        String::from_utf8_lossy(&o.stderr).to_string()
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}

fn files_equal(a: &Path, b: &Path, names: &[&str]) {
    for n in names {
        let (x, y) = (
            std::fs::read(a.join(n)).unwrap(),
            std::fs::read(b.join(n)).unwrap(),
        );
        assert!(
            x == y,
            "{n} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

const CKPT_FILES: [&str; 3] = ["config.json", "model.safetensors", "README.md"];

/// The snapshot directory `plies hub download --json` reports.
fn snapshot(json: &str) -> PathBuf {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    PathBuf::from(v["path"].as_str().unwrap())
}

/// The main job's Arimaa linear evaluator (`scripts/quickstart.sh`: the
/// same `plies train` flags, one epoch on a small self-play dataset).
fn main_job_checkpoint(dir: &Path) -> PathBuf {
    let sp = dir.join("selfplay");
    let o = common::plies(&[
        "selfplay",
        "--game",
        "arimaa",
        "--white",
        "random-steps",
        "--black",
        "random-steps",
        "--games",
        "24",
        "--seed",
        "5",
        "--dataset",
        "arimaa-6x8x8",
        "--out",
        sp.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = dir.join("arimaa-linear");
    let model = root().join("data/arimaa/models/linear-material.json");
    let o = common::plies(&[
        "train",
        "--data",
        sp.join("dataset").to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--optimizer",
        "nesterov",
        "--lr",
        "0.001",
        "--momentum",
        "0.9",
        "--epochs",
        "1",
        "--batch",
        "256",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    out.join("best")
}

/// Plays one AEI session: both setups, then one move by the engine, read
/// before `quit` (which would end the search unanswered).
fn aei_move(env: &Env, player: &str) -> String {
    let mut child = env
        .apply(&mut Command::new(env!("CARGO_BIN_EXE_plies")))
        .args(["engine", "aei", "--player", player, "--seed", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(
            b"aei\nisready\nnewgame\n\
            makemove Ra1 Rb1 Rc1 Rd1 Re1 Rf1 Rg1 Rh1 Ha2 Db2 Cc2 Md2 Ee2 Cf2 Dg2 Hh2\n\
            makemove ra8 rb8 rc8 rd8 re8 rf8 rg8 rh8 ha7 db7 cc7 ed7 me7 cf7 dg7 hh7\n\
            go\n",
        )
        .unwrap();
    let mut seen = Vec::new();
    let mut best = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(mv) = line.strip_prefix("bestmove ") {
            best = Some(mv.to_string());
            break;
        }
        seen.push(line);
    }
    let _ = stdin.write_all(b"quit\n");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    best.unwrap_or_else(|| panic!("no bestmove:\n{}\n{}", seen.join("\n"), text(&out)))
}

#[test]
fn main_job_checkpoint_goes_up_and_comes_back_into_a_match_and_an_aei_session() {
    let Some(hub) = Hub::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let env = Env::new(&hub, tmp.path());
    let ckpt = main_job_checkpoint(tmp.path());
    let up = env.ok(&[
        "hub",
        "upload",
        ckpt.to_str().unwrap(),
        "team/arimaa-linear",
        "--message",
        "main job checkpoint",
        "--json",
    ]);
    assert!(up.contains("\"model.safetensors\""), "{up}");

    // A match through ckpt:hf: downloads into the cache; the files there
    // are the trained ones, byte for byte.
    let spec = "greedy:eval=ckpt:hf:team/arimaa-linear";
    let matched = env.ok(&[
        "match",
        "--game",
        "arimaa",
        "--a",
        spec,
        "--b",
        "random",
        "--games",
        "2",
        "--max-plies",
        "40",
        "--seed",
        "1",
        "--quiet",
    ]);
    assert!(
        matched.contains(&format!("{spec} vs random (2 games")),
        "{matched}"
    );
    let snap = std::fs::read_dir(env.cache().join("models--team--arimaa-linear/snapshots"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    files_equal(&ckpt, &snap, &CKPT_FILES);

    // The AEI engine reads it from the cache alone: the hub sees no request.
    let before = hub.requests();
    let mv = aei_move(&env, &format!("{spec},setup=standard"));
    assert!(!mv.trim().is_empty());
    assert_eq!(
        hub.requests(),
        before,
        "a cached checkpoint asked the network"
    );

    // The same move with the local directory: the network's copy plays alike.
    let local = aei_move(
        &env,
        &format!("greedy:eval=ckpt:{},setup=standard", ckpt.display()),
    );
    assert_eq!(mv, local);

    // And `hub download --out` gives the same files in a plain directory.
    let out = tmp.path().join("copy");
    env.ok(&[
        "hub",
        "download",
        "team/arimaa-linear",
        "--out",
        out.to_str().unwrap(),
    ]);
    files_equal(&ckpt, &out, &CKPT_FILES);
}

#[test]
fn a_checkpoint_continues_training_and_evaluates_from_the_hub() {
    let Some(hub) = Hub::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let env = Env::new(&hub, tmp.path());
    let ttt = root().join(TTT);
    env.ok(&["hub", "upload", ttt.to_str().unwrap(), "team/ttt@v1"]);
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
        "60",
        "--seed",
        "2",
        "--out",
        data.to_str().unwrap(),
        "--quiet",
    ]);
    let report = env.ok(&[
        "evaluate",
        "--checkpoint",
        "ckpt:hf:team/ttt@v1",
        "--data",
        data.to_str().unwrap(),
        "--split",
        "all",
    ]);
    assert!(report.contains("hf:team/ttt@v1"), "{report}");
    let out = tmp.path().join("tuned");
    env.ok(&[
        "train",
        "--data",
        data.to_str().unwrap(),
        "--model",
        "ckpt:hf:team/ttt@v1",
        "--epochs",
        "1",
        "--batch",
        "32",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let tuned = plies::checkpoint::load(&out.join("best"), Some("tictactoe"), None).unwrap();
    let base = plies::checkpoint::load(&ttt, None, None).unwrap();
    assert_eq!(tuned.config.model, base.config.model);
}

#[test]
fn every_failure_names_the_repository_revision_and_file() {
    let Some(hub) = Hub::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let env = Env::new(&hub, tmp.path());
    let ttt = root().join(TTT);
    env.ok(&["hub", "upload", ttt.to_str().unwrap(), "team/ttt"]);
    let matched = |env: &Env, repo: &str| {
        let spec = format!("greedy:eval=ckpt:hf:{repo}");
        env.fails(&[
            "match",
            "--game",
            "tictactoe",
            "--a",
            &spec,
            "--b",
            "random",
            "--games",
            "2",
        ])
    };

    let e = env.fails(&["hub", "download", "team/nope"]);
    assert!(
        e.contains("team/nope@main") && e.contains("no such repository"),
        "{e}"
    );
    let e = matched(&env, "team/ttt@nope");
    assert!(
        e.contains("team/ttt@nope file 'config.json'") && e.contains("no such revision"),
        "{e}"
    );
    let e = env.fails(&["hub", "download", "team/ttt", "--revision", "nope"]);
    assert!(
        e.contains("team/ttt@nope") && e.contains("no such revision"),
        "{e}"
    );

    // A 500 on the weights: named, and nothing of them in the cache.
    let blobs = env.cache().join("models--team--ttt/blobs");
    let complete_blobs = || -> usize {
        std::fs::read_dir(&blobs).map_or(0, |d| {
            d.filter(|e| {
                let n = e
                    .as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .to_string();
                n.len() == 64 && !n.contains('.')
            })
            .count()
        })
    };
    hub.fault("model.safetensors", "500");
    let e = matched(&env, "team/ttt");
    // (hf-hub stores the 500's body as the file once its retries run out;
    // the check against the ETag refuses it, quoting the server's message.)
    assert!(
        e.contains("team/ttt@main file 'model.safetensors'") && e.contains("Internal Error"),
        "{e}"
    );
    assert_eq!(complete_blobs(), 0);
    // The connection cut half-way through the weights.
    hub.fault("model.safetensors", "cut");
    let e = matched(&env, "team/ttt");
    assert!(e.contains("team/ttt@main file 'model.safetensors'"), "{e}");
    assert_eq!(
        complete_blobs(),
        0,
        "a cut download is in the cache as complete"
    );
    // Changed bytes under the true sha256: refused and removed.
    hub.fault("model.safetensors", "corrupt");
    let e = matched(&env, "team/ttt");
    assert!(
        e.contains("team/ttt@main file 'model.safetensors'") && e.contains("sha256"),
        "{e}"
    );
    assert_eq!(
        complete_blobs(),
        0,
        "a corrupt download stayed in the cache"
    );
    hub.clear_faults();

    // A token the hub refuses.
    let refused = Env {
        token: "hf_wrong".into(),
        ..Env::new(&hub, &tmp.path().join("other"))
    };
    let e = matched(&refused, "team/ttt");
    assert!(
        e.contains("team/ttt@main file 'config.json'") && e.contains("refused"),
        "{e}"
    );
    let e = refused.fails(&["hub", "upload", ttt.to_str().unwrap(), "team/other"]);
    assert!(
        e.contains("team/other@main") && e.contains("refused"),
        "{e}"
    );

    // No network: a fresh cache fails naming the cache, a filled one works.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let offline = |home: &Path| Env {
        endpoint: format!("http://127.0.0.1:{port}"),
        ..Env::new(&hub, home)
    };
    let e = matched(&offline(&tmp.path().join("empty")), "team/ttt");
    assert!(
        e.contains("team/ttt@main file 'config.json'") && e.contains("cannot be reached"),
        "{e}"
    );
    env.ok(&[
        "match",
        "--game",
        "tictactoe",
        "--a",
        "greedy:eval=ckpt:hf:team/ttt",
        "--b",
        "random",
        "--games",
        "2",
    ]);
    offline(tmp.path()).ok(&[
        "match",
        "--game",
        "tictactoe",
        "--a",
        "greedy:eval=ckpt:hf:team/ttt",
        "--b",
        "random",
        "--games",
        "2",
    ]);

    // Without HF_HUB_CACHE the cache is $HF_HOME/hub.
    let home = tmp.path().join("home-only");
    let o = env
        .apply(&mut Command::new(env!("CARGO_BIN_EXE_plies")))
        .env_remove("HF_HUB_CACHE")
        .env("HF_HOME", &home)
        .args([
            "match",
            "--game",
            "tictactoe",
            "--a",
            "greedy:eval=ckpt:hf:team/ttt",
        ])
        .args(["--b", "random", "--games", "2"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(home.join("hub/models--team--ttt/refs/main").is_file());
}

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
