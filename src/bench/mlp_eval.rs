//! Values per second of a one-hidden-layer Elliott MLP on encoded Amazons
//! positions, as a search calls it (one position at a time, one thread):
//! the evaluator's input-major copy that skips zero inputs
//! ([`FrozenMlp`]) against the learner's row-major dense pass
//! ([`NativeMlp::value`]) on the same weights and inputs.

use std::fmt;
use std::hint::black_box;
use std::time::Instant;

use super::report::Report;
use super::{BenchError, Result};
use crate::encode::encode_f32;
use crate::game::{Amazons, Game};
use crate::games::GameSupport;
use crate::model::{Activation, FrozenMlp, MlpConfig, NativeMlp, WeightInit};
use crate::util::seeded_rng;
use rand::RngExt;

pub struct MlpEvalOptions {
    /// An Amazons encoder (`amazons-territory`, `amazons-bits`, ...).
    pub encoder: String,
    pub hidden: usize,
    /// Positions, from random games of 0 to 60 plies on the 10x10 board.
    pub positions: usize,
    pub seed: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct MlpEvalReport {
    pub encoder: String,
    pub inputs: usize,
    pub hidden: usize,
    pub positions: usize,
    /// Share of the inputs that are not zero, over all positions.
    pub nonzero_share: f64,
    pub row_major_values_per_s: f64,
    pub input_major_values_per_s: f64,
    /// Largest difference between the two paths' values.
    pub max_difference: f32,
}

impl MlpEvalReport {
    /// The input-major copy over the row-major pass.
    pub fn ratio(&self) -> f64 {
        self.input_major_values_per_s / self.row_major_values_per_s
    }
}

/// Values per second of `value` over `inputs`, repeated until it has run
/// for at least half a second.
fn values_per_s(inputs: &[Vec<f32>], value: impl Fn(&[f32]) -> f32) -> f64 {
    let start = Instant::now();
    let mut done = 0usize;
    while done == 0 || start.elapsed().as_secs_f64() < 0.5 {
        for x in inputs {
            black_box(value(black_box(x)));
        }
        done += inputs.len();
    }
    done as f64 / start.elapsed().as_secs_f64()
}

pub fn run(opts: &MlpEvalOptions) -> Result<MlpEvalReport> {
    if opts.positions == 0 || opts.hidden == 0 {
        return Err(BenchError::BadOption {
            option: "--positions/--hidden".into(),
            why: "both must be at least 1".into(),
        });
    }
    let encoder = Amazons::encoder(&opts.encoder, Amazons::DEFAULT_SIZE)?;
    let mut rng = seeded_rng(opts.seed, 0);
    let mut scratch = Vec::new();
    let mut inputs = Vec::with_capacity(opts.positions);
    while inputs.len() < opts.positions {
        let mut state = Amazons::new();
        for _ in 0..rng.random_range(0..=60) {
            match state.random_move(&mut rng, &mut scratch) {
                Some(mv) => state.play(mv),
                None => break,
            }
        }
        let mut x = Vec::new();
        encode_f32(encoder.as_ref(), &state, &mut x);
        inputs.push(x);
    }
    let n_inputs = inputs[0].len();
    let cfg = MlpConfig {
        inputs: n_inputs,
        hidden: vec![opts.hidden],
        activation: Activation::Elliott { beta: 3.0 },
        init: WeightInit::Uniform { a: 0.2 },
    };
    let net = NativeMlp::new(&cfg, &mut seeded_rng(opts.seed, 1))?;
    let frozen = FrozenMlp::from(&net);
    let nonzero = inputs.iter().flatten().filter(|&&v| v != 0.0).count();
    let max_difference = inputs
        .iter()
        .map(|x| (net.value(x) - frozen.value(x)).abs())
        .fold(0.0, f32::max);
    Ok(MlpEvalReport {
        encoder: opts.encoder.clone(),
        inputs: n_inputs,
        hidden: opts.hidden,
        positions: inputs.len(),
        nonzero_share: nonzero as f64 / (n_inputs * inputs.len()) as f64,
        row_major_values_per_s: values_per_s(&inputs, |x| net.value(x)),
        input_major_values_per_s: values_per_s(&inputs, |x| frozen.value(x)),
        max_difference,
    })
}

impl fmt::Display for MlpEvalReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "MLP values, {}-{}-1 Elliott on {} ({} random Amazons positions, {:.0}% of inputs \
             non-zero), 1 thread",
            self.inputs,
            self.hidden,
            self.encoder,
            self.positions,
            100.0 * self.nonzero_share
        )?;
        writeln!(f, "{:<44} {:>12}", "path", "values/s")?;
        writeln!(
            f,
            "{:<44} {:>12.0}",
            "row-major dense (the learner's, reference)", self.row_major_values_per_s
        )?;
        writeln!(
            f,
            "{:<44} {:>12.0}",
            "input-major, zeros skipped (evaluators')", self.input_major_values_per_s
        )?;
        writeln!(
            f,
            "ratio: {:.1}x; largest difference {:.1e}",
            self.ratio(),
            self.max_difference
        )
    }
}

impl Report for MlpEvalReport {
    fn json(&self) -> serde_json::Result<String> {
        let mut v = serde_json::to_value(self)?;
        v["ratio"] = serde_json::json!(self.ratio());
        serde_json::to_string(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_paths_value_the_same_territory_positions() {
        let r = run(&MlpEvalOptions {
            encoder: "amazons-territory".into(),
            hidden: 8,
            positions: 20,
            seed: 2,
        })
        .unwrap();
        assert_eq!((r.inputs, r.positions), (609, 20));
        assert!(r.max_difference < 1e-4, "{}", r.max_difference);
        assert!(
            r.nonzero_share > 0.0 && r.nonzero_share < 1.0,
            "{}",
            r.nonzero_share
        );
        assert!(r.row_major_values_per_s > 0.0 && r.input_major_values_per_s > 0.0);
        let json: serde_json::Value = serde_json::from_str(&r.json().unwrap()).unwrap();
        assert!(json["ratio"].as_f64().unwrap() > 0.0);
        let err = run(&MlpEvalOptions {
            encoder: "amazons-nope".into(),
            hidden: 8,
            positions: 1,
            seed: 2,
        })
        .err()
        .unwrap()
        .to_string();
        assert!(err.contains("amazons-nope"), "{err}");
    }
}
