//! POLICY: moves by a model's per-point outputs (the MDRNN, a residual net
//! with a policy head), as Schaul & Schmidhuber play their networks: a move
//! is drawn from the Gibbs distribution `exp(out / T)` of the outputs over
//! the legal points; at temperature 0 the best output wins, ties broken at
//! random. No search, one forward pass per move.

use super::{pick, Budget, Player, SearchError};
use crate::game::Game;
use crate::infer::Evaluator;
use crate::search::{legal_or_none, Chosen};
use crate::util::SeededRng;
use rand::RngExt;
use std::sync::Arc;

pub struct PolicyPlayer<G: Game> {
    evaluator: Arc<dyn Evaluator<G>>,
    temperature: f64,
    label: String,
}

impl<G: Game> PolicyPlayer<G> {
    /// `evaluator` must give policies ([`Evaluator::has_policy`]);
    /// `temperature >= 0`.
    pub fn new(
        evaluator: Arc<dyn Evaluator<G>>,
        temperature: f64,
        label: impl Into<String>,
    ) -> Result<Self, SearchError> {
        let label = label.into();
        if !evaluator.has_policy() {
            return Err(SearchError::BadSpec {
                spec: label,
                why: format!(
                    "the model of {} has no per-point outputs (an mdrnn, or a resnet with \
                     policy: true, has them)",
                    evaluator.name()
                ),
            });
        }
        if !(temperature.is_finite() && temperature >= 0.0) {
            return Err(SearchError::BadSpec {
                spec: label,
                why: format!("temperature {temperature} is not a number >= 0"),
            });
        }
        Ok(PolicyPlayer {
            evaluator,
            temperature,
            label,
        })
    }
}

