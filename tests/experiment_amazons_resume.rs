//! `plies experiment amazons` on a tiny 6x6 study, killed (SIGKILL) in
//! each of its stages and at times spread over the rest, then rerun, ends
//! with the same results as an uninterrupted run; while one process writes the folder a second is
//! refused, and a rerun with another seed is refused naming it.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Every stage on a budget of a few seconds on 2 cores. The value network's
/// 8 epochs of 23 steps end before its first save between epochs (step
/// 200), so a kill while it fits resumes it from an epoch's end.
const STUDY: &[&str] = &[
    "experiment",
    "amazons",
    "--quick",
    "--quiet",
    "--size",
    "6",
    "--db-games",
    "240",
    "--db-chunk",
    "12",
    "--db-max-plies",
    "40",
    "--db-players",
    "alphabeta:depth=1,eval=lieberum;mcts:sims=40,eval=mindist",
    "--good",
    "greedy:eval=lieberum",
    "--simple",
    "random",
    "--encoders",
    "amazons-units,amazons-territory",
    "--hidden",
    "8",
    "--runs",
    "2",
    "--examples",
    "16000",
    "--equity-games",
    "12",
    "--alphabeta",
    "alphabeta:depth=1",
    "--mcts",
    "mcts:sims=80",
    "--value-nets",
    "elliott-8",
    "--value-epochs",
    "8",
];

/// The study into `out`, on two threads, with `extra` arguments.
fn study(out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plies"));
    c.env("RAYON_NUM_THREADS", "2")
        .env("CANDLE_NUM_THREADS", "1")
        .args(STUDY)
        .args(extra)
        .arg("--out")
        .arg(out);
    c
}

fn run_ok(out: &Path) -> Output {
    let o = study(out, &[]).output().unwrap();
    assert!(o.status.success(), "{}", common::text(&o));
    o
}

/// Whether `rel` (a path under the study's folder) is a result compared
/// between runs: the tables, plots and summary, the database, the cached
/// equity cells, the datasets' rows and every network's weights. The
/// trainers' logs and run states hold timings, and the build reports
/// only say where things were read.
fn compared(rel: &Path) -> bool {
    let parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let name = parts.last().map(String::as_str).unwrap_or("");
    if parts.iter().any(|p| p.starts_with('.')) {
        return false;
    }
    match parts.first().map(String::as_str) {
        Some("nets" | "value-nets") => name == "model.safetensors",
        Some("db") if parts.len() == 3 && parts[1] != "games" => {
            name == "manifest.json" || name.ends_with(".arrow")
        }
        _ => true,
    }
}

/// `path`'s contents as compared: the study's folder named `OUT` (specs
/// and reports hold paths), and in JSON the timings (`seconds`) left out.
fn normalized(path: &Path, out: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let Ok(text) = String::from_utf8(bytes.clone()) else {
        return bytes;
    };
    let text = text.replace(&out.display().to_string(), "OUT");
    if path.extension().is_some_and(|e| e == "json") {
        let mut v: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        drop_timings(&mut v);
        return serde_json::to_vec_pretty(&v).unwrap();
    }
    text.into_bytes()
}

fn drop_timings(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("seconds");
            m.values_mut().for_each(drop_timings);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(drop_timings),
        _ => {}
    }
}

/// The compared files under `out`, by path relative to it.
fn results(out: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    common::files_under(out, &|_| true, &|_| true)
        .into_iter()
        .filter(|(rel, _)| compared(rel))
        .map(|(rel, path)| {
            let bytes = normalized(&path, out);
            (rel, bytes)
        })
        .collect()
}

/// Starts `cmd` and SIGKILLs it as soon as `ready` holds; false when it
/// ended first.
fn kill_when(mut cmd: Command, ready: &dyn Fn() -> bool) -> bool {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    loop {
        if ready() {
            let _ = child.kill();
            child.wait().unwrap();
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_study_killed_and_rerun_ends_as_an_uninterrupted_one() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("reference");
    let killed = tmp.path().join("killed");

    // The uninterrupted run; while it holds its folder, a second process
    // on it is refused before it writes.
    let started = Instant::now();
    let mut first = study(&reference, &[])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let lock = tmp.path().join(".reference.plies.lock");
    // The holder writes its pid once it has the lock.
    let held = || std::fs::read_to_string(&lock).is_ok_and(|t| t.contains('\n'));
    while !held() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let second = study(&reference, &[]).output().unwrap();
    let said = common::text(&second);
    assert!(!second.status.success(), "{said}");
    assert!(
        said.contains(&reference.display().to_string()) && said.contains("another writer holds it"),
        "{said}"
    );
    assert!(first.wait().unwrap().success());
    let took = started.elapsed().as_millis() as u64;
    let expected = results(&reference);
    for f in [
        "summary.json",
        "errors.csv",
        "equities.csv",
        "db/settings.json",
    ] {
        assert!(
            expected.iter().any(|(rel, _)| rel == Path::new(f)),
            "{f} missing"
        );
    }
    assert!(expected
        .iter()
        .any(|(rel, _)| rel.ends_with("value-nets/elliott-8/model.safetensors")));

    // Killed once in each stage (as soon as it has begun to write), then
    // at times spread over what is left.
    let has = |rel: &str| killed.join(rel).exists();
    let count = |rel: &str| std::fs::read_dir(killed.join(rel)).map_or(0, |d| d.count());
    let stages: [(&str, &dyn Fn() -> bool); 4] = [
        ("database", &|| count("db/games") >= 8),
        ("networks", &|| has("db/dataset.key")),
        ("value network", &|| has("value-nets/elliott-8/metrics.csv")),
        ("equities", &|| count("matches") >= 12),
    ];
    for (stage, ready) in stages {
        assert!(
            kill_when(study(&killed, &[]), ready),
            "the run ended before its {stage}"
        );
    }
    for ms in common::delays(11, 2, took / 2) {
        common::kill_after(study(&killed, &[]), ms);
    }
    run_ok(&killed);
    let got = results(&killed);
    let names = |r: &[(PathBuf, Vec<u8>)]| r.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&got), names(&expected));
    for ((rel, a), (_, b)) in expected.iter().zip(&got) {
        assert!(a == b, "{} differs after the kills", rel.display());
    }

    // The database was played with seed 1: seed 2 is refused, naming it.
    let o = study(&killed, &["--seed", "2"]).output().unwrap();
    let said = common::text(&o);
    assert!(!o.status.success(), "{said}");
    assert!(
        said.contains("settings.json") && said.contains("`seed` was 1, now 2"),
        "{said}"
    );
    assert_eq!(results(&killed), got);
}
