//! A linear evaluation: one weight per (plane, square), Bonanza-style
//! piece-square tables when the planes are one per piece type.
//!
//! ```text
//! value = output( sum_{c,h,w} planes[c,h,w] * psq[c,h,w] + globals . g + bias )
//! ```
//!
//! Tensor names:
//!
//! | name | shape |
//! | --- | --- |
//! | `psq.weight` | `[C, H, W]` |
//! | `psq.bias` | `[1]` |
//! | `globals.weight` | `[G]` (only when `G > 0`) |
//!
//! With `"board": false` the model has no `psq.weight`: it is a logistic
//! regression over the encoder's globals alone (a player's judgements, as
//! `arimaa-features` gives them), for data whose square-by-square habits
//! should not be learned (self-play of one kind of player).
//!
//! For `arimaa-6x8x8` (planes rabbit, cat, dog, horse, camel, elephant, +1
//! own, -1 opponent) that is 384 piece-square weights.
//! [`LinearConfig::arimaa_material`] starts them from Bonanza's material
//! values (elephant 20000, camel 5000, horse 3000, dog 1800, cat 1500,
//! rabbit 1000) times 1/5000, so a rabbit ahead is a logit of 0.2 (a
//! sigmoid value of 0.55) and a camel ahead 1.0 (0.73).

use super::init::{fan_in_bound, Draw, TensorInit};
use super::io::{Batch, InputShape, ModelInput, ModelIo, ModelOutput, OutputActivation};
use super::size::{add, input_fields, mul, ParamCount, Sizes};
use super::{ModelError, ValueNet};
use candle_core::{Result, Tensor};
use candle_nn::{Init, VarBuilder};
use serde::{Deserialize, Serialize};

/// Material values of Arimaa's pieces in `arimaa-6x8x8` plane order
/// (rabbit, cat, dog, horse, camel, elephant), as the Bonanza study uses them.
/// The name of the weights over the globals: a vector, yet weights, not
/// a bias (the penalties of [`crate::train::regularize`] cover it).
pub const GLOBALS_WEIGHT: &str = "globals.weight";

pub const ARIMAA_MATERIAL: [f64; 6] = [1000.0, 1500.0, 1800.0, 3000.0, 5000.0, 20000.0];

/// How a linear model's weights start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LinearInit {
    /// Uniform in `+-1/sqrt(C*H*W + G)`.
    #[default]
    FanIn,
    /// All zero (the value of every position is `output(0)`).
    Zeros,
    /// Every square of plane `c` starts at `values[c] * scale`, plus
    /// `row_bonus`'s value for its row where one is given for the plane
    /// (advanced rabbits, in the units of `values`); bias and globals start
    /// at 0.
    Material {
        values: Vec<f64>,
        scale: f64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        row_bonus: Vec<RowBonus>,
    },
}

