//! Seeds. Every random choice in plies draws from a [`SeededRng`] made from
//! a user seed and a stream index, so parallel work is reproducible whatever
//! the thread count.

use rand::SeedableRng;

/// The generator used everywhere: fast, portable, reproducible.
pub type SeededRng = rand::rngs::Xoshiro256PlusPlus;

/// Mixes a seed and a stream index into an independent seed (SplitMix64).
pub fn derive_seed(seed: u64, stream: u64) -> u64 {
    let mut z = seed
        .wrapping_add(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(stream.wrapping_mul(0xbf58_476d_1ce4_e5b9));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A seed drawn from the operating system, for sessions the user gave no
/// seed: an engine then says which it drew, so the session can be replayed.
pub fn fresh_seed() -> u64 {
    rand::random()
}

/// A generator for stream `stream` of run `seed`.
pub fn seeded_rng(seed: u64, stream: u64) -> SeededRng {
    SeededRng::seed_from_u64(derive_seed(seed, stream))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u32> = (0..4)
            .map(|_| 0)
            .scan(seeded_rng(1, 2), |r, _| Some(r.random()))
            .collect();
        let b: Vec<u32> = (0..4)
            .map(|_| 0)
            .scan(seeded_rng(1, 2), |r, _| Some(r.random()))
            .collect();
        let c: Vec<u32> = (0..4)
            .map(|_| 0)
            .scan(seeded_rng(1, 3), |r, _| Some(r.random()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
