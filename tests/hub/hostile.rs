//! Hostile file names, ETags and commit ids from the hub, refused before
//! anything is written.

use crate::env::Env;
use crate::files::{root, tree, TTT};
use crate::server::Hub;
use std::path::Path;

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
