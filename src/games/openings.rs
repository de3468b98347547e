//! How games start: the standard position, or Arimaa's two setups.

use crate::game::arimaa::SetupSampler;
use std::sync::Arc;

/// How games start: the standard position, or for Arimaa the two setups.
#[derive(Clone, Debug)]
pub enum Openings {
    /// The game's start position at the configured size.
    Standard,
    /// Arimaa: gold's and silver's setups drawn independently from these.
    Setups(Arc<SetupSampler>),
    /// Arimaa: uniformly random setups.
    RandomSetups,
}

/// Openings resolved from `--setups`, with how reports name them.
#[derive(Clone, Debug)]
pub struct OpeningsChoice {
    pub openings: Openings,
    /// `standard`, `archive:...`, `random` or `file:PATH`.
    pub name: String,
    /// The sha256 of a setups file, for run configurations.
    pub file_sha256: Option<String>,
}

impl OpeningsChoice {
    /// The standard position.
    pub fn standard() -> Self {
        OpeningsChoice {
            openings: Openings::Standard,
            name: "standard".into(),
            file_sha256: None,
        }
    }
}
