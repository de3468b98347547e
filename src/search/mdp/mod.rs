//! The bucketed MDP learner of Heon & Oetting (2012), for any game whose
//! board is a grid of stones ([`crate::games::GameSupport::piece_codes`]):
//! boards hashed into buckets, one transition model and value vector per
//! seat, and the player `mdp:MODEL_FILE` that moves to the best-valued
//! bucket. `plies train mdp` ([`crate::train::mdp`]) learns the model by
//! self-play.
//!
//! | file | what |
//! | --- | --- |
//! | `bucket.rs` | the paper's bucket hash, buckets 0 and 1 for either side's win |
//! | `model.rs` | a seat's counts and values, value iteration, the model file |
//! | `player.rs` | the move to the best bucket (epsilon-greedy in training), the player |

mod bucket;
mod model;
mod player;

pub use bucket::{win_bucket, BucketHash, PRIMES};
pub use model::{value_iteration, MdpModel, MdpSettings, SeatModel, MDP_FORMAT};
pub use player::{mdp_move, successor_buckets, MdpPlayer};

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum MdpError {
    #[error("MDP model {path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("MDP model {path}: line {line}, column {column}: {why}")]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        why: String,
    },
    #[error("MDP model {path}: field '{field}' is {found}, expected {expected}")]
    Field {
        path: PathBuf,
        field: String,
        found: String,
        expected: String,
    },
    #[error("MDP model {path}: {why}")]
    Encode { path: PathBuf, why: String },
    #[error("MDP model: {0}")]
    Write(#[from] crate::util::AtomicWriteError),
}
