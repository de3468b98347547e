//! What the rest of plies needs from each game beyond its rules: the one
//! list of games, the one dispatch from a game's name to its type
//! ([`with_game!`](crate::with_game)), and the [`GameSupport`] trait that
//! each game's support file implements (encoders and hand evaluators by
//! name, start positions or Arimaa setups, record starts, exploration
//! moves, immediate wins, OpenSpiel's names for its actions).
//!
//! Adding a game is its rules module in [`crate::game`], its support file
//! here, and one line in the list below; every command, player and
//! consumer then reaches it through [`GameKind`] and [`GameSupport`].
//!
//! ```
//! use plies::games::{GameKind, GameSupport};
//! let kind: GameKind = "atari-go".parse().unwrap();
//! let encoders = plies::with_game!(kind, G => G::ENCODERS);
//! assert_eq!(encoders, ["stones-2"]);
//! ```

mod amazons;
mod arimaa;
mod arimaa_steps;
mod atari_go;
mod connect_four;
mod error;
mod gomoku;
mod openings;
mod pentago;
mod tictactoe;

pub use arimaa::{setups_from_file, shipped_setups};
pub use error::SupportError;
pub use openings::{random_opening, Openings, OpeningsChoice};

use crate::encode::{EncodeError, Encoder};
use crate::game::{Game, Side};
use crate::infer::hand::{FeatureSet, HandEval};
use crate::record::{GameRecord, RecordError, ReplaySummary};
use crate::util::SeededRng;
use std::fmt;
use std::str::FromStr;

/// The games: `Variant => type in crate::game, "command-line name";`.
/// Generates [`GameKind`] and the [`with_game!`](crate::with_game) macro.
macro_rules! game_list {
    ($d:tt $($Variant:ident => $Ty:ident, $name:literal;)*) => {
        /// A game the command line can name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum GameKind {
            $($Variant,)*
        }

        impl GameKind {
            pub const ALL: &'static [GameKind] = &[$(GameKind::$Variant,)*];

            /// The name used on the command line and in files.
            pub fn name(self) -> &'static str {
                match self {
                    $(GameKind::$Variant => $name,)*
                }
            }
        }

        /// Evaluates `body` with `G` standing for the type of the game a
        /// [`GameKind`] names: the one place where a game's name becomes
        /// its type. `with_game!(kind, G => run::<G>(args))`.
        #[macro_export]
        macro_rules! with_game {
            ($d kind:expr, $d G:ident => $d body:expr) => {
                match $d kind {
                    $($d crate::games::GameKind::$Variant => {
                        type $d G = $d crate::game::$Ty;
                        $d body
                    })*
                }
            };
        }
    };
}

game_list! { $
    TicTacToe => TicTacToe, "tictactoe";
    Arimaa => Arimaa, "arimaa";
    ArimaaSteps => ArimaaSteps, "arimaa-steps";
    Amazons => Amazons, "amazons";
    Pentago => Pentago, "pentago";
    Gomoku => Gomoku, "gomoku";
    AtariGo => AtariGo, "atari-go";
    ConnectFour => ConnectFour, "connect-four";
}

impl GameKind {
    /// The game's [`crate::game::Game::POLICY_PLANES`].
    pub fn policy_planes(self) -> usize {
        with_game!(self, G => <G as crate::game::Game>::POLICY_PLANES)
    }

    /// Every game's name, for help and errors.
    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|k| k.name()).collect()
    }

    /// Refuses every game but `only`, for commands written for one game
    /// (Arimaa's move listings, Tic-tac-toe's study).
    pub fn require(self, only: GameKind, command: &str) -> Result<(), SupportError> {
        if self == only {
            Ok(())
        } else {
            Err(SupportError::OneGameOnly {
                command: command.to_string(),
                only: only.name(),
                given: self.name(),
            })
        }
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GameKind {
    type Err = SupportError;
    /// Case, `-` and `_` do not matter: `atari_go`, `AtariGo`, `atari-go`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = |t: &str| t.to_ascii_lowercase().replace(['-', '_'], "");
        Self::ALL
            .iter()
            .copied()
            .find(|k| norm(k.name()) == norm(s))
            .ok_or_else(|| SupportError::UnknownGame {
                name: s.to_string(),
                known: Self::names().join(", "),
            })
    }
}

/// The games of one imported file.
#[derive(Debug, Default)]
pub struct ImportedFile {
    pub records: Vec<GameRecord>,
    /// `id: why` for each game left out.
    pub skipped: Vec<String>,
}

