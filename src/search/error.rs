use thiserror::Error;

#[derive(Debug, Error)]
pub enum SearchError {
    #[error("no legal move: the game is over")]
    NoMoves,
    #[error("player spec '{spec}': {why}")]
    BadSpec { spec: String, why: String },
    #[error(transparent)]
    Infer(#[from] crate::infer::InferError),
    #[error(transparent)]
    Checkpoint(#[from] crate::checkpoint::CheckpointError),
}
