//! Small shared helpers: seeded random numbers, atomic file writes.

mod atomic;
mod seed;

pub use atomic::write_atomic;
pub use seed::{derive_seed, seeded_rng, SeededRng};
