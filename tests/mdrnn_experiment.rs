//! `plies experiment mdrnn` end to end on a small budget: every network is
//! measured on every size against both opponents, the outputs are written,
//! a rerun measures nothing again, and the trained networks play.

use std::path::Path;

mod common;
use common::{plies, text};

fn experiment(out: &Path, strategy: &str) -> std::process::Output {
    plies(&[
        "experiment",
        "mdrnn",
        "--games",
        "atari-go",
        "--train-sizes",
        "5",
        "--eval-sizes",
        "5,7",
        "--es-strategy",
        strategy,
        "--es-generations",
        "2",
        "--bootstrap-size",
        "7",
        "--bootstrap-generations",
        "1",
        "--coevolve-generations",
        "1",
        "--fitness-games",
        "4",
        "--population",
        "4",
        "--eval-games",
        "6",
        "--threads",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn the_experiment_measures_every_cell_and_a_rerun_reads_them_back() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("mdrnn");
    let o = experiment(&out, "snes");
    assert!(o.status.success(), "{}", text(&o));
    let csv = std::fs::read_to_string(out.join("transfer.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    // 3 networks (SNES, coevolved, SNES gone on on 7x7) x 2 opponents x 2 sizes.
    assert_eq!(rows.len(), 12, "{csv}");
    for network in ["5-snes", "5-coevolve", "7-snes-from-5"] {
        for opponent in ["random", "naive"] {
            for size in ["5x5", "7x7"] {
                assert!(
                    rows.iter().any(|r| r.contains(network)
                        && r.contains(&format!(",{opponent},"))
                        && r.contains(size)
                        && r.contains(",6,")),
                    "no {network} vs {opponent} on {size} in {csv}"
                );
            }
        }
    }
    for f in [
        "cost.csv",
        "summary.csv",
        "transfer.json",
        "transfer-atari-go-random.png",
        "transfer-atari-go-naive.png",
        "train/atari_go-5-snes/final/config.json",
        "train/atari_go-5-coevolve/best/config.json",
        "train/atari_go-7-snes-from-5/final/config.json",
    ] {
        assert!(out.join(f).is_file(), "missing {f}");
    }
    // The bootstrap starts from the 5x5 network.
    let state =
        std::fs::read_to_string(out.join("train/atari_go-7-snes-from-5/state.json")).unwrap();
    assert!(state.contains("atari_go-5-snes/final"), "{state}");
    // The cells are kept: a rerun reports the same table without playing.
    let first = text(&o);
    let stamps = || {
        let mut v: Vec<_> = std::fs::read_dir(out.join("cells"))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.file_name(), e.metadata().unwrap().modified().unwrap())
            })
            .collect();
        v.sort();
        v
    };
    let before = stamps();
    assert_eq!(before.len(), 12);
    let again = experiment(&out, "snes");
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(
        std::fs::read_to_string(out.join("transfer.csv")).unwrap(),
        csv
    );
    let table = |s: &str| {
        s.lines()
            .take_while(|l| !l.starts_with("wrote"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(table(&text(&again)), table(&first));
    assert_eq!(stamps(), before, "a rerun rewrote measured cells");
    // The evolved network is an ordinary checkpoint: it plays a 9x9 match.
    let ckpt = out.join("train/atari_go-5-snes/final");
    let m = plies(&[
        "match",
        "--game",
        "atari-go",
        "--size",
        "9",
        "--a",
        &format!("policy:ckpt={}", ckpt.display()),
        "--b",
        "random",
        "--games",
        "2",
        "--json",
    ]);
    assert!(m.status.success(), "{}", text(&m));
    // Another strategy is another training run beside it.
    let o = experiment(&out, "one-plus-one");
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.join("train/atari_go-5-one-plus-one/final").is_dir());
}
