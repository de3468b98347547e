//! What the game registry adds to a dataset's encoder record: its
//! perspective, its board symmetries and the length of its policy targets.

use super::{FitConfig, FitError};
use crate::dataset::EncoderInfo;
use crate::encode::{EncoderSpec, Perspective, Symmetries};

/// The board symmetries of a dataset's encoder (from the registry; `None`
/// when the game or encoder is unknown there).
pub fn encoder_symmetries(game: &str, enc: &EncoderInfo) -> Symmetries {
    use crate::games::{GameKind, GameSupport};
    game.parse::<GameKind>()
        .ok()
        .and_then(|kind| {
            with_game!(kind, G => G::encoder(&enc.name, enc.shape[2]).ok().map(|e| e.symmetries()))
        })
        .unwrap_or_default()
}

/// The policy targets' length for a dataset of `game` with planes of
/// `shape`: every board point on each of the game's policy planes
/// ([`crate::game::Game::POLICY_PLANES`]). The model's policy head must
/// give as many logits.
pub(super) fn policy_len_for(
    cfg: &FitConfig,
    game: &str,
    shape: [usize; 3],
) -> Result<usize, FitError> {
    use crate::games::GameKind;
    let planes = game.parse::<GameKind>().map_or(1, |k| k.policy_planes());
    let len = planes * shape[1] * shape[2];
    match cfg.model.policy_len() {
        Some(n) if n == len => Ok(len),
        found => Err(FitError::Invalid {
            field: "policy_weight",
            why: format!(
                "{}, but {} gives {} policy logits where {game} needs {len} \
                 ({planes} plane(s) of {}x{} points)",
                cfg.policy_weight,
                cfg.model_source,
                found.map_or("no".into(), |n| n.to_string()),
                shape[1],
                shape[2]
            ),
        }),
    }
}

/// The encoder's full spec (its perspective from the registry; datasets
/// record only name, version and shape).
pub fn encoder_spec(game: &str, enc: &EncoderInfo) -> EncoderSpec {
    use crate::games::{GameKind, GameSupport};
    // The board's width is its size (the number of columns where the board
    // is not square).
    let perspective = game
        .parse::<GameKind>()
        .ok()
        .and_then(|kind| {
            with_game!(kind, G => G::encoder(&enc.name, enc.shape[2]).ok().map(|e| e.perspective()))
        })
        .unwrap_or(Perspective::SideToMove);
    EncoderSpec {
        name: enc.name.clone(),
        version: enc.version,
        shape: enc.shape,
        globals: enc.globals,
        perspective,
    }
}
