//! Encoders: a position -> integer planes `[C, H, W]` plus global features.
//!
//! Every encoder has a name and a version; datasets and checkpoints record
//! both, so a model is never fed planes it was not trained on.

mod amazons;
mod arimaa;
mod arimaa_rich;
mod error;
mod registry;
mod stones;
mod tictactoe;

pub use amazons::{AmazonsEncoder, AmazonsRepr};
pub use arimaa::ArimaaTypePlanes;
pub use arimaa_rich::{ArimaaRichPlanes, RICH_PLANES};
pub use error::EncodeError;
pub use registry::{amazons_encoder, stones_encoder};
pub use stones::{StoneGrid, Stones2};
pub use tictactoe::{TttAbsolute, TttPlanes};

use crate::game::{Arimaa, Game, TicTacToe};
use serde::{Deserialize, Serialize};

/// Whose point of view an encoding (and so a model's value) takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Perspective {
    /// Values favour the first player when positive (the Tic-tac-toe
    /// study's +1 White / -1 Black board vector).
    FirstPlayer,
    /// Values favour the side to move when positive.
    SideToMove,
}

/// What a dataset or checkpoint records about its encoder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncoderSpec {
    pub name: String,
    pub version: u32,
    /// `[C, H, W]`.
    pub shape: [usize; 3],
    pub globals: usize,
    pub perspective: Perspective,
}

/// Turns positions of `G` into model inputs.
pub trait Encoder<G: Game>: Send + Sync {
    fn spec(&self) -> EncoderSpec;
    /// Fills `planes` (`C*H*W` values) and `globals`.
    fn encode(&self, state: &G, planes: &mut [i8], globals: &mut [f32]);

    /// `C*H*W`. Hot paths call these three instead of [`Encoder::spec`],
    /// which allocates; encoders override them with constants.
    fn plane_len(&self) -> usize {
        let [c, h, w] = self.spec().shape;
        c * h * w
    }

    fn globals_len(&self) -> usize {
        self.spec().globals
    }

    fn perspective(&self) -> Perspective {
        self.spec().perspective
    }
}

/// Encodes one position as `f32` (planes then globals), the layout the MLPs read.
pub fn encode_f32<G: Game>(enc: &dyn Encoder<G>, state: &G, out: &mut Vec<f32>) {
    let mut planes = vec![0i8; enc.plane_len()];
    let mut globals = vec![0f32; enc.globals_len()];
    enc.encode(state, &mut planes, &mut globals);
    out.clear();
    out.extend(planes.iter().map(|&v| v as f32));
    out.extend_from_slice(&globals);
}

/// The Tic-tac-toe encoders by name.
pub fn tictactoe_encoder(name: &str) -> Result<Box<dyn Encoder<TicTacToe>>, EncodeError> {
    match name {
        TttAbsolute::NAME => Ok(Box::new(TttAbsolute)),
        TttPlanes::NAME => Ok(Box::new(TttPlanes)),
        _ => Err(EncodeError::Unknown {
            game: "tictactoe".into(),
            name: name.into(),
            known: vec![TttAbsolute::NAME, TttPlanes::NAME],
        }),
    }
}

/// The Arimaa encoders by name.
pub fn arimaa_encoder(name: &str) -> Result<Box<dyn Encoder<Arimaa>>, EncodeError> {
    match name {
        ArimaaTypePlanes::NAME => Ok(Box::new(ArimaaTypePlanes)),
        ArimaaRichPlanes::NAME => Ok(Box::new(ArimaaRichPlanes)),
        _ => Err(EncodeError::Unknown {
            game: "arimaa".into(),
            name: name.into(),
            known: vec![ArimaaTypePlanes::NAME, ArimaaRichPlanes::NAME],
        }),
    }
}
