//! Small shared helpers: seeded random numbers, device names.

mod device;
mod seed;

pub use device::{parse_device, DeviceError};
pub use seed::{derive_seed, seeded_rng, SeededRng};
