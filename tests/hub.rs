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
const CKPT_FILES_SORTED: [&str; 3] = ["README.md", "config.json", "model.safetensors"];

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
    // (The error quotes the server's message; were the body stored as the
    // file, the check against the ETag would refuse it, quoting it too.)
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

/// Every path under `root` (links not followed), for "nothing was
/// written" checks.
fn tree(root: &Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            out.insert(p.strip_prefix(root).unwrap().display().to_string());
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                stack.push(p);
            }
        }
    }
    out
}

/// A repository on the test hub holding team/ttt's files plus `extra`,
/// under names as they are.
fn hostile_repo(hub: &Hub, repo: &str, extra: &[&str]) {
    let files: serde_json::Map<String, serde_json::Value> = extra
        .iter()
        .map(|n| (n.to_string(), "hostile bytes\n".into()))
        .collect();
    let spec = serde_json::json!({
        "kind": "model", "repo": repo, "copy_from": "team/ttt", "files": files,
    });
    let answer = hub.call("POST", "/_test/repo", &spec.to_string());
    assert!(answer.contains(repo), "{answer}");
}

#[test]
fn hostile_file_names_from_the_hub_are_refused_before_anything_is_written() {
    let Some(hub) = Hub::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let env = Env::new(&hub, tmp.path());
    let ttt = root().join(TTT);
    env.ok(&["hub", "upload", ttt.to_str().unwrap(), "team/ttt"]);
    // A cache that already holds a repository, as a user's would.
    env.ok(&["hub", "download", "team/ttt"]);
    let abs = tmp.path().join("abs-escaped").display().to_string();
    // (listed name, as the error shows it)
    let cases: Vec<(&str, String)> = vec![
        ("../x", "'../x'".into()),
        ("a/../../x", "'a/../../x'".into()),
        // Five levels up from the snapshot is the test's root folder.
        ("../../../../../escaped", "'../../../../../escaped'".into()),
        (&abs, format!("'{abs}'")),
        ("C:\\x", "'C:\\x'".into()),
        ("C:x", "'C:x'".into()),
        ("a\\b", "'a\\b'".into()),
        ("a\0b", "'a\\u{0}b'".into()),
        ("a\u{1}b", "'a\\u{1}b'".into()),
        ("a//b", "'a//b'".into()),
    ];
    for (i, (name, shown)) in cases.iter().enumerate() {
        let repo = format!("team/evil-{i}");
        hostile_repo(&hub, &repo, &[name]);
        let before = tree(tmp.path());
        // Deep, so that even a copy that climbs out of it stays in `tmp`.
        let out = tmp.path().join(format!("o/u/t/s/{i}/out"));
        let e = env.fails(&["hub", "download", &repo, "--out", out.to_str().unwrap()]);
        assert!(
            e.contains(&format!("{repo}@main"))
                && e.contains(shown.as_str())
                && e.contains("refused"),
            "{name:?}: {e}"
        );
        assert_eq!(
            tree(tmp.path()),
            before,
            "{name:?}: the refused download wrote something"
        );
        // ckpt:hf: needs only the checkpoint's files, which are plain; the
        // revision is refused all the same, and nothing is written either.
        let spec = format!("greedy:eval=ckpt:hf:{repo}");
        let e = env.fails(&[
            "match",
            "--game",
            "tictactoe",
            "--a",
            &spec,
            "--b",
            "random",
            "--games",
            "2",
        ]);
        assert!(
            e.contains(&format!("{repo}@main")) && e.contains(shown.as_str()),
            "{name:?}: {e}"
        );
        assert_eq!(
            tree(tmp.path()),
            before,
            "{name:?}: ckpt:hf: wrote something"
        );
    }
    assert!(!Path::new(&abs).exists());
    assert!(!tmp.path().join("escaped").exists());
    // One name listed as a file and as another's folder: refused before
    // any blob is fetched, not when the second link cannot be made.
    hostile_repo(&hub, "team/evil-both", &["cfg", "cfg/x"]);
    let before = tree(tmp.path());
    let out = tmp.path().join("both-out");
    let e = env.fails(&[
        "hub",
        "download",
        "team/evil-both",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        e.contains("team/evil-both@main") && e.contains("folder of 'cfg/x'"),
        "{e}"
    );
    assert_eq!(
        tree(tmp.path()),
        before,
        "the refused download wrote something"
    );
}

#[test]
fn hostile_etag_and_commit_headers_are_refused_before_anything_is_written() {
    let Some(hub) = Hub::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let env = Env::new(&hub, tmp.path());
    let ttt = root().join(TTT);
    env.ok(&["hub", "upload", ttt.to_str().unwrap(), "team/ttt"]);
    env.ok(&["hub", "download", "team/ttt"]);
    let z40 = "z".repeat(40);
    let cases: [(&str, &str, &str); 8] = [
        // (fault, value, file whose answer carries it)
        // Four levels up from `blobs/` (and `snapshots/`) is `tmp`.
        ("etag", "../../../../escaped-etag", "config.json"),
        ("etag", &z40, "config.json"),
        ("etag", "abc123", "model.safetensors"),
        ("commit", "../../../../escaped-commit", "config.json"),
        ("commit", &z40, "README.md"),
        ("commit", "abc123", "config.json"),
        ("sha", "../../../escaped-sha", ""),
        ("sha", "0123456789abcdef", ""),
    ];
    for (i, (kind, value, file)) in cases.iter().enumerate() {
        let repo = format!("team/evil-h{i}");
        hostile_repo(&hub, &repo, &[]);
        hub.call(
            "POST",
            "/_test/fault",
            &serde_json::json!({"file": file, "kind": kind, "value": value}).to_string(),
        );
        let before = tree(tmp.path());
        let out = tmp.path().join(format!("o/u/t/s/{i}/out"));
        let e = env.fails(&["hub", "download", &repo, "--out", out.to_str().unwrap()]);
        assert!(
            e.contains(&format!("{repo}@main")) && e.contains(&format!("'{value}'")),
            "{kind} {value}: {e}"
        );
        let what = if *kind == "etag" { "ETag" } else { "commit id" };
        assert!(e.contains(what), "{kind} {value}: {e}");
        assert_eq!(
            tree(tmp.path()),
            before,
            "{kind} {value}: the refused download wrote something"
        );
        hub.clear_faults();
    }
    assert!(!tmp.path().join("escaped-etag").exists());
}

#[cfg(unix)]
#[test]
fn links_out_of_a_folder_and_hostile_names_are_neither_uploaded_nor_followed() {
    let Some(hub) = Hub::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let env = Env::new(&hub, tmp.path());
    let ttt = root().join(TTT);
    let secret = tmp.path().join("secret");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("key.txt"), b"private key").unwrap();
    let link = |name: &str, target: &Path| {
        let dir = tmp
            .path()
            .join(format!("up-{}", name.replace(['/', '\\', '\u{1}'], "_")));
        copy_dir(&ttt, &dir);
        std::os::unix::fs::symlink(target, dir.join(name)).unwrap();
        dir
    };
    let hostile = |name: &str| {
        let dir = tmp
            .path()
            .join(format!("up-{}", name.replace(['/', '\\', '\u{1}'], "_")));
        copy_dir(&ttt, &dir);
        std::fs::write(dir.join(name), b"x").unwrap();
        dir
    };
    let cases: [(PathBuf, &str); 4] = [
        (link("notes", &secret), "'notes'"),
        (link("key.txt", &secret.join("key.txt")), "'key.txt'"),
        (hostile("a\\b"), "'a\\b'"),
        (hostile("x\u{1}y"), "'x\\u{1}y'"),
    ];
    for (i, (dir, shown)) in cases.iter().enumerate() {
        let repo = format!("team/up-{i}");
        let e = env.fails(&["hub", "upload", dir.to_str().unwrap(), &repo]);
        assert!(
            e.contains(&format!("{repo}@main"))
                && e.contains(shown)
                && e.contains("nothing was uploaded"),
            "{e}"
        );
        // The repository was not even created, so nothing of it was sent.
        let info = hub.call("GET", &format!("/api/models/{repo}"), "");
        assert!(info.contains("not found"), "{info}");
    }
    let log: Vec<String> = serde_json::from_str(&hub.call("GET", "/_test/log", "")).unwrap();
    assert!(!log.iter().any(|l| l.contains("key.txt")), "{log:?}");
    // A link that stays inside the folder is left out, and the rest goes up.
    let dir = link("inner.json", Path::new("config.json"));
    let up = env.ok(&[
        "hub",
        "upload",
        dir.to_str().unwrap(),
        "team/inner",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&up).unwrap();
    let sent: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(sent, CKPT_FILES_SORTED, "{up}");
}

#[cfg(unix)]
#[test]
fn a_checkpoint_or_dataset_whose_files_link_out_of_its_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let ttt = root().join(TTT);
    // config.json a link to a file outside the checkpoint's folder.
    let outside = tmp.path().join("elsewhere");
    copy_dir(&ttt, &outside);
    let ck = tmp.path().join("ckpt");
    copy_dir(&ttt, &ck);
    std::fs::remove_file(ck.join("config.json")).unwrap();
    std::os::unix::fs::symlink(outside.join("config.json"), ck.join("config.json")).unwrap();
    let e = plies::checkpoint::load(&ck, None, None)
        .err()
        .expect("refused");
    let msg = e.to_string();
    assert!(
        msg.contains("'config.json'") && msg.contains("outside"),
        "{msg}"
    );
    // The weights, the same.
    let ck2 = tmp.path().join("ckpt2");
    copy_dir(&ttt, &ck2);
    std::fs::remove_file(ck2.join("model.safetensors")).unwrap();
    std::os::unix::fs::symlink(
        "../elsewhere/model.safetensors",
        ck2.join("model.safetensors"),
    )
    .unwrap();
    let msg = plies::checkpoint::load(&ck2, None, None)
        .err()
        .expect("refused")
        .to_string();
    assert!(msg.contains("'model.safetensors'"), "{msg}");
    // A link inside the folder is fine.
    let ck3 = tmp.path().join("ckpt3");
    copy_dir(&ttt, &ck3);
    std::fs::rename(ck3.join("config.json"), ck3.join("real.json")).unwrap();
    std::os::unix::fs::symlink("real.json", ck3.join("config.json")).unwrap();
    plies::checkpoint::load(&ck3, None, None).unwrap();

    // A dataset whose shard is a link to the same bytes outside it.
    let data = tmp.path().join("data");
    let o = common::plies(&[
        "data",
        "generate",
        "--game",
        "tictactoe",
        "--a",
        "random",
        "--b",
        "random",
        "--games",
        "10",
        "--seed",
        "3",
        "--out",
        data.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    plies::dataset::Dataset::open(&data).unwrap();
    let shard = data.join("part-00000.arrow");
    let copy = tmp.path().join("shard-copy.arrow");
    std::fs::copy(&shard, &copy).unwrap();
    std::fs::remove_file(&shard).unwrap();
    std::os::unix::fs::symlink(&copy, &shard).unwrap();
    let msg = plies::dataset::Dataset::open(&data)
        .expect_err("refused")
        .to_string();
    assert!(
        msg.contains("'part-00000.arrow'") && msg.contains("outside"),
        "{msg}"
    );
}
