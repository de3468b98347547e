//! The Python peers of the benchmarks: which interpreter, which script,
//! and why a peer gave no figures.

use std::path::{Path, PathBuf};

/// `--python`, else `$env_var`, else `venv/bin/python` in the working
/// directory, else `python3`.
pub fn find_python(arg: Option<PathBuf>, env_var: &str, venv: &str) -> PathBuf {
    arg.or_else(|| std::env::var_os(env_var).map(PathBuf::from))
        .or_else(|| {
            let python = Path::new(venv).join("bin/python");
            python.exists().then_some(python)
        })
        .unwrap_or_else(|| PathBuf::from("python3"))
}

pub use crate::util::script_path;

/// Why a Python peer of a benchmark gave no figures (the benchmark goes on
/// without its column and prints this as a note).
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("{python} cannot import {modules} ({hint})")]
    Missing {
        python: String,
        modules: &'static str,
        hint: &'static str,
    },
    #[error("could not run {program}: {source}")]
    Start {
        program: String,
        source: std::io::Error,
    },
    #[error("{what} failed ({status}): {output}")]
    Failed {
        what: &'static str,
        status: std::process::ExitStatus,
        output: String,
    },
    #[error("unusable output from {what}: {why}")]
    Output { what: &'static str, why: String },
    /// Not asked for (`--no-torch`), or a note passed on by a child run.
    #[error("{0}")]
    NotRun(String),
}

/// Checks that `python` can import `modules` (`import a, b`); `hint` says
/// how to get them.
pub fn require_modules(
    python: &Path,
    modules: &'static str,
    hint: &'static str,
) -> Result<(), PeerError> {
    let ok = std::process::Command::new(python)
        .args(["-c", &format!("import {modules}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err(PeerError::Missing {
            python: python.display().to_string(),
            modules,
            hint,
        })
    }
}

/// A child's output, or why it failed: `what` names the child.
pub fn run_peer(
    cmd: &mut std::process::Command,
    what: &'static str,
) -> Result<std::process::Output, PeerError> {
    let out = cmd.output().map_err(|source| PeerError::Start {
        program: format!("{:?}", cmd.get_program()),
        source,
    })?;
    if !out.status.success() {
        return Err(PeerError::Failed {
            what,
            status: out.status,
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    Ok(out)
}

/// A peer's column in a report: its version when it ran, else why not.
pub type PeerRun = Result<String, PeerError>;

/// The column head: `name version` when the peer ran, else `name`.
pub fn peer_head(name: &str, run: &PeerRun) -> String {
    match run {
        Ok(v) => format!("{name} {v}"),
        Err(_) => name.to_string(),
    }
}
