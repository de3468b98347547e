//! `mdp:MODEL_FILE`: the bucketed MDP learner of `plies train mdp`
//! ([`MdpPlayer`]).

use super::{bad, PlayerKind};
use crate::games::GameSupport;
use crate::search::evaluators::PlayerContext;
use crate::search::mdp::MdpPlayer;
use crate::search::{Player, SearchError};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// An `mdp` spec: the model file.
#[derive(Clone, Debug, PartialEq)]
pub struct MdpSpec {
    pub model: PathBuf,
}

impl fmt::Display for MdpSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mdp:{}", self.model.display())
    }
}

impl PlayerKind for MdpSpec {
    const NAMES: &'static [&'static str] = &["mdp"];

    /// The text after `mdp:` is a file name, not options.
    fn parse(text: &str, _: &str, args: Option<&str>) -> Result<Self, SearchError> {
        match args {
            None | Some("") => Err(bad(text, "expected mdp:MODEL_FILE")),
            Some(file) => Ok(MdpSpec {
                model: file.trim().into(),
            }),
        }
    }

    fn build<G: GameSupport>(&self, _: &PlayerContext) -> Result<Arc<dyn Player<G>>, SearchError> {
        Ok(Arc::new(MdpPlayer::load::<G>(&self.model)?))
    }
}