impl LinearInit {
    /// A material start with one value per plane of `planes` (`[C, H, W]`),
    /// finite numbers and row bonuses on planes and rows that exist, or an
    /// error naming `model`'s `field` (`init`, `value_linear`).
    pub(crate) fn validate(
        &self,
        model: &str,
        field: &str,
        planes: [usize; 3],
    ) -> std::result::Result<(), ModelError> {
        let LinearInit::Material {
            values,
            scale,
            row_bonus,
        } = self
        else {
            return Ok(());
        };
        let [planes, rows, _] = planes;
        if values.len() != planes {
            return Err(ModelError::field(
                model,
                &format!("{field}.values"),
                format!("needs one value per plane ({planes}), got {}", values.len()),
            ));
        }
        let bonuses = row_bonus.iter().flat_map(|b| &b.values);
        if !scale.is_finite() || values.iter().chain(bonuses).any(|v| !v.is_finite()) {
            return Err(ModelError::field(
                model,
                field,
                "values, scale and row bonuses must be finite numbers",
            ));
        }
        for b in row_bonus {
            if b.plane >= planes || b.values.len() != rows {
                return Err(ModelError::field(
                    model,
                    &format!("{field}.row_bonus"),
                    format!(
                        "plane {} with {} values, expected a plane below {planes} and one value per row ({rows})",
                        b.plane,
                        b.values.len()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A material start's weight for every (plane, row, column) of
    /// `planes`, row-major; `None` for the other starts.
    pub(crate) fn plane_weights(&self, planes: [usize; 3]) -> Option<Vec<f32>> {
        let LinearInit::Material {
            values,
            scale,
            row_bonus,
        } = self
        else {
            return None;
        };
        let [_, rows, cols] = planes;
        let square = |plane: usize, row: usize| {
            let bonus: f64 = row_bonus
                .iter()
                .filter(|b| b.plane == plane)
                .map(|b| b.values[row])
                .sum();
            ((values[plane] + bonus) * scale) as f32
        };
        Some(
            (0..values.len())
                .flat_map(|c| (0..rows).flat_map(move |r| std::iter::repeat_n(square(c, r), cols)))
                .collect(),
        )
    }
}

/// A bonus by row for every square of one plane of a material start: the
/// hand evaluator's "advanced rabbit" terms, so the start scores what the
/// hand evaluator scores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowBonus {
    pub plane: usize,
    /// One value per row, row 0 first.
    pub values: Vec<f64>,
}

fn sigmoid() -> OutputActivation {
    OutputActivation::Sigmoid
}

fn yes() -> bool {
    true
}

fn is_true(v: &bool) -> bool {
    *v
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinearConfig {
    pub input: InputShape,
    /// Default sigmoid.
    #[serde(default = "sigmoid")]
    pub output: OutputActivation,
    #[serde(default)]
    pub init: LinearInit,
    /// Whether the planes have weights (`psq.weight`); default true. False
    /// needs globals, and the planes are then read by nothing.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub board: bool,
}

impl LinearConfig {
    /// Fan-in initialised piece-square weights with a sigmoid output.
    pub fn new(input: InputShape) -> Self {
        LinearConfig {
            input,
            output: OutputActivation::Sigmoid,
            init: LinearInit::FanIn,
            board: true,
        }
    }

    /// The `arimaa-6x8x8` piece-square model, starting from material values.
    pub fn arimaa_material() -> Self {
        LinearConfig {
            input: InputShape::new([6, 8, 8], 0),
            output: OutputActivation::Sigmoid,
            init: LinearInit::Material {
                values: ARIMAA_MATERIAL.to_vec(),
                scale: 1.0 / 5000.0,
                row_bonus: Vec::new(),
            },
            board: true,
        }
    }

    pub fn validate(&self) -> std::result::Result<(), ModelError> {
        self.input.validate("linear")?;
        if !self.board {
            if self.input.globals == 0 {
                return Err(ModelError::field(
                    "linear",
                    "board",
                    "false needs input.globals > 0 (without the board term and globals the value is a constant)",
                ));
            }
            if matches!(self.init, LinearInit::Material { .. }) {
                return Err(ModelError::field(
                    "linear",
                    "init",
                    "a material start weights the board's planes; with \"board\": false use fan_in or zeros",
                ));
            }
        }
        self.init.validate("linear", "init", self.input.planes)?;
        self.sizes().check_weights()
    }

    /// The number of weights on the planes: `C*H*W`, or 0 without the board term.
    pub(crate) fn board_weights(&self) -> usize {
        if self.board {
            self.input.plane_len()
        } else {
            0
        }
    }

    /// The size fields and the parameter count they give.
    pub(crate) fn sizes(&self) -> Sizes {
        let board = self.board;
        Sizes::new("linear", input_fields(&self.input), move |v| {
            let planes = if board { mul(&v[..3]) } else { Some(0) };
            Some(ParamCount {
                trainable: add(&[planes, Some(1), Some(v[3])])?,
                running: 0,
            })
        })
    }

    pub fn expected_tensors(&self) -> Vec<(String, Vec<usize>)> {
        let mut v = Vec::new();
        if self.board {
            v.push(("psq.weight".into(), self.input.planes.to_vec()));
        }
        v.push(("psq.bias".into(), vec![1]));
        if self.input.globals > 0 {
            v.push((GLOBALS_WEIGHT.into(), vec![self.input.globals]));
        }
        v
    }

    pub fn init_plan(&self) -> Vec<TensorInit> {
        let a = fan_in_bound(self.board_weights() + self.input.globals);
        self.expected_tensors()
            .into_iter()
            .map(|(name, shape)| {
                let draw = match (&self.init, self.init.plane_weights(self.input.planes)) {
                    (LinearInit::FanIn, _) => Draw::Uniform(a),
                    (_, Some(weights)) if name == "psq.weight" => Draw::Values(weights),
                    _ => Draw::Const(0.0),
                };
                TensorInit::new(name, shape, draw)
            })
            .collect()
    }
}

/// The linear model; see the module docs.
pub struct Linear {
    /// `psq.weight` as `[C*H*W, 1]`; `None` without the board term.
    psq: Option<Tensor>,
    bias: Tensor,
    /// `globals.weight` as `[G, 1]`.
    globals: Option<Tensor>,
    io: ModelIo,
}

impl Linear {
    pub fn new(cfg: &LinearConfig, vb: VarBuilder) -> std::result::Result<Self, ModelError> {
        cfg.validate()?;
        let a = fan_in_bound(cfg.board_weights() + cfg.input.globals) as f64;
        let init = Init::Uniform { lo: -a, up: a };
        let psq = cfg
            .board
            .then(|| {
                vb.get_with_hints(cfg.input.planes.as_slice(), "psq.weight", init)?
                    .reshape((cfg.input.plane_len(), 1))
            })
            .transpose()?;
        let bias = vb.get_with_hints(1, "psq.bias", init)?;
        let globals = (cfg.input.globals > 0)
            .then(|| {
                vb.get_with_hints(cfg.input.globals, GLOBALS_WEIGHT, init)?
                    .reshape((cfg.input.globals, 1))
            })
            .transpose()?;
        Ok(Linear {
            psq,
            bias,
            globals,
            io: ModelIo::new("linear", ModelInput::planes(cfg.input), cfg.output),
        })
    }
}

impl ValueNet for Linear {
    fn io(&self) -> &ModelIo {
        &self.io
    }

    fn forward_checked(&self, x: Batch<'_>) -> Result<ModelOutput> {
        let y = self.weighted_sum(x.planes, x.globals)?;
        Ok(ModelOutput {
            value: self.io.output.forward(&y)?,
            policy: None,
        })
    }

    fn pre_activation(
        &self,
        planes: &Tensor,
        globals: Option<&Tensor>,
        _train: bool,
    ) -> Result<Tensor> {
        self.io.check(planes, globals)?;
        self.weighted_sum(planes, globals)
    }
}

impl Linear {
    /// `planes . psq + globals . g + bias`, before the output activation.
    fn weighted_sum(&self, planes: &Tensor, globals: Option<&Tensor>) -> Result<Tensor> {
        let board = self
            .psq
            .as_ref()
            .map(|psq| planes.flatten_from(1)?.matmul(psq))
            .transpose()?;
        let judged = match (&self.globals, globals) {
            (Some(w), Some(g)) => Some(g.matmul(w)?),
            _ => None,
        };
        let y = match (board, judged) {
            (Some(b), Some(j)) => (b + j)?,
            (Some(y), None) | (None, Some(y)) => y,
            // `validate` refuses a model with neither term, and `io.check`
            // a batch without the globals the model takes.
            (None, None) => candle_core::bail!("linear: no board term and no globals"),
        };
        y.squeeze(1)?.broadcast_add(&self.bias)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{ArimaaRichPlanes, Encoder};
    use crate::game::arimaa::notation::parse_position_line;
    use crate::infer::hand::arimaa_material::{material_balance, PIECE_VALUES, RABBIT_ADVANCE};
    use crate::model::init::Draw;

    /// The shipped start on `arimaa-20x8x8` that carries every term of the
    /// hand evaluator (rabbit advances need separate planes for each side).
    fn advance_start() -> LinearConfig {
        let text = include_str!("../../data/arimaa/models/linear-material-rich.json");
        let crate::model::ModelConfig::Linear(cfg) = serde_json::from_str(text).unwrap() else {
            panic!("not a linear config");
        };
        cfg.validate().unwrap();
        cfg
    }

    fn psq(cfg: &LinearConfig) -> Vec<f32> {
        match &cfg.init_plan()[0].draw {
            Draw::Values(v) => v.clone(),
            other => panic!("psq.weight drawn as {other:?}"),
        }
    }

    #[test]
    fn the_advance_start_scores_what_the_material_evaluator_scores() {
        let cfg = advance_start();
        let weights = psq(&cfg);
        // The start's piece values are the hand evaluator's, and its row bonus
        // is the hand evaluator's rabbit advance read from the goal rank down.
        let LinearInit::Material {
            values, row_bonus, ..
        } = &cfg.init
        else {
            panic!("not a material start");
        };
        let hand: Vec<f64> = PIECE_VALUES[1..].iter().map(|&v| f64::from(v)).collect();
        assert_eq!(values[1..6], hand);
        let negated: Vec<f64> = hand.iter().map(|v| -v).collect();
        assert_eq!(values[7..12], negated);
        // Row 0 is the mover's goal rank: its rabbits advance up the rows,
        // the opponent's down.
        let own: Vec<f64> = (0..8).map(|row| RABBIT_ADVANCE[7 - row] as f64).collect();
        let theirs: Vec<f64> = (0..8).map(|row| -RABBIT_ADVANCE[row] as f64).collect();
        assert_eq!(row_bonus[0].values, own);
        assert_eq!(row_bonus[1].values, theirs);
        // With eight rabbits a side (where material counts each rabbit 1000,
        // as the table does), the table's logit is the balance times the scale,
        // whoever moves and wherever the rabbits stand.
        let boards = [
            "g rrrrrrrrdhcemchd................................DHCMECHDRRRRRRRR",
            "s rrrrrrrrdhcemchd................................DHCMECHDRRRRRRRR",
            "g .rrrrrrrdhcemchd......r.....R...............R...DHC.ECHD.RRRRRR.",
            "s .rrrrrrrdhcemchd......r.....R...............R...DHC.ECHD.RRRRRR.",
            "s dhcemchd.rrrrrrr..r........R..................R.RRR.RR..DHCMECHR",
            "g dhcemchd.rrrrrrr..r........R..................R.RRR.RR..DHCMECHR",
        ];
        let enc = ArimaaRichPlanes;
        for line in boards {
            let (pos, _) = parse_position_line(line).unwrap();
            let game = crate::game::arimaa::Arimaa::from_position(pos, 2);
            let mut planes = vec![0i8; enc.shape().iter().product()];
            enc.encode(&game, &mut planes, &mut []);
            let logit: f64 = planes
                .iter()
                .zip(&weights)
                .map(|(&p, &w)| p as f64 * w as f64)
                .sum();
            let balance = material_balance(&pos, pos.side_to_move()) as f64;
            assert!(
                (logit / 0.0002 - balance).abs() < 0.5,
                "{line}: table {} vs material {balance}",
                logit / 0.0002
            );
        }
    }

    #[test]
    fn without_the_board_term_the_value_is_a_regression_over_the_globals() {
        use crate::model::{build, seeded_init, ModelConfig};
        use candle_core::{DType, Device};
        use candle_nn::VarMap;
        let dev = Device::Cpu;
        let cfg = LinearConfig {
            board: false,
            ..LinearConfig::new(InputShape::new([2, 3, 3], 4))
        };
        let names: Vec<String> = cfg.expected_tensors().into_iter().map(|t| t.0).collect();
        assert_eq!(names, ["psq.bias", "globals.weight"]);
        assert_eq!(cfg.sizes().count().unwrap().trainable, 5);
        // The default is left out of the JSON, so older configs read as before.
        let json =
            serde_json::to_string(&LinearConfig::new(InputShape::new([2, 3, 3], 4))).unwrap();
        assert!(!json.contains("board"), "{json}");
        let json = serde_json::to_string(&cfg).unwrap();
        assert_eq!(serde_json::from_str::<LinearConfig>(&json).unwrap(), cfg);

        let model_cfg = ModelConfig::Linear(cfg.clone());
        let varmap = VarMap::new();
        let model = build(
            &model_cfg,
            VarBuilder::from_varmap(&varmap, DType::F32, &dev),
        )
        .unwrap();
        let mut rng = crate::util::seeded_rng(3, 0);
        seeded_init(&varmap, &model_cfg, &mut rng, &dev).unwrap();
        let g = Tensor::new(&[[0.5f32, -1.0, 2.0, 0.25], [1.0, 0.0, -0.5, 3.0]], &dev).unwrap();
        let value = |planes: &Tensor| {
            let out = model
                .forward_checked(Batch {
                    planes,
                    globals: Some(&g),
                    train: false,
                })
                .unwrap();
            out.value.to_vec1::<f32>().unwrap()
        };
        let zeros = Tensor::zeros((2, 2, 3, 3), DType::F32, &dev).unwrap();
        let ones = Tensor::ones((2, 2, 3, 3), DType::F32, &dev).unwrap();
        // The planes weigh nothing; the globals decide the value, as the
        // logistic of `g . w + b` with the drawn weights.
        assert_eq!(value(&zeros), value(&ones));
        let w = varmap.data().lock().unwrap()["globals.weight"]
            .to_vec1::<f32>()
            .unwrap();
        let b = varmap.data().lock().unwrap()["psq.bias"]
            .to_vec1::<f32>()
            .unwrap()[0];
        let rows = g.to_vec2::<f32>().unwrap();
        for (row, got) in rows.iter().zip(value(&ones)) {
            let logit: f32 = row.iter().zip(&w).map(|(x, w)| x * w).sum::<f32>() + b;
            let want = 1.0 / (1.0 + (-logit).exp());
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        }
    }

    #[test]
    fn without_the_board_term_a_model_needs_globals_and_no_material_start() {
        let no_globals = LinearConfig {
            board: false,
            ..LinearConfig::new(InputShape::new([6, 8, 8], 0))
        };
        let err = no_globals.validate().unwrap_err().to_string();
        assert!(err.contains("board") && err.contains("globals"), "{err}");
        let material = LinearConfig {
            board: false,
            input: InputShape::new([6, 8, 8], 3),
            ..LinearConfig::arimaa_material()
        };
        let err = material.validate().unwrap_err().to_string();
        assert!(err.contains("init") && err.contains("material"), "{err}");
    }

    #[test]
    fn a_row_bonus_for_a_missing_plane_or_of_the_wrong_length_is_refused() {
        let mut cfg = advance_start();
        let LinearInit::Material { row_bonus, .. } = &mut cfg.init else {
            unreachable!()
        };
        row_bonus[0].values.pop();
        let err = cfg.validate().unwrap_err().to_string();
        assert!(
            err.contains("init.row_bonus") && err.contains("7 values"),
            "{err}"
        );
        let LinearInit::Material { row_bonus, .. } = &mut cfg.init else {
            unreachable!()
        };
        row_bonus[0].values.push(0.0);
        row_bonus[0].plane = 20;
        let err = cfg.validate().unwrap_err().to_string();
        assert!(err.contains("plane 20"), "{err}");
    }
}
