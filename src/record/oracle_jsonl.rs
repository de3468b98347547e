//! The oracle's JSONL record: one game per line, every ply with its board,
//! side to move, terminal flag, returns and sorted legal moves (or, with
//! `--compact`, their count and FNV-1a 64 digest).

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
pub struct OracleGame {
    pub game: String,
    /// The game's parameters (`board_size` / `size` for sized games).
    #[serde(default)]
    pub params: serde_json::Value,
    pub moves: Vec<String>,
    pub plies: Vec<OraclePly>,
    pub returns: [f32; 2],
    pub winner: Option<u8>,
    pub reason: String,
}

impl OracleGame {
    /// The board size the record names (`board_size` or `size`), if any.
    pub fn board_size(&self) -> Option<usize> {
        ["board_size", "size"]
            .iter()
            .find_map(|k| self.params.get(k)?.as_u64())
            .map(|n| n as usize)
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct OraclePly {
    pub ply: usize,
    pub to_move: Option<u8>,
    pub board: String,
    pub terminal: bool,
    pub returns: [f32; 2],
    pub legal: Option<Vec<String>>,
    pub legal_count: Option<usize>,
    pub legal_fnv: Option<String>,
}

pub use crate::util::legal_digest;

#[cfg(test)]
mod tests {
    #[test]
    fn digest_matches_the_python_definition() {
        // fnv1a64(b"") is the offset basis.
        assert_eq!(super::legal_digest(&[]), "cbf29ce484222325");
        // fnv1a64(b"a\n") computed by hand from the definition.
        let mut h: u64 = 0xcbf29ce484222325;
        for b in b"a\n" {
            h = (h ^ *b as u64).wrapping_mul(0x100000001b3);
        }
        assert_eq!(super::legal_digest(&["a".into()]), format!("{h:016x}"));
    }
}
