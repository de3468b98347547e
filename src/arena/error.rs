use thiserror::Error;

#[derive(Debug, Error)]
pub enum ArenaError {
    // The player's error is part of the message (not a `source`), so
    // that printing the error chain does not repeat it.
    #[error("game {game}: {player} failed: {error}")]
    Player {
        game: usize,
        player: String,
        error: Box<crate::search::SearchError>,
    },
    #[error("game {game}: {player} chose an illegal move {mv}")]
    IllegalMove {
        game: usize,
        player: String,
        mv: String,
    },
    /// A player spec that does not parse or build; `player` says which
    /// (`--a`, `player 2 of --players`).
    #[error("{player}: {error}")]
    Spec {
        player: String,
        error: Box<crate::search::SearchError>,
    },
    #[error("game {game}: no start position: {source}")]
    Start {
        game: usize,
        source: crate::games::SupportError,
    },
    /// A bad board size, setups source or count.
    #[error("{0}")]
    Options(String),
    /// A match journal's folder: held by another writer, or given other
    /// settings than it was started with.
    #[error(transparent)]
    RunDir(#[from] Box<crate::util::run_dir::RunDirError>),
    /// A match journal that cannot be read or written.
    #[error("{}: {why}", path.display())]
    Journal {
        path: std::path::PathBuf,
        why: String,
    },
}
