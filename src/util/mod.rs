//! Small shared helpers: crash-safe file writing and directory
//! replacement, one writer per output directory, seeded random numbers,
//! device names, the move-list digest of the rules oracles, where the
//! Python scripts are, the one line an error prints as, and the check of
//! names from outside before they become paths ([`safe_name`]), and the
//! vector instruction set the CPU kernels run with ([`simd`]).

pub mod atomic;
pub mod candle_ops;
mod device;
mod digest;
pub mod error_text;
pub mod int8_planes;
mod janitor;
pub mod lock;
pub mod memory;
mod precision;
pub mod replace;
pub mod run_dir;
pub mod safe_name;
mod scripts;
mod seed;
pub mod simd;
pub mod text;

pub use atomic::{write_atomic, AtomicFile, AtomicWriteError};
pub use device::{parse_device, DeviceError};
pub use digest::legal_digest;
pub use error_text::error_line;
pub use janitor::drop_later;
pub use lock::{DirLock, LockError};
pub use precision::Precision;
pub use scripts::script_path;
pub use seed::{derive_seed, fresh_seed, seeded_rng, SeededRng};

/// A fresh temporary directory and the path `name` inside it, for the
/// tests of writers.
#[cfg(test)]
pub(crate) fn scratch(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    (dir, path)
}
