//! Datasets one encoder wrote, read by a checkpoint of another encoder whose
//! planes at those positions are the dataset's plus constant planes.
//!
//! The one such pair: a whole-turn Arimaa position (`arimaa` game,
//! `arimaa-6x8x8`) is the start of a turn of [`ArimaaSteps`], whose
//! `arimaa-steps-8x8x8` planes there are the same six piece-type planes,
//! four steps left and no push or pull square. So a network trained one step
//! at a time is scored on real whole-turn games (the 2026 evaluation set)
//! without a second dataset of them.
//!
//! [`ArimaaSteps`]: crate::game::ArimaaSteps

use super::{ArimaaStepPlanes, ArimaaTypePlanes, Encoder};
use crate::game::{Arimaa, ArimaaSteps, Game};
use candle_core::{Result, Tensor};

/// How to turn one encoder's planes into another's: the value of each plane
/// appended after them, on every square.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaneBridge {
    /// What the bridge reads, as `game/encoder` -> `game/encoder`.
    pub description: String,
    appended: Vec<f32>,
}

impl PlaneBridge {
    /// `planes [B, C, H, W]` -> `[B, C + appended, H, W]`.
    pub fn apply(&self, planes: &Tensor) -> Result<Tensor> {
        let (b, _, h, w) = planes.dims4()?;
        let mut parts = vec![planes.clone()];
        for &v in &self.appended {
            let plane = Tensor::full(v, (b, 1, h, w), planes.device())?.to_dtype(planes.dtype())?;
            parts.push(plane);
        }
        Tensor::cat(&parts, 1)
    }
}

/// An encoder as datasets and checkpoints name it: its game, name and
/// version (which fix its shape).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncoderKey<'a> {
    pub game: &'a str,
    pub encoder: &'a str,
    pub version: u32,
}

impl<'a> EncoderKey<'a> {
    fn of<G: Game>(encoder: &'a dyn Encoder<G>) -> Self {
        EncoderKey {
            game: G::NAME,
            encoder: encoder.name(),
            version: encoder.spec().version,
        }
    }
}

/// The bridge from a dataset encoded as `dataset` to a checkpoint encoded
/// as `model`, if the model's planes at the dataset's positions follow from
/// the dataset's (names and versions as this build writes them).
pub fn plane_bridge(dataset: EncoderKey<'_>, model: EncoderKey<'_>) -> Option<PlaneBridge> {
    let from = EncoderKey::of::<Arimaa>(&ArimaaTypePlanes);
    let to = EncoderKey::of::<ArimaaSteps>(&ArimaaStepPlanes);
    (dataset == from && model == to).then(|| PlaneBridge {
        description: format!(
            "{}/{} -> {}/{}",
            from.game, from.encoder, to.game, to.encoder
        ),
        // A turn's four steps left; no push or pull square.
        appended: vec![4.0, 0.0],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::arimaa::Setup;
    use crate::game::Side;
    use crate::util::seeded_rng;
    use candle_core::{DType, Device};

    fn planes<G: Game>(enc: &dyn Encoder<G>, state: &G) -> Vec<f32> {
        let mut p = vec![0i8; enc.plane_len()];
        enc.encode(state, &mut p, &mut []);
        p.into_iter().map(f32::from).collect()
    }

    /// At every turn start of random games, the bridged whole-turn planes
    /// are exactly the planes of the same position one step at a time.
    #[test]
    fn whole_turn_planes_bridge_to_the_steps_encoding_of_the_turn_start() {
        let bridge = plane_bridge(
            EncoderKey::of::<Arimaa>(&ArimaaTypePlanes),
            EncoderKey::of::<ArimaaSteps>(&ArimaaStepPlanes),
        )
        .unwrap();
        let mut rng = seeded_rng(5, 0);
        let mut checked = 0;
        let mut scratch = Vec::new();
        for _ in 0..4 {
            let gold = Setup::random(Side::First, &mut rng);
            let silver = Setup::random(Side::Second, &mut rng);
            let mut game = Arimaa::from_setups(&gold, &silver).unwrap();
            for _ in 0..30 {
                if game.outcome().is_some() {
                    break;
                }
                let whole = planes(&ArimaaTypePlanes, &game);
                let x = Tensor::from_vec(whole, (1, 6, 8, 8), &Device::Cpu).unwrap();
                let bridged = bridge.apply(&x).unwrap().flatten_all().unwrap();
                let steps = ArimaaSteps::from_game(game.clone());
                assert_eq!(
                    bridged.to_vec1::<f32>().unwrap(),
                    planes(&ArimaaStepPlanes, &steps),
                    "{}",
                    game.to_text()
                );
                checked += 1;
                let mv = game.random_move(&mut rng, &mut scratch).unwrap();
                game.play(mv);
            }
        }
        assert!(checked > 60, "{checked}");
        // The appended planes keep the input's dtype.
        let x = Tensor::zeros((2, 6, 8, 8), DType::F64, &Device::Cpu).unwrap();
        assert_eq!(bridge.apply(&x).unwrap().dims(), &[2, 8, 8, 8]);
        assert_eq!(bridge.apply(&x).unwrap().dtype(), DType::F64);
    }

    /// Any other pair, or another version, has no bridge.
    #[test]
    fn only_the_turn_start_pair_bridges() {
        let whole = EncoderKey::of::<Arimaa>(&ArimaaTypePlanes);
        let steps = EncoderKey::of::<ArimaaSteps>(&ArimaaStepPlanes);
        assert!(plane_bridge(whole, steps).is_some());
        assert!(plane_bridge(steps, whole).is_none());
        let other_game = EncoderKey {
            game: ArimaaSteps::NAME,
            ..whole
        };
        assert!(plane_bridge(other_game, steps).is_none());
        let old = EncoderKey {
            version: 0,
            ..whole
        };
        assert!(plane_bridge(old, steps).is_none());
    }
}
