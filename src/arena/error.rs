use thiserror::Error;

#[derive(Debug, Error)]
pub enum ArenaError {
    #[error("game {game}: {player} failed: {source}")]
    Player {
        game: usize,
        player: String,
        source: Box<crate::search::SearchError>,
    },
    #[error("game {game}: {player} chose an illegal move {mv}")]
    IllegalMove {
        game: usize,
        player: String,
        mv: String,
    },
}
