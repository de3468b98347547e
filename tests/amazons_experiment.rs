//! `plies experiment amazons` end to end on a 6x6 board and a tiny budget:
//! every stage writes its outputs, every evaluator is measured on both
//! splits and played in its columns, a rerun plays and trains nothing
//! again, and settings the experiment cannot use are refused before
//! anything is written.

use indicatif::ProgressBar;
use plies::checkpoint;
use plies::dataset::Dataset;
use plies::experiment::amazons::{run, AmazonsExperimentConfig, AmazonsExperimentReport};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn tiny(out: PathBuf) -> AmazonsExperimentConfig {
    let mut cfg = AmazonsExperimentConfig::quick(out);
    cfg.size = 6;
    cfg.db_games = 24;
    cfg.db_chunk = 8;
    cfg.db_max_plies = 14;
    cfg.db_players = vec![
        "alphabeta:depth=1,eval=lieberum".into(),
        "mcts:sims=30,eval=mindist".into(),
    ];
    cfg.test_fraction = 0.25;
    cfg.encoders = vec![
        "amazons-units".into(),
        "amazons-bits".into(),
        "amazons-territory".into(),
    ];
    cfg.hidden = vec![8];
    cfg.runs = 2;
    cfg.td.examples = 60;
    cfg.equity_games = 4;
    cfg.mcts = "mcts:sims=20".into();
    cfg.value_nets.models = vec![
        "resnet-tiny".into(),
        "elliott-8".into(),
        "elliott-8+search".into(),
        "elliott-8+search2".into(),
        "elliott-8+compare".into(),
    ];
    cfg.value_nets.search_labels.depth = 1;
    cfg.value_nets.comparison.sample = Some(8);
    cfg
}

fn go(cfg: &AmazonsExperimentConfig) -> AmazonsExperimentReport {
    run(cfg, &|_, _| ProgressBar::hidden(), &|_| {}).unwrap()
}

/// Every file under `dir` with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn the_study_runs_every_stage_and_a_rerun_reads_it_back() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tiny(tmp.path().join("amazons"));
    let report = go(&cfg);
    let out = &cfg.out;
    for f in [
        "summary.json",
        "errors.csv",
        "error_by_ply.csv",
        "equities.csv",
        "error_by_ply.png",
        "train_vs_test.svg",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let db = &report.database;
    assert_eq!(db.played, 24);
    assert_eq!(
        db.finished + db.adjudicated + db.rejected,
        db.played,
        "{db:?}"
    );
    assert!(report.train_games > 0 && report.test_games > 0);

    // Three networks (UNITS, BITS, TERRITORY), each the better of its two
    // runs.
    let names: Vec<&str> = report.nets.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["UNITS-8", "BITS-8", "TERRITORY-8"]);
    for n in &report.nets {
        assert_eq!(n.run_errors.len(), 2);
        let best = n.run_errors[n.best_run];
        assert!(n.run_errors.iter().all(|&e| best <= e), "{n:?}");
    }
    // The value networks are checkpoints in the territory encoding; the
    // thesis' shape fitted by regression runs on the plain-Rust MLP.
    assert_eq!(
        report.value_nets,
        [
            "resnet-tiny",
            "elliott-8",
            "elliott-8+search",
            "elliott-8+search2",
            "elliott-8+compare"
        ]
    );
    let results = out.join("db").join("dataset-territory");
    let searched = out.join("db").join("dataset-territory-search");
    let searched2 = out.join("db").join("dataset-territory-search2-elliott-8");
    for v in &report.value_nets {
        let ck = checkpoint::load(&out.join("value-nets").join(v), Some("amazons"), None).unwrap();
        assert_eq!(ck.config.encoder.name, "amazons-territory");
        assert_eq!(ck.native_mlp().is_ok(), v.starts_with("elliott-8"), "{v}");
        // `+search` networks learn from the search-labelled copy, the
        // second round from the copy its first round labelled.
        let data = if v.ends_with("+search") {
            &searched
        } else if v.ends_with("+search2") {
            &searched2
        } else {
            &results
        };
        let sha = Dataset::open(data).unwrap().manifest_sha256().to_string();
        assert_eq!(
            ck.config.training.dataset_manifest_sha256.as_deref(),
            Some(sha.as_str()),
            "{v}"
        );
        // `+compare` ranks the played move (the Bonanza method) on the
        // game results; the others regress.
        let method = &ck.config.training.method;
        assert_eq!(
            method == "comparison",
            v.ends_with("+compare"),
            "{v}: {method}"
        );
    }
    // The copy has the same positions; the unfinished ones labelled by
    // Lieberum's depth-1 search, so values between the results appear.
    let (a, b) = (
        Dataset::open(&results).unwrap().rows(None).unwrap(),
        Dataset::open(&searched).unwrap().rows(None).unwrap(),
    );
    assert_eq!(a.len(), b.len());
    assert!(a.iter().zip(&b).all(|(x, y)| x.position == y.position));
    assert!(b
        .iter()
        .any(|r| r.label > 0.0 && r.label < 1.0 && r.label != 0.5));
    // The second round's labels are the same search over the first round's
    // network: relabelling by hand with that checkpoint gives them exactly.
    let round1 = out.join("value-nets").join("elliott-8+search");
    let by_hand = tmp.path().join("by-hand");
    plies::positions::label_by_search::<plies::game::Amazons>(
        &results,
        &by_hand,
        &plies::positions::SearchLabels {
            eval: format!("ckpt:{}", round1.display()),
            depth: 1,
            mix: 1.0,
        },
        None,
    )
    .unwrap();
    let (c, d) = (
        Dataset::open(&searched2).unwrap().rows(None).unwrap(),
        Dataset::open(&by_hand).unwrap().rows(None).unwrap(),
    );
    assert_eq!(c.len(), a.len());
    assert!(c.iter().zip(&d).all(|(x, y)| x.label == y.label));
    assert!(c.iter().zip(&b).any(|(x, y)| x.label != y.label));

    // Every evaluator's error on both splits; the thesis' figure only for
    // the thesis' evaluators.
    let evaluators = [
        "lieberum",
        "mindist",
        "random",
        "UNITS-8",
        "BITS-8",
        "TERRITORY-8",
        "resnet-tiny",
        "elliott-8",
        "elliott-8+search",
        "elliott-8+search2",
        "elliott-8+compare",
    ];
    for e in evaluators {
        for split in ["test", "train"] {
            let row = report
                .errors
                .iter()
                .find(|r| r.evaluator == e && r.split == split)
                .unwrap_or_else(|| panic!("no {split} error for {e}"));
            assert!(row.positions > 0 && (0.0..=1.0).contains(&row.error));
            let quoted = split == "test" && ["lieberum", "mindist", "random"].contains(&e);
            assert_eq!(row.thesis.is_some(), quoted, "{row:?}");
        }
    }
    // Every evaluator in every column against the simple player, but the
    // residual network, which skips alpha-beta; the same against the good
    // one, where of the thesis' networks only the one of lowest test
    // error plays (table 4 has one row for them).
    let plays_good = |name: &str| {
        report
            .equities
            .iter()
            .any(|r| r.evaluator == name && r.opponent == "good")
    };
    let test_error = |name: &str| report.nets.iter().find(|n| n.name == name).unwrap();
    let (units, bits) = (test_error("UNITS-8"), test_error("BITS-8"));
    let best = if bits.best_error() < units.best_error() {
        "BITS-8"
    } else {
        "UNITS-8"
    };
    assert!(plays_good(best));
    assert!(!plays_good(if best == "BITS-8" {
        "UNITS-8"
    } else {
        "BITS-8"
    }));
    assert!(plays_good("TERRITORY-8") && plays_good("elliott-8+search"));
    assert!(plays_good("elliott-8+search2") && plays_good("elliott-8+compare"));
    assert_eq!(report.equities.len(), (10 * 3 + 2) + (9 * 3 + 2));
    assert!(report
        .equities
        .iter()
        .any(|r| r.evaluator == "elliott-8" && r.search == "alpha-beta"));
    assert!(!report
        .equities
        .iter()
        .any(|r| r.evaluator == "resnet-tiny" && r.search == "alpha-beta"));
    for r in &report.equities {
        assert_eq!(r.games, 4, "{r:?}");
        assert_eq!(r.wins + r.draws + r.losses, 4);
        assert!(r.equity_lo <= r.equity && r.equity <= r.equity_hi);
        // Table 4 quotes one figure for all the thesis' networks; table 5
        // has only the thesis' hidden sizes.
        let quoted = ["lieberum", "mindist", "random"].contains(&r.evaluator.as_str())
            || (r.evaluator == best && r.opponent == "good");
        assert_eq!(r.thesis.is_some(), quoted, "{r:?}");
    }

    // A rerun trains and plays nothing again: every file but the summary
    // outputs keeps its bytes, and the results are the same.
    let before = files(out);
    let again = go(&cfg);
    let after = files(out);
    for (path, bytes) in &before {
        let name = path
            .strip_prefix(out)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let is_output = !name.contains('/');
        if !is_output {
            assert_eq!(Some(bytes), after.get(path), "{name} changed on a rerun");
        }
    }
    assert_eq!(
        serde_json::to_value(&again.equities).unwrap(),
        serde_json::to_value(&report.equities).unwrap()
    );
    assert_eq!(
        serde_json::to_value(&again.errors).unwrap(),
        serde_json::to_value(&report.errors).unwrap()
    );
}