/// Everything plies needs from a game beyond its rules. Each game's support
/// file implements it; defaults cover games without the capability.
pub trait GameSupport: Game {
    /// This game's entry in the list.
    const KIND: GameKind;

    /// How reports name a board of side `size`: `15x15`.
    fn board_label(size: usize) -> String {
        format!("{size}x{size}")
    }

    /// How reports name the first and second player.
    const SIDE_NAMES: [&'static str; 2] = ["first", "second"];

    /// The encoders this game has, the default first.
    const ENCODERS: &'static [&'static str];

    /// The encoder called `name` for boards of `size` (checkpoints and
    /// datasets name the encoder they were made with).
    fn encoder(name: &str, size: usize) -> Result<Box<dyn Encoder<Self>>, EncodeError>;

    /// The hand evaluators by name, the default first (empty: none).
    const HAND_EVALS: &'static [&'static str] = &[];

    /// The hand evaluator called `name`, if the game has one.
    fn hand_eval(_name: &str) -> Option<HandEval<Self>> {
        None
    }

    /// The hand evaluators with a weight vector (`plies tune` tunes them;
    /// `eval=NAME:WEIGHTS_FILE` loads tuned weights), the default first.
    const FEATURE_SETS: &'static [&'static str] = &[];

    /// The features of the weighted hand evaluator called `name`.
    fn feature_set(_name: &str) -> Option<FeatureSet<Self>> {
        None
    }

    /// The board's cells as piece codes, 0 empty, 1 the first player's,
    /// 2 the second's, in the order the bucketed MDP learner hashes them
    /// (runs of nine cells share a prime); `false` for a game without a
    /// grid of stones, which that learner does not play.
    fn piece_codes(&self, _out: &mut Vec<u8>) -> bool {
        false
    }

    /// Resolves `--setups`: `None` is the game's default openings. Games
    /// without setups refuse any value.
    fn openings(setups: Option<&str>) -> Result<OpeningsChoice, SupportError> {
        match setups {
            None => Ok(OpeningsChoice::standard()),
            Some(s) => Err(SupportError::NoSetups {
                game: Self::NAME,
                given: s.to_string(),
            }),
        }
    }

    /// The start of a game on a `size` board with `openings`, and the
    /// setups its record stores (Arimaa draws them from `rng`).
    fn start(
        size: usize,
        openings: &Openings,
        _rng: &mut SeededRng,
    ) -> Result<(Self, Vec<String>), SupportError> {
        match openings {
            Openings::Standard => Ok((Self::with_size(size)?, Vec::new())),
            _ => Err(SupportError::NoSetups {
                game: Self::NAME,
                given: "setups".into(),
            }),
        }
    }

    /// The position before `rec.moves[0]`; the error says what is wrong
    /// with the record (wrong game, bad size, bad setup).
    fn record_start(rec: &GameRecord) -> Result<Self, SupportError> {
        check_record_game::<Self>(rec)?;
        match rec.board_size {
            Some(n) => Self::with_size(n).map_err(|e| SupportError::Record {
                id: rec.id.clone(),
                why: e.to_string(),
            }),
            None => Ok(Self::new()),
        }
    }

    /// The terminations this game's records may name, when that list is
    /// closed (Arimaa's); `None`: any snake_case name.
    const TERMINATIONS: Option<&'static [&'static str]> = None;

    /// The terminations a dataset keeps by default; `None`: every one but
    /// the endings not decided on the board.
    const DEFAULT_TERMINATIONS: Option<&'static [&'static str]> = None;

    /// How a game ended, for its record: `win`, `draw`, or `unfinished`
    /// (Arimaa names its terminations).
    fn termination_name(&self) -> &'static str {
        match self.outcome() {
            Some(crate::game::Outcome::Win(_)) => "win",
            Some(crate::game::Outcome::Draw) => "draw",
            None => "unfinished",
        }
    }

    /// A random move for exploration (`--epsilon`): uniform by default;
    /// Arimaa's is a `random-steps` turn. `None` when the game is over.
    fn exploration_move(
        &self,
        rng: &mut SeededRng,
        scratch: &mut Vec<Self::Move>,
    ) -> Option<Self::Move> {
        self.random_move(rng, scratch)
    }

    /// Whether the game builds turns one random step at a time (the
    /// `random-steps` player): Arimaa.
    const RANDOM_STEPS: bool = false;

    /// A turn of random steps, ending after each step with probability
    /// `end`; games without steps draw a uniform move.
    fn random_steps_move(
        &self,
        _end: f64,
        rng: &mut SeededRng,
        scratch: &mut Vec<Self::Move>,
    ) -> Option<Self::Move> {
        self.random_move(rng, scratch)
    }

    /// The moves with which `side` would win at once, for games where
    /// that point is also the one that blocks it (the EXPERT player);
    /// `None` for other games.
    fn immediate_wins(&self, _side: Side) -> Option<Vec<Self::Move>> {
        None
    }

    /// The shortest and longest games possible on a board of side `size`,
    /// in moves (Schaul & Schmidhuber's `Mmin`, `Mmax`, by which evolution's
    /// fitness rewards quick wins and slow losses); `None`: not known, the
    /// fitness then counts results only.
    fn game_length_bounds(_size: usize) -> Option<(u32, u32)> {
        None
    }

    /// An upper estimate of the legal moves of one position on a board of
    /// `size` (the children that comparison training and move prediction
    /// expand and encode): what sizes their memory before a run starts.
    /// `None`: not known.
    fn most_legal_moves(_size: usize) -> Option<u64> {
        None
    }

    /// The record formats `plies import` reads for this game, the default
    /// first (empty: none).
    const RECORD_FORMATS: &'static [&'static str] = &[];

    /// The games of one file of `format`, each replayed through the rules;
    /// the games that cannot be imported are listed (`id: why`), a file
    /// that cannot be read is an error naming it.
    fn import_records(format: &str, _path: &std::path::Path) -> Result<ImportedFile, SupportError> {
        Err(unknown_format::<Self>(format))
    }

    /// Replays a file of the rules oracle's games move for move
    /// (`plies rules replay`): OpenSpiel's JSONL by default, pyrimaa's for
    /// Arimaa.
    fn replay_oracle(path: &std::path::Path) -> Result<ReplaySummary, RecordError> {
        crate::record::replay_file::<Self>(path)
    }

    /// OpenSpiel's name for this game (`None`: OpenSpiel does not have
    /// it): for the rules oracles and the `spiel-mcts` player.
    const SPIEL_NAME: Option<&'static str> = None;

    /// Whether [`Self::SPIEL_NAME`] is a game `scripts/spiel_mcts_bot.py`
    /// defines in Python on OpenSpiel's own (Atari-Go on `go`): only
    /// OpenSpiel's Python MCTS bot can search it.
    const SPIEL_PYTHON_GAME: bool = false;

    /// How many OpenSpiel actions one plies move is (all by the same
    /// player, one after the other).
    const SPIEL_ACTIONS: usize = 1;

    /// OpenSpiel's game parameters for a board of side `size`.
    fn spiel_params(_size: usize) -> Vec<(&'static str, i64)> {
        Vec::new()
    }

    /// The OpenSpiel actions of `mv` (legal in `self`).
    fn to_spiel_actions(&self, _mv: Self::Move) -> Vec<i64> {
        Vec::new()
    }

    /// The move that `actions` make in `self`, `None` when they name no
    /// move of this board (the move may still be illegal).
    fn spiel_move(&self, _actions: &[i64]) -> Option<Self::Move> {
        None
    }
}

