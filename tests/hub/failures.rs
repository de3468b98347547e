//! Every failure (missing repository or revision, server errors, cut and
//! corrupt transfers, a refused token, no network) names the repository,
//! the revision and the file.

use crate::common::text;
use crate::env::Env;
use crate::files::{root, TTT};
use crate::server::Hub;
use std::path::Path;
use std::process::Command;

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
