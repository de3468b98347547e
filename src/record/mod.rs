//! Game records in and out.
//!
//! [`oracle_jsonl`] reads the random-game records that the reference rule
//! implementations write (`scripts/oracles/spiel_oracle.py`), and
//! [`replay`] plays them through a [`crate::game::Game`], comparing every
//! ply: the board, the side to move, the terminal flag, the returns and the
//! sorted legal-move list.

pub mod amazons_text;
pub mod arimaa_archive;
pub mod arimaa_oracle;
mod error;
pub mod game_record;
pub mod gomoku_pgn;
pub mod oracle_jsonl;
pub mod replay;

pub use error::RecordError;
pub use game_record::{
    read_records, write_records, GameRecord, InvalidRecord, PerSide, RecordReader, RecordWriter,
};
pub use oracle_jsonl::{OracleGame, OraclePly};
pub use replay::{replay_file, ReplaySummary};
