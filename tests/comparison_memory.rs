//! Comparison training's memory is bounded by design: with every setting
//! at its default on the shipped Arimaa archive (all legal moves of every
//! position, thousands a turn) the run's peak resident memory stays under
//! 2 GB, and a memory limit it cannot fit is refused before anything runs,
//! naming the setting to change.

#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

const PEAK_LIMIT_BYTES: u64 = 2 << 30;

fn plies() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plies"));
    c.env("RAYON_NUM_THREADS", "2")
        .env("CANDLE_NUM_THREADS", "1")
        .env_remove("PLIES_MEMORY_LIMIT");
    c
}

/// The shipped archive games as an `arimaa-6x8x8` dataset in `dir/ds`.
fn archive_dataset(dir: &Path) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let records = dir.join("records");
    let out = plies()
        .args(["import", "--game", "arimaa"])
        .arg(root.join("data/arimaa/allgames2002.txt"))
        .arg(root.join("data/arimaa/fake_archive.txt"))
        .arg("--out")
        .arg(&records)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::text(&out));
    let ds = dir.join("ds");
    let out = plies()
        .args(["dataset", "build", "--records"])
        .arg(records.join("games.jsonl"))
        .args([
            "--encoder",
            "arimaa-6x8x8",
            "--terminations",
            "all",
            "--quiet",
            "--out",
        ])
        .arg(&ds)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::text(&out));
    ds
}

/// Runs `cmd` to the end; its exit success and peak resident bytes.
// The child is reaped by `wait4` (which reports its resource use), not by
// `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run_measured(mut cmd: Command) -> (bool, u64, String) {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut stderr = child.stderr.unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).unwrap();
        s
    });
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid, and wait4 fills it for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unwaited child.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    // Linux reports ru_maxrss in KiB.
    (ok, usage.ru_maxrss as u64 * 1024, reader.join().unwrap())
}

#[test]
fn default_comparison_training_on_the_shipped_archive_stays_under_2_gb() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = archive_dataset(tmp.path());
    let run = tmp.path().join("run");
    let mut cmd = plies();
    cmd.args(["train", "--data"])
        .arg(&ds)
        .args([
            "--model",
            "linear",
            "--objective",
            "comparison",
            "--epochs",
            "1",
            "--seed",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(&run);
    let (ok, peak, stderr) = run_measured(cmd);
    assert!(ok, "{stderr}");
    assert!(run.join("best/model.safetensors").is_file(), "{stderr}");
    eprintln!("peak resident memory: {} MiB", peak >> 20);
    assert!(
        peak < PEAK_LIMIT_BYTES,
        "peak resident memory {} MiB, over {} MiB",
        peak >> 20,
        PEAK_LIMIT_BYTES >> 20
    );
}

#[test]
fn a_memory_limit_the_run_cannot_fit_is_refused_before_it_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = archive_dataset(tmp.path());
    let run = tmp.path().join("run");
    let train = |extra: &[&str]| {
        plies()
            .env("PLIES_MEMORY_LIMIT", "64M")
            .args(["train", "--data"])
            .arg(&ds)
            .args(["--model", "linear", "--objective", "comparison", "--out"])
            .arg(&run)
            .args(extra)
            .output()
            .unwrap()
    };
    // Every legal move of up to 120,000 a position, two rows at a time.
    let all = train(&[]);
    let text = common::text(&all);
    assert!(!all.status.success(), "{text}");
    assert!(
        text.contains("--sample K") && text.contains("PLIES_MEMORY_LIMIT"),
        "{text}"
    );
    assert!(!run.exists(), "a refused run wrote {}", run.display());
    // A sample fits the children; a pass of 100,000 children does not.
    let wide = train(&["--sample", "1000", "--chunk", "100000"]);
    let text = common::text(&wide);
    assert!(!wide.status.success(), "{text}");
    assert!(text.contains("lower --chunk (now 100000"), "{text}");
    assert!(!run.exists(), "a refused run wrote {}", run.display());
    assert_eq!(text.lines().filter(|l| l.starts_with("error:")).count(), 1);
}
