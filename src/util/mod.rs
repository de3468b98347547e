//! Small shared helpers: seeded random numbers.

mod seed;

pub use seed::{derive_seed, seeded_rng, SeededRng};
