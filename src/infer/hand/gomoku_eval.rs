//! `gomoku-features`: Gomoku's line patterns ([`crate::game::gomoku_patterns`])
//! as a weighted evaluator, so that `plies tune` can learn the weights the
//! `patterns` evaluator sets by hand.
//!
//! From the side to move's view, ten features:
//!
//! | # | feature |
//! | --- | --- |
//! | 0..4 | the mover's live windows of five holding k = 1, 2, 3, 4 of its stones |
//! | 4..8 | the opponent's, the same |
//! | 8 | the mover has a four (it makes five next move) |
//! | 9 | the opponent has two or more points that make five (the mover cannot block both) |
//!
//! The tempo features decide alone: when one of them is 1 every window
//! count is 0, as `patterns` scores such a position by the tempo only. The
//! default weights are `patterns`' own (the mover's windows at 3/2 of the
//! opponent's, [`WINDOW_WEIGHTS`] in thousandths), so the default set
//! scores every position as `patterns` does, within rounding.

use super::{FeatureSet, LinearEval, WeightsError, WeightsFile, HAND_SCORE_CAP};
use crate::game::gomoku_patterns::{LinePatterns, WINDOW_WEIGHTS};
use crate::game::{Game, Gomoku};
use std::path::Path;

/// Number of features.
pub const GOMOKU_FEATURES: usize = 10;
/// Window sizes counted per side (1..=4 stones).
const PER_SIDE: usize = 4;
/// Index of "the mover has a four".
const MOVER_FOUR: usize = 2 * PER_SIDE;
/// Index of "the opponent has two winning points".
const OPPONENT_DOUBLE: usize = MOVER_FOUR + 1;
/// The value of a won (lost) finished game, in the formula's units
/// (thousandths of a hand score): the hand scores' cap.
const TERMINAL: f32 = HAND_SCORE_CAP as f32 / 1000.0;

fn feature_names() -> Vec<String> {
    let own = (1..=PER_SIDE).map(|k| format!("own_windows_{k}"));
    let opp = (1..=PER_SIDE).map(|k| format!("opp_windows_{k}"));
    own.chain(opp)
        .chain(["own_four".to_string(), "opp_double_four".to_string()])
        .collect()
}

fn write_features(state: &Gomoku, out: &mut [f32]) {
    out.fill(0.0);
    let me = state.side_to_move();
    let you = me.other();
    let p = LinePatterns::of(state);
    if p.fours(me) > 0 {
        out[MOVER_FOUR] = 1.0;
    } else if state.winning_cells(you).len() >= 2 {
        out[OPPONENT_DOUBLE] = 1.0;
    } else {
        for k in 1..=PER_SIDE {
            out[k - 1] = p.windows[me.index()][k] as f32;
            out[PER_SIDE + k - 1] = p.windows[you.index()][k] as f32;
        }
    }
}

/// `patterns`' weights: the mover's windows count 3/2 of the opponent's,
/// a four of the mover's is a won game, two winning points of the
/// opponent's nine tenths of a lost one.
pub fn default_weights() -> Vec<f32> {
    let mut w = vec![0.0; GOMOKU_FEATURES];
    for k in 1..=PER_SIDE {
        let weight = WINDOW_WEIGHTS[k] as f32 / 1000.0;
        w[k - 1] = 1.5 * weight;
        w[PER_SIDE + k - 1] = -weight;
    }
    w[MOVER_FOUR] = TERMINAL;
    w[OPPONENT_DOUBLE] = -0.9 * TERMINAL;
    w
}

/// `gomoku-features`: the ten features above, weighted; two open threes'
/// worth (0.6 units) is a clear advantage, as for `patterns`.
pub const GOMOKU_FEATURE_SET: FeatureSet<Gomoku> = FeatureSet {
    name: "gomoku-features",
    feature_names,
    features: write_features,
    default_weights,
    terminal: TERMINAL,
    scale: 600.0,
};

/// The hand-set Gomoku feature evaluator (it scores as `patterns`).
pub fn default_gomoku_eval() -> LinearEval<Gomoku> {
    LinearEval::default_for(GOMOKU_FEATURE_SET)
}

