//! What the engine is given to play with: seeded Arimaa checkpoints and a
//! position with one obvious capture.

use crate::game::arimaa::Arimaa;
use crate::game::Game;
use crate::util::seeded_rng;

/// Writes a seeded Arimaa checkpoint into `dir` and returns its path:
/// Zaffetti's cnn3 (untrained) or the piece-square table started from
/// material values (`arimaa-6x8x8` encoder either way).
pub(super) fn arimaa_checkpoint(dir: &std::path::Path, cnn: bool) -> String {
    use crate::checkpoint::{self, CheckpointConfig, TrainingInfo};
    use crate::model::{
        seeded_tensors, Cnn3Config, Cnn3NetConfig, InputShape, LinearConfig, ModelConfig,
    };
    let encoder = crate::encode::arimaa_encoder("arimaa-6x8x8")
        .unwrap()
        .spec();
    let model = if cnn {
        ModelConfig::Cnn3(Cnn3NetConfig::new(
            InputShape::new(encoder.shape, encoder.globals),
            Cnn3Config::default(),
        ))
    } else {
        ModelConfig::Linear(LinearConfig::arimaa_material())
    };
    let tensors = seeded_tensors(&model, &mut seeded_rng(5, 0), &candle_core::Device::Cpu).unwrap();
    let ck = CheckpointConfig::new("arimaa", encoder, model, TrainingInfo::default());
    checkpoint::save(dir, &ck, &tensors).unwrap();
    dir.display().to_string()
}

/// Gold's elephant on d4 can push the silver cat on d3 onto trap c3 and
/// capture it.
pub(super) fn free_cat() -> Arimaa {
    Arimaa::from_text(&format!(
        "g {}",
        "r......r\
         ........\
         ........\
         ........\
         ...E....\
         ...c....\
         ........\
         R......R"
    ))
    .unwrap()
}
