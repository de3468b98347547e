//! Small shared helpers: crash-safe file writing, seeded random numbers,
//! device names.

pub mod atomic;
mod device;
mod seed;

pub use atomic::{write_atomic, AtomicFile, AtomicWriteError};
pub use device::{parse_device, DeviceError};
pub use seed::{derive_seed, seeded_rng, SeededRng};
