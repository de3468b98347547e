//! Zobrist keys, generated at compile time from a fixed seed so that hashes
//! are the same in every build and on every machine.

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (s, z ^ (z >> 31))
}

const fn piece_keys() -> [[u64; 64]; 13] {
    let mut keys = [[0u64; 64]; 13];
    let mut state = 0x0a51_7a0a_2026_u64;
    let mut code = 1;
    while code < 13 {
        let mut sq = 0;
        while sq < 64 {
            let (s, k) = splitmix(state);
            state = s;
            keys[code][sq] = k;
            sq += 1;
        }
        code += 1;
    }
    keys
}

const fn extra_keys<const N: usize>(seed: u64) -> [u64; N] {
    let mut keys = [0u64; N];
    let mut state = seed;
    let mut i = 0;
    while i < N {
        let (s, k) = splitmix(state);
        state = s;
        keys[i] = k;
        i += 1;
    }
    keys
}

/// `PIECE[code][square]`; code 0 (empty) is all zeros.
pub static PIECE: [[u64; 64]; 13] = piece_keys();
/// Mixed in for silver to move (repetition keys).
pub const SILVER_TO_MOVE: u64 = extra_keys::<1>(0x5117e2)[0];
/// Turn-state keys for the move generator's transposition table:
/// `[steps_left * 64 + square]` for a pending pull or push, by piece type.
pub static PULL_FROM: [u64; 64 * 6] = extra_keys::<{ 64 * 6 }>(0x9011);
pub static PUSH_FROM: [u64; 64 * 6] = extra_keys::<{ 64 * 6 }>(0x9054);
pub static STEPS_LEFT: [u64; 5] = extra_keys::<5>(0x57e9);