#[test]
fn settings_it_cannot_use_are_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("amazons");
    let mut cfg = tiny(out.clone());
    // cnn3 reads planes only; the territory encoding has globals.
    cfg.value_nets.models = vec!["cnn3".into()];
    let e = run(&cfg, &|_, _| ProgressBar::hidden(), &|_| {})
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("value-nets") && e.contains("cnn3"), "{e}");
    for unknown in ["resnet-huge", "elliott-0", "elliott-x"] {
        cfg.value_nets.models = vec![unknown.into()];
        let e = run(&cfg, &|_, _| ProgressBar::hidden(), &|_| {})
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("resnet-tiny") && e.contains("elliott-H"), "{e}");
    }
    // Rounds of search labels are `+search` or `+searchN` from 2 on.
    for bad in [
        "elliott-8+search1",
        "elliott-8+searchx",
        "elliott-8+search0",
    ] {
        cfg.value_nets.models = vec![bad.into()];
        let e = run(&cfg, &|_, _| ProgressBar::hidden(), &|_| {})
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("value-nets") && e.contains(bad) && e.contains("round N of 2"),
            "{e}"
        );
    }
    // The search that labels `+search` networks must be one Amazons has.
    cfg.value_nets.models = vec!["elliott-8+search".into()];
    cfg.value_nets.search_labels.eval = "material".into();
    let e = run(&cfg, &|_, _| ProgressBar::hidden(), &|_| {})
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("search_labels") && e.contains("material"), "{e}");
    cfg.value_nets.search_labels.eval = "lieberum".into();
    cfg.value_nets.search_labels.mix = 2.0;
    let e = run(&cfg, &|_, _| ProgressBar::hidden(), &|_| {})
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("mix"), "{e}");
    cfg.value_nets.models = vec![];
    cfg.value_net_searches = vec![3];
    assert!(run(&cfg, &|_, _| ProgressBar::hidden(), &|_| {}).is_err());
    assert!(!out.exists());
}