/// OpenSpiel's game string, as `pyspiel.load_game` reads it:
/// `amazons(board_size=6)`, `tic_tac_toe()`; `None` for games OpenSpiel
/// does not have.
pub fn spiel_game_string<G: GameSupport>(size: usize) -> Option<String> {
    let name = G::SPIEL_NAME?;
    let params: Vec<String> = G::spiel_params(size)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    Some(format!("{name}({})", params.join(",")))
}

/// `format` is not one of `G`'s record formats.
pub(crate) fn unknown_format<G: GameSupport>(format: &str) -> SupportError {
    SupportError::UnknownFormat {
        game: G::NAME,
        format: format.to_string(),
        known: G::RECORD_FORMATS.join(", "),
    }
}

/// One OpenSpiel action in `0..cells`, for games whose move is one cell.
pub(crate) fn cell_action(actions: &[i64], cells: usize) -> Option<usize> {
    match actions {
        [a] if (0..cells as i64).contains(a) => Some(*a as usize),
        _ => None,
    }
}

fn check_record_game<G: Game>(rec: &GameRecord) -> Result<(), SupportError> {
    if rec.game != G::NAME {
        return Err(SupportError::Record {
            id: rec.id.clone(),
            why: format!(
                "the record is a '{}' game, expected '{}'",
                rec.game,
                G::NAME
            ),
        });
    }
    Ok(())
}

