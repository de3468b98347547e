//! Encoders: a position -> integer planes `[C, H, W]` plus global features.
//!
//! Every encoder has a name and a version; datasets and checkpoints record
//! both, so a model is never fed planes it was not trained on.

mod amazons;
mod amazons_territory;
mod arimaa;
mod arimaa_features;
mod arimaa_rich;
mod arimaa_steps;
mod bridge;
mod error;
mod registry;
mod stones;
mod symmetry;
mod tictactoe;

pub use amazons::{AmazonsEncoder, AmazonsRepr};
pub use amazons_territory::AmazonsTerritoryEncoder;
pub use arimaa::ArimaaTypePlanes;
pub use arimaa_features::{feature_names as arimaa_feature_names, ArimaaFeatures};
pub use arimaa_rich::{ArimaaRichPlanes, RICH_PLANES};
pub use arimaa_steps::ArimaaStepPlanes;
pub use bridge::{plane_bridge, EncoderKey, PlaneBridge};
pub use error::EncodeError;
pub use registry::{amazons_encoder, stones_encoder};
pub use stones::{StoneGrid, Stones2};
pub use symmetry::Symmetries;
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

/// Turns positions of `G` into model inputs. An encoder states its name,
/// shape, globals and perspective once; [`Encoder::spec`] and the sizes hot
/// paths ask for follow from them without allocating.
pub trait Encoder<G: Game>: Send + Sync {
    /// The name datasets and checkpoints record.
    fn name(&self) -> &'static str;
    /// `[C, H, W]`.
    fn shape(&self) -> [usize; 3];
    /// Whose point of view the planes take.
    fn perspective(&self) -> Perspective;
    /// Fills `planes` (`C*H*W` values) and `globals`.
    fn encode(&self, state: &G, planes: &mut [i8], globals: &mut [f32]);

    /// Number of global features.
    fn globals_len(&self) -> usize {
        0
    }

    /// The board symmetries the encoding is invariant under (training may
    /// draw one per example; see [`Symmetries`]). None unless declared.
    fn symmetries(&self) -> Symmetries {
        Symmetries::None
    }

    /// A name per plane, for tables of per-plane weights.
    fn plane_names(&self) -> Vec<String> {
        (0..self.shape()[0]).map(|c| format!("plane {c}")).collect()
    }

    /// A name per global feature, for tables of per-feature weights.
    fn global_names(&self) -> Vec<String> {
        (0..self.globals_len())
            .map(|i| format!("global {i}"))
            .collect()
    }

    /// Labels of the board's columns (left to right) and rows (top to
    /// bottom, row 0 first), for drawing per-square weights.
    fn axis_labels(&self) -> (Vec<String>, Vec<String>) {
        let [_, h, w] = self.shape();
        (
            (0..w).map(|c| c.to_string()).collect(),
            (0..h).map(|r| r.to_string()).collect(),
        )
    }

    /// `C*H*W`.
    fn plane_len(&self) -> usize {
        let [c, h, w] = self.shape();
        c * h * w
    }

    /// The encoding's version: raised when what an encoder of the same
    /// name writes changes, so data and models of the old one are told
    /// apart (1 unless an encoder says otherwise).
    fn version(&self) -> u32 {
        1
    }

    /// What datasets and checkpoints record.
    fn spec(&self) -> EncoderSpec {
        EncoderSpec {
            name: self.name().into(),
            version: self.version(),
            shape: self.shape(),
            globals: self.globals_len(),
            perspective: self.perspective(),
        }
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

/// The encoder of `all` called `name`, or an error listing their names.
fn by_name<G: Game>(
    name: &str,
    all: Vec<Box<dyn Encoder<G>>>,
) -> Result<Box<dyn Encoder<G>>, EncodeError> {
    let known = all.iter().map(|e| e.name()).collect();
    all.into_iter()
        .find(|e| e.name() == name)
        .ok_or_else(|| EncodeError::Unknown {
            game: G::NAME.into(),
            name: name.into(),
            known,
        })
}

/// The Tic-tac-toe encoders by name.
pub fn tictactoe_encoder(name: &str) -> Result<Box<dyn Encoder<TicTacToe>>, EncodeError> {
    by_name(name, vec![Box::new(TttAbsolute), Box::new(TttPlanes)])
}

/// The Arimaa encoders by name.
pub fn arimaa_encoder(name: &str) -> Result<Box<dyn Encoder<Arimaa>>, EncodeError> {
    by_name(
        name,
        vec![
            Box::new(ArimaaTypePlanes),
            Box::new(ArimaaRichPlanes),
            Box::new(ArimaaFeatures),
        ],
    )
}
