//! Small shared helpers: crash-safe file writing, seeded random numbers,
//! device names, the move-list digest of the rules oracles, where the
//! Python scripts are.

pub mod atomic;
mod device;
mod digest;
pub mod memory;
mod scripts;
mod seed;
pub mod text;

pub use atomic::{write_atomic, AtomicFile, AtomicWriteError};
pub use device::{parse_device, DeviceError};
pub use digest::legal_digest;
pub use scripts::script_path;
pub use seed::{derive_seed, fresh_seed, seeded_rng, SeededRng};
