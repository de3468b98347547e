//! The Python side of the benchmarks: which interpreter, which script.

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

/// `scripts/NAME` from the working directory, else from the source tree
/// the binary was built from.
pub fn script_path(name: &str) -> PathBuf {
    let local = Path::new("scripts").join(name);
    if local.exists() {
        local
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scripts")
            .join(name)
    }
}
