//! Evaluators: positions in, values out.
//!
//! An [`Evaluator`] returns one value per position from the point of view of
//! that position's side to move (positive is good for the mover), whatever
//! perspective its encoder was trained in. Evaluators are `Send + Sync`:
//! search threads share one behind an `Arc`.

mod candle_eval;
mod error;
pub mod hand;
mod native_eval;

pub use candle_eval::CandleEvaluator;
pub use error::InferError;
pub use native_eval::{native_values, NativeEvaluator};

use crate::encode::Perspective;
use crate::game::Game;

/// Values of positions for their side to move.
pub trait Evaluator<G: Game>: Send + Sync {
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, InferError>;
    /// A short name for reports.
    fn name(&self) -> String;
}

/// Converts a model output in `perspective` to the side to move's value.
#[inline]
pub fn to_side_to_move<G: Game>(state: &G, value: f32, perspective: Perspective) -> f32 {
    match perspective {
        Perspective::SideToMove => value,
        Perspective::FirstPlayer => state.side_to_move().sign() * value,
    }
}
