//! A step-level alpha-beta for Arimaa: the tree's plies are single steps,
//! as the strong Arimaa programs search, instead of whole turns of up to
//! four steps ([`search`]); evaluations kept up to date per step
//! ([`psq_eval`]); and the `steps:` player that searches with them
//! ([`player`]).

pub mod player;
pub mod psq_eval;
pub mod search;

pub use player::{StepSearchPlayer, StepsSpec, DEFAULT_STEPS};
pub use psq_eval::{PieceSquareEval, StepScorer};
pub use search::{step_search, StepChoice, StepLimits, StepSearchResult};
