//! The Python scripts plies runs (oracles, OpenSpiel's bot, benchmark
//! peers) ship in `scripts/`.

use std::path::{Path, PathBuf};

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
