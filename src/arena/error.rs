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
    /// A player spec that does not parse or build; `player` says which
    /// (`--a`, `player 2 of --players`).
    #[error("{player}: {source}")]
    Spec {
        player: String,
        source: Box<crate::search::SearchError>,
    },
    #[error("game {game}: no start position: {why}")]
    Start { game: usize, why: String },
    /// A bad board size, setups source or count.
    #[error("{0}")]
    Options(String),
}
