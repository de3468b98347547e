//! The digest of a sorted move list, as the rules oracles write it.

/// FNV-1a 64 of the concatenated `move + "\n"`, as the oracle's `--compact`.
pub fn legal_digest(sorted_moves: &[String]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for m in sorted_moves {
        for b in m.bytes().chain(std::iter::once(b'\n')) {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}
