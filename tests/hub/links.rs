//! Links out of a folder and hostile names: neither uploaded nor followed,
//! and refused in checkpoints and datasets read from disk.

use crate::common::{self, text};
use crate::env::Env;
use crate::files::{copy_dir, root, CKPT_FILES_SORTED, TTT};
use crate::server::Hub;
use std::path::{Path, PathBuf};

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