/// The move drawn from the Gibbs distribution of `outputs` over `moves`'
/// points at `temperature` (0: the best, ties at random). `None` when a
/// move has no point in `outputs`.
pub fn gibbs_choice<G: Game>(
    state: &G,
    moves: &[G::Move],
    outputs: &[f32],
    temperature: f64,
    rng: &mut SeededRng,
) -> Option<G::Move> {
    let mut scores = Vec::with_capacity(moves.len());
    for &mv in moves {
        scores.push(*outputs.get(state.policy_index(mv)?)? as f64);
    }
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if temperature == 0.0 || !best.is_finite() {
        let ties: Vec<G::Move> = moves
            .iter()
            .zip(&scores)
            .filter(|&(_, &s)| s == best || !best.is_finite())
            .map(|(&m, _)| m)
            .collect();
        return Some(pick(&ties, rng));
    }
    // Shifted by the best so that no weight overflows.
    let weights: Vec<f64> = scores
        .iter()
        .map(|&s| ((s - best) / temperature).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let mut draw = rng.random::<f64>() * total;
    for (&mv, &w) in moves.iter().zip(&weights) {
        if draw < w {
            return Some(mv);
        }
        draw -= w;
    }
    moves.last().copied()
}

impl<G: Game> Player<G> for PolicyPlayer<G> {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn choose_within(&self, state: &G, _budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        let moves = legal_or_none(state)?;
        let eval = self.evaluator.evaluate_full(std::slice::from_ref(state))?;
        let outputs = eval
            .into_iter()
            .next()
            .and_then(|e| e.policy)
            .ok_or_else(|| SearchError::BadSpec {
                spec: self.label.clone(),
                why: "the evaluator gave no policy".into(),
            })?;
        gibbs_choice(state, &moves, &outputs, self.temperature, rng).ok_or_else(|| {
            SearchError::BadSpec {
                spec: self.label.clone(),
                why: format!(
                    "{} has moves that are no board point of the model's {} outputs",
                    G::NAME,
                    outputs.len()
                ),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::{self, CheckpointConfig, TrainingInfo};
    use crate::game::{AtariGo, Gomoku};
    use crate::games::GameSupport;
    use crate::model::{seeded_tensors, InputShape, MdrnnConfig, ModelConfig, ResNetConfig};
    use crate::search::evaluators::EvalContext;
    use crate::search::game_player::{player_from_spec_in, PlayerContext};
    use crate::util::{scratch, seeded_rng};
    use std::path::Path;

    /// A seeded checkpoint of `model` for `G` on `size` (`stones-2`).
    fn stones_checkpoint<G: GameSupport>(dir: &Path, model: ModelConfig, size: usize) {
        let encoder = G::encoder("stones-2", size).unwrap().spec();
        let tensors =
            seeded_tensors(&model, &mut seeded_rng(9, 0), &candle_core::Device::Cpu).unwrap();
        let ck = CheckpointConfig::new(G::NAME, encoder, model, TrainingInfo::default());
        checkpoint::save(dir, &ck, &tensors).unwrap();
    }

    fn on_board(size: usize) -> PlayerContext {
        PlayerContext {
            size,
            eval: EvalContext::default(),
        }
    }

    #[test]
    fn a_size_free_model_plays_every_board_and_a_fixed_one_is_refused() {
        let (_tmp, dir) = scratch("mdrnn5");
        stones_checkpoint::<AtariGo>(&dir, ModelConfig::Mdrnn(MdrnnConfig::stones(5, 10)), 5);
        let spec = format!("policy:ckpt={}", dir.display());
        let mut rng = seeded_rng(1, 0);
        for size in [5, 9, 19] {
            let p = player_from_spec_in::<AtariGo>(&spec, &on_board(size)).unwrap();
            let mut g = AtariGo::with_size(size).unwrap();
            let mut legal = Vec::new();
            while g.outcome().is_none() && g.ply() < 30 {
                let mv = p.choose(&g, &mut rng).unwrap();
                g.legal_moves(&mut legal);
                assert!(legal.contains(&mv), "{size}: {}", g.move_to_string(mv));
                g.play(mv);
            }
        }
        // Greedy play is a function of the position: the same move whatever
        // the generator once the stones break the board's symmetry (on the
        // empty board mirrored points tie).
        let p = player_from_spec_in::<AtariGo>(&spec, &on_board(9)).unwrap();
        let mut g = AtariGo::with_size(9).unwrap();
        g.play_str("c3").unwrap();
        g.play_str("d7").unwrap();
        let first = p.choose(&g, &mut seeded_rng(1, 1)).unwrap();
        assert_eq!(p.choose(&g, &mut seeded_rng(2, 2)).unwrap(), first);

        let (_tmp2, fixed) = scratch("resnet5");
        let resnet = ResNetConfig {
            policy: true,
            ..ResNetConfig::tiny(InputShape::new([2, 5, 5], 0))
        };
        stones_checkpoint::<AtariGo>(&fixed, ModelConfig::Resnet(resnet), 5);
        let spec = format!("policy:ckpt={}", fixed.display());
        assert!(player_from_spec_in::<AtariGo>(&spec, &on_board(5)).is_ok());
        let e = player_from_spec_in::<AtariGo>(&spec, &on_board(9))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("input.planes") && e.contains("9x9"), "{e}");
        // A value-only model has no outputs to move by.
        let (_tmp3, value_only) = scratch("value5");
        let resnet = ResNetConfig::tiny(InputShape::new([2, 5, 5], 0));
        stones_checkpoint::<AtariGo>(&value_only, ModelConfig::Resnet(resnet), 5);
        let spec = format!("policy:ckpt={}", value_only.display());
        let e = player_from_spec_in::<AtariGo>(&spec, &on_board(5))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no per-point outputs"), "{e}");
    }

    #[test]
    fn gibbs_follows_the_outputs_and_zero_is_greedy() {
        let g = Gomoku::with_size(5).unwrap();
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let mut outputs = vec![0.0f32; 25];
        outputs[7] = 2.0f32.ln(); // twice as likely at T = 1
        outputs[3] = 2.0f32.ln();
        let mut rng = seeded_rng(5, 0);
        let n = 20_000;
        let mut hits = [0usize; 25];
        for _ in 0..n {
            let m = gibbs_choice(&g, &moves, &outputs, 1.0, &mut rng).unwrap();
            hits[g.policy_index(m).unwrap()] += 1;
        }
        // p(7) = 2 / (23 + 4) = 0.074; 4 standard errors ~ 0.0074.
        let p7 = hits[7] as f64 / n as f64;
        assert!((p7 - 2.0 / 27.0).abs() < 0.0075, "{p7}");
        let p0 = hits[0] as f64 / n as f64;
        assert!((p0 - 1.0 / 27.0).abs() < 0.0055, "{p0}");
        // Greedy: only the two best points, both drawn.
        let mut greedy = [0usize; 25];
        for _ in 0..200 {
            let m = gibbs_choice(&g, &moves, &outputs, 0.0, &mut rng).unwrap();
            greedy[g.policy_index(m).unwrap()] += 1;
        }
        assert_eq!(greedy[3] + greedy[7], 200);
        assert!(greedy[3] > 50 && greedy[7] > 50, "{greedy:?}");
        // A very high temperature is close to uniform, a low one greedy.
        let m = gibbs_choice(&g, &moves, &outputs, 1e-6, &mut rng).unwrap();
        assert!([3, 7].contains(&g.policy_index(m).unwrap()));
    }

    #[test]
    fn only_legal_points_are_drawn() {
        let mut g = Gomoku::with_size(5).unwrap();
        g.play_str("c3").unwrap();
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let taken = g.policy_index(g.parse_move("d4").unwrap()).unwrap();
        let c3 = 2 * 5 + 2;
        let mut outputs = vec![0.0f32; 25];
        outputs[c3] = 100.0; // occupied: ignored
        outputs[taken] = 1.0;
        let mut rng = seeded_rng(6, 0);
        let m = gibbs_choice(&g, &moves, &outputs, 0.0, &mut rng).unwrap();
        assert_eq!(g.move_to_string(m), "d4");
    }
}