/// `gomoku-tuned`: the ten features with the weights `plies tune --game
/// gomoku --player threats` learned by self-play from `patterns`' own
/// (the file's `training` says how), shipped in the program.
pub const TUNED_NAME: &str = "gomoku-tuned";
/// Where the shipped tuned weights come from.
pub const TUNED_FILE: &str = "data/gomoku/gomoku-features-tuned.json";
const TUNED_TEXT: &str = include_str!("../../../data/gomoku/gomoku-features-tuned.json");

/// The `gomoku-tuned` evaluator (a unit test proves the shipped file loads).
pub fn tuned_gomoku_eval() -> Result<LinearEval<Gomoku>, WeightsError> {
    WeightsFile::load_text(
        TUNED_TEXT,
        Path::new(TUNED_FILE),
        Gomoku::NAME,
        &GOMOKU_FEATURE_SET,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::gomoku_patterns::pattern_score;
    use crate::game::test_support::{legal, play_all};
    use crate::infer::hand::HandEval;
    use crate::util::seeded_rng;
    use rand::seq::IndexedRandom;

    #[test]
    fn the_default_weights_score_every_position_as_patterns_does() {
        let eval = HandEval::from_formula("gomoku-features", 600.0, default_gomoku_eval());
        let mut rng = seeded_rng(5, 0);
        let (mut tempo, mut quiet) = (0, 0);
        for _ in 0..60 {
            let mut g = Gomoku::with_board_size(15).unwrap();
            while g.outcome().is_none() {
                let mine = pattern_score(&g, HAND_SCORE_CAP);
                let theirs = eval.score(&g);
                // `patterns` halves in integers, the weights in floats.
                assert!((mine - theirs).abs() <= 1, "{mine} vs {theirs}\n{g:?}");
                if mine.abs() >= HAND_SCORE_CAP * 9 / 10 {
                    tempo += 1;
                } else {
                    quiet += 1;
                }
                g.play(*legal(&g).choose(&mut rng).unwrap());
            }
        }
        // Both kinds of position were compared.
        assert!(tempo > 20 && quiet > 1000, "{tempo} tempo, {quiet} quiet");
    }

    #[test]
    fn the_shipped_tuned_weights_load_and_differ_from_the_hand_set_ones() {
        let tuned = tuned_gomoku_eval().unwrap();
        assert_eq!(tuned.weights().len(), GOMOKU_FEATURES);
        assert_ne!(tuned.weights(), default_weights().as_slice());
        // Learned by the threat player, as the name promises.
        assert!(TUNED_TEXT.contains("\"player\": \"threats\""));
        let named = <Gomoku as crate::games::GameSupport>::hand_eval(TUNED_NAME).unwrap();
        let g = Gomoku::with_board_size(15).unwrap();
        assert_eq!(
            named.score(&g),
            HandEval::from_formula(TUNED_NAME, 600.0, tuned).score(&g)
        );
    }

    #[test]
    fn tempo_features_stand_alone_and_names_match_the_weights() {
        // Black h8 i8 j8 k8 with Black to move: a four of the mover's.
        let mut g = Gomoku::with_board_size(15).unwrap();
        play_all(&mut g, &["h8", "a1", "i8", "a3", "j8", "a5", "k8", "a7"]);
        let f = GOMOKU_FEATURE_SET.of(&g);
        assert_eq!(f[MOVER_FOUR], 1.0);
        assert_eq!(f.iter().sum::<f32>(), 1.0, "{f:?}");
        let names = (GOMOKU_FEATURE_SET.feature_names)();
        assert_eq!(names.len(), GOMOKU_FEATURE_SET.len());
        assert_eq!(names[MOVER_FOUR], "own_four");
        // White to move facing the open four: two winning points of Black's.
        g.play(crate::game::GomokuMove(224));
        let f = GOMOKU_FEATURE_SET.of(&g);
        assert_eq!(f[OPPONENT_DOUBLE], 1.0);
        assert_eq!(f.iter().sum::<f32>(), 1.0, "{f:?}");
    }
}
