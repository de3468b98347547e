//! `plies inspect`: a linear checkpoint's piece-square tables printed and
//! drawn, and a checkpoint of another kind refused by name.

mod common;

use candle_core::Device;
use plies::checkpoint::{self, CheckpointConfig, TrainingInfo};
use plies::model::{
    seeded_tensors, Cnn3Config, Cnn3NetConfig, InputShape, LinearConfig, ModelConfig,
};
use std::path::Path;

/// An Arimaa checkpoint of `model` on `encoder`'s inputs in `dir`.
fn checkpoint_on(dir: &Path, encoder: &str, model: ModelConfig) {
    let encoder = plies::encode::arimaa_encoder(encoder).unwrap().spec();
    let tensors = seeded_tensors(&model, &mut plies::util::seeded_rng(3, 0), &Device::Cpu).unwrap();
    let ck = CheckpointConfig::new("arimaa", encoder, model, TrainingInfo::default());
    checkpoint::save(dir, &ck, &tensors).unwrap();
}

/// An Arimaa checkpoint of `model` on the `arimaa-6x8x8` planes in `dir`.
fn arimaa_checkpoint(dir: &Path, model: ModelConfig) {
    checkpoint_on(dir, "arimaa-6x8x8", model);
}

#[test]
fn a_linear_checkpoint_is_printed_and_drawn_and_other_kinds_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let linear = tmp.path().join("linear");
    arimaa_checkpoint(
        &linear,
        ModelConfig::Linear(LinearConfig::arimaa_material()),
    );
    let plot = tmp.path().join("psq.png");
    let o = common::plies(&[
        "inspect",
        &format!("ckpt:{}", linear.display()),
        "--plot",
        &plot.display().to_string(),
    ]);
    let text = common::text(&o);
    assert!(o.status.success(), "{text}");
    // Each piece type has its table.
    let lower = text.to_lowercase();
    for piece in ["elephant", "camel", "horse", "dog", "cat", "rabbit"] {
        assert!(lower.contains(piece), "{piece} missing:\n{text}");
    }
    let png = std::fs::read(&plot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");

    // Both formats when the name has no extension.
    let both = tmp.path().join("tables");
    let o = common::plies(&[
        "inspect",
        &linear.display().to_string(),
        "--plot",
        &both.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(both.with_extension("png").is_file() && both.with_extension("svg").is_file());

    let cnn3 = tmp.path().join("cnn3");
    arimaa_checkpoint(
        &cnn3,
        ModelConfig::Cnn3(Cnn3NetConfig::new(
            InputShape::new([6, 8, 8], 0),
            Cnn3Config::default(),
        )),
    );
    let o = common::plies(&["inspect", &cnn3.display().to_string()]);
    let text = common::text(&o);
    assert!(!o.status.success(), "{text}");
    assert!(text.contains("linear") && text.contains("cnn3"), "{text}");
}

#[test]
fn a_model_without_the_board_term_shows_its_feature_weights_by_name_and_draws_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("judgements");
    checkpoint_on(
        &dir,
        "arimaa-features",
        ModelConfig::Linear(LinearConfig {
            board: false,
            ..LinearConfig::new(InputShape::new(
                [6, 8, 8],
                plies::encode::arimaa_feature_names().len(),
            ))
        }),
    );
    let o = common::plies(&["inspect", &dir.display().to_string()]);
    let text = common::text(&o);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("no board term"), "{text}");
    // Every feature is listed by its name, none as a bare index.
    for name in plies::encode::arimaa_feature_names() {
        assert!(text.contains(&name), "{name} missing:\n{text}");
    }
    assert!(!text.contains("global 0"), "{text}");
    assert!(!text.to_lowercase().contains("elephant\n"), "{text}");

    let plot = tmp.path().join("none.png");
    let o = common::plies(&[
        "inspect",
        &dir.display().to_string(),
        "--plot",
        &plot.display().to_string(),
    ]);
    let text = common::text(&o);
    assert!(!o.status.success(), "{text}");
    assert!(text.contains("no board term") && !plot.exists(), "{text}");
}
