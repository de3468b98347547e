use thiserror::Error;

#[derive(Debug, Error)]
pub enum SearchError {
    #[error("no legal move: the game is over")]
    NoMoves,
    #[error("player spec '{spec}': {why}")]
    BadSpec { spec: String, why: String },
    /// An outside program playing through a bridge failed or answered
    /// something unusable.
    #[error("{player}: {why}")]
    Bridge { player: String, why: String },
    #[error(transparent)]
    Infer(#[from] crate::infer::InferError),
    #[error(transparent)]
    Checkpoint(#[from] crate::checkpoint::CheckpointError),
}