/// A cell's piece code for [`GameSupport::piece_codes`]: 0 empty, 1 the
/// first player's, 2 the second's.
pub(crate) fn piece_code(owner: Option<Side>) -> u8 {
    match owner {
        None => 0,
        Some(Side::First) => 1,
        Some(Side::Second) => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_to_their_kind() {
        for &k in GameKind::ALL {
            assert_eq!(k.name().parse::<GameKind>().unwrap(), k);
            assert_eq!(with_game!(k, G => G::KIND), k);
            // Files name games by `Game::NAME` (`atari_go`), which parses too.
            assert_eq!(with_game!(k, G => G::NAME).parse::<GameKind>().unwrap(), k);
        }
        assert_eq!("Atari_Go".parse::<GameKind>().unwrap(), GameKind::AtariGo);
        let err = "chess".parse::<GameKind>().unwrap_err().to_string();
        assert!(err.contains("chess") && err.contains("arimaa"), "{err}");
    }

    #[test]
    fn every_game_has_its_encoders_and_hand_evaluators() {
        for &k in GameKind::ALL {
            with_game!(k, G => {
                assert!(!G::ENCODERS.is_empty(), "{k}");
                for name in G::ENCODERS {
                    let e = G::encoder(name, G::DEFAULT_SIZE).unwrap();
                    assert_eq!(e.spec().name, *name);
                }
                assert!(G::encoder("no-such-encoder", G::DEFAULT_SIZE).is_err());
                for name in G::HAND_EVALS {
                    let eval = G::hand_eval(name).unwrap();
                    assert_eq!(crate::infer::Evaluator::name(&eval), *name);
                    assert!(eval.value(&G::new()).abs() <= 1.0);
                }
                assert!(G::hand_eval("no-such-eval").is_none());
            })
        }
    }

    pub(super) fn record(game: &str, size: Option<usize>, setups: Vec<String>) -> GameRecord {
        GameRecord {
            game: game.into(),
            id: "g1".into(),
            source: "test".into(),
            event: String::new(),
            players: crate::record::PerSide::new("a".into(), "b".into()),
            ratings: crate::record::PerSide::new(None, None),
            player_types: None,
            setups,
            moves: vec![],
            result: None,
            termination: "unfinished".into(),
            plies: 0,
            rated: None,
            start_time: None,
            board_size: size,
            explored: Vec::new(),
        }
    }

    #[test]
    fn the_board_size_comes_from_the_record() {
        use crate::game::{Gomoku, Pentago};
        let g = Gomoku::record_start(&record("gomoku", Some(9), vec![])).unwrap();
        assert_eq!(g.size(), 9);
        let g = Gomoku::record_start(&record("gomoku", None, vec![])).unwrap();
        assert_eq!(g.size(), Gomoku::DEFAULT_SIZE);
        let err = Pentago::record_start(&record("pentago", Some(9), vec![]))
            .unwrap_err()
            .to_string();
        assert!(err.contains('9') && err.contains("g1"), "{err}");
    }

    #[test]
    fn a_record_of_another_game_is_refused() {
        let err = crate::game::Amazons::record_start(&record("gomoku", None, vec![]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'gomoku'") && err.contains("'amazons'"),
            "{err}"
        );
    }

    #[test]
    fn arimaa_starts_after_the_setups() {
        use crate::game::arimaa::Setup;
        use crate::game::Arimaa;
        let gold = Setup::standard(Side::First).to_notation();
        let silver = Setup::standard(Side::Second).to_notation();
        let g = Arimaa::record_start(&record("arimaa", None, vec![gold, silver])).unwrap();
        assert_eq!(g.side_to_move(), Side::First);
        assert_eq!(g.position().occupied().count_ones(), 32);
        let err = Arimaa::record_start(&record("arimaa", None, vec![]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("2 setups"), "{err}");
    }

    #[test]
    fn setups_are_refused_by_games_without_them() {
        use crate::game::Gomoku;
        let err = Gomoku::openings(Some("random")).unwrap_err().to_string();
        assert!(
            err.contains("Arimaa only") && err.contains("gomoku"),
            "{err}"
        );
        assert_eq!(Gomoku::openings(None).unwrap().name, "standard");
    }
}
