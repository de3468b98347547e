//! The step-level Arimaa alpha-beta (`steps:`): at one turn (4 steps) and
//! two turns (8 steps) it finds the same minimax score as the full-move
//! alpha-beta at depth 1 and 2; the transposition table changes the work,
//! not the score; a linear table updated per step equals the model; goal
//! threats at the horizon are seen; and the player plays legal turns
//! through the one spec grammar.

use candle_core::Device;
use plies::checkpoint::{self, CheckpointConfig, TrainingInfo};
use plies::game::arimaa::{Arimaa, Piece, Position, TurnState};
use plies::game::{Game, Side};
use plies::games::GameSupport;
use plies::infer::hand::arimaa_material::evaluate as material;
use plies::model::{seeded_tensors, InputShape, LinearConfig, ModelConfig};
use plies::search::alphabeta::{search, SearchLimits, WIN_THRESHOLD};
use plies::search::game_player::player_from_spec;
use plies::search::steps::{step_search, PieceSquareEval, StepLimits, StepScorer};
use plies::search::PositionEval;
use plies::util::seeded_rng;
use rand::RngExt;

fn limits(max_steps: u32, table: bool, goal_threats: bool) -> StepLimits<'static> {
    StepLimits {
        table,
        goal_threats,
        ..StepLimits::steps(max_steps)
    }
}

/// Positions from random-step games after 2 to 40 turns from the
/// archive setups, unfinished.
fn midgame_positions(n: usize, seed: u64) -> Vec<Arimaa> {
    let mut rng = seeded_rng(seed, 0);
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    while out.len() < n {
        let mut g = Arimaa::new();
        let turns = rng.random_range(2..40);
        for _ in 0..turns {
            if g.outcome().is_some() {
                break;
            }
            let mv = g.random_steps_move(0.1, &mut rng, &mut scratch).unwrap();
            g.play(mv);
        }
        if g.outcome().is_none() {
            out.push(g);
        }
    }
    out
}

/// Small endgames: a few pieces each, placed at random off the traps and
/// the goal ranks, gold to move, unfinished.
fn endgame_positions(n: usize, seed: u64) -> Vec<Arimaa> {
    let mut rng = seeded_rng(seed, 0);
    let mut out = Vec::new();
    while out.len() < n {
        let mut pos = Position::empty(Side::First);
        for c in ['E', 'R', 'R', 'd', 'r', 'r', 'c'] {
            loop {
                let sq: u8 = rng.random_range(8..56);
                if [18, 21, 42, 45].contains(&sq) || pos.piece_at(sq).is_some() {
                    continue;
                }
                pos.place(sq, Piece::from_char(c).unwrap());
                break;
            }
        }
        let g = Arimaa::from_position(pos, 2);
        if g.outcome().is_none() {
            out.push(g);
        }
    }
    out
}

fn full_move_score(g: &Arimaa, turns: u32, eval: &dyn PositionEval<Arimaa>) -> i32 {
    search(g, None, eval, &SearchLimits::depth(turns)).score
}

fn material_steps() -> StepScorer {
    StepScorer::Incremental(PieceSquareEval::material())
}

/// The step search's turn is legal and, at one turn, its resulting
/// position is worth the score it reported.
fn check_turn(g: &Arimaa, mv: plies::game::arimaa::Move, score: i32) {
    assert!(g.is_legal(mv, &mut Vec::new()), "{}", g.to_text());
    let mut after = g.clone();
    after.play(mv);
    let value = match after.outcome() {
        Some(o) => -plies::search::alphabeta::terminal_score(o, after.side_to_move(), 1),
        None => -material(&after),
    };
    assert_eq!(
        value,
        score,
        "{} then {}",
        g.to_text(),
        g.move_to_string(mv)
    );
}

#[test]
fn one_turn_of_steps_scores_as_the_full_move_search_at_depth_one() {
    let scorer = material_steps();
    for g in midgame_positions(25, 1)
        .iter()
        .chain(&endgame_positions(10, 2))
    {
        let want = full_move_score(g, 1, &material);
        for table in [true, false] {
            let r = step_search(g, &scorer, &limits(4, table, false), |_| {});
            assert_eq!(r.score, want, "table {table}: {}", g.to_text());
            assert_eq!(r.depth, 4);
            check_turn(g, r.best.unwrap(), r.score);
        }
    }
}

#[test]
fn two_turns_of_steps_score_as_the_full_move_search_at_depth_two() {
    let scorer = material_steps();
    for g in endgame_positions(6, 3) {
        let want = full_move_score(&g, 2, &material);
        let with = step_search(&g, &scorer, &limits(8, true, false), |_| {});
        let without = step_search(&g, &scorer, &limits(8, false, false), |_| {});
        assert_eq!(with.score, want, "{}", g.to_text());
        assert_eq!(without.score, want, "{}", g.to_text());
        assert!(g.is_legal(with.best.unwrap(), &mut Vec::new()));
        assert!(
            with.nodes < without.nodes,
            "the table saves work: {} vs {}",
            with.nodes,
            without.nodes
        );
    }
}

/// A silver rabbit on b2 steps to goal next turn and gold cannot stop it:
/// with goal threats the horizon (one turn) sees the loss, without them it
/// does not; two full turns confirm it.
#[test]
fn goal_threats_at_the_horizon_are_seen() {
    let mut pos = Position::empty(Side::First);
    for (sq, c) in [(9u8, 'r'), (63, 'r'), (6, 'R'), (7, 'R'), (36, 'E')] {
        pos.place(sq, Piece::from_char(c).unwrap());
    }
    let g = Arimaa::from_position(pos, 2);
    assert!(g.outcome().is_none());
    assert!(full_move_score(&g, 2, &material) <= -WIN_THRESHOLD);
    let scorer = material_steps();
    let seen = step_search(&g, &scorer, &limits(4, true, true), |_| {});
    assert!(seen.score <= -WIN_THRESHOLD, "{seen:?}");
    let blind = step_search(&g, &scorer, &limits(4, true, false), |_| {});
    assert!(blind.score > -WIN_THRESHOLD, "{blind:?}");
}

/// A linear checkpoint with random piece-square weights: the table
/// updated per step equals the table recomputed, and both equal the
/// model's own value (within one ten-thousandth of rounding).
#[test]
fn a_linear_table_updated_per_step_equals_recomputation_and_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("linear");
    let model = ModelConfig::Linear(LinearConfig::new(InputShape::new([6, 8, 8], 0)));
    let tensors = seeded_tensors(&model, &mut seeded_rng(9, 0), &Device::Cpu).unwrap();
    let encoder = plies::encode::arimaa_encoder("arimaa-6x8x8")
        .unwrap()
        .spec();
    let config = CheckpointConfig::new("arimaa", encoder, model, TrainingInfo::default());
    checkpoint::save(&dir, &config, &tensors).unwrap();
    let name = format!("ckpt:{}", dir.display());
    let table = PieceSquareEval::linear(&name)
        .unwrap()
        .expect("a linear table");
    let model =
        plies::search::evaluators::evaluator_by_name::<Arimaa>(&name, 8, &Default::default())
            .unwrap();
    let scorer = StepScorer::Incremental(table.clone());
    let mut rng = seeded_rng(11, 0);
    let mut checked = 0;
    for g in midgame_positions(30, 4) {
        // A random turn's steps, updating as the search does.
        let mut pos = *g.position();
        let mut sums = table.sums(&pos);
        let mut turn = TurnState::START;
        while turn.steps_left > 0 {
            let steps = pos.steps(&turn);
            if steps.is_empty() {
                break;
            }
            let (step, kind) = steps[rng.random_range(0..steps.len())];
            let before = pos;
            let (next, captured) = pos.apply_step(&turn, step, kind);
            scorer.step(&mut sums, &before, step, captured);
            assert_eq!(sums, table.sums(&pos));
            turn = next;
            let here = Arimaa::from_position(pos, 2);
            let value = model.evaluate(std::slice::from_ref(&here)).unwrap()[0];
            let want = plies::search::scorer::value_score(value);
            let got = table.score(&sums, &pos);
            assert!((got - want).abs() <= 1, "{got} vs the model's {want}");
            checked += 1;
        }
    }
    assert!(checked > 50);
    // Not a table: another kind of checkpoint is scored position by position.
    assert!(PieceSquareEval::linear("ckpt:/no/such/checkpoint").is_err());
}

#[test]
fn the_steps_player_plays_legal_turns_and_its_spec_reads_back() {
    let p = player_from_spec::<Arimaa>("steps:depth=4,eval=material").unwrap();
    assert_eq!(p.name(), "steps:depth=4,eval=material");
    assert_eq!(
        player_from_spec::<Arimaa>("steps:nodes=2000")
            .unwrap()
            .name(),
        "steps:nodes=2000,eval=material"
    );
    let mut rng = seeded_rng(6, 0);
    let mut g = Arimaa::new();
    for _ in 0..8 {
        if g.outcome().is_some() {
            break;
        }
        let mv = p.choose(&g, &mut rng).unwrap();
        assert!(g.is_legal(mv, &mut Vec::new()), "{}", g.move_to_string(mv));
        g.play(mv);
    }
    let err = |spec: &str| match player_from_spec::<Arimaa>(spec) {
        Ok(_) => panic!("{spec} accepted"),
        Err(e) => e.to_string(),
    };
    assert!(err("steps:depth=3").contains("depth '3'"));
    assert!(err("steps:width=3").contains("unknown option 'width'"));
    let other = player_from_spec::<plies::game::TicTacToe>("steps")
        .err()
        .unwrap()
        .to_string();
    assert!(other.contains("Arimaa player"), "{other}");
}

/// The best turn of at most `steps` steps by trying every legal turn.
fn best_short_turn(g: &Arimaa, steps: usize) -> i32 {
    let mut moves = Vec::new();
    g.legal_moves(&mut moves);
    moves
        .iter()
        .filter(|mv| mv.steps().count() <= steps)
        .map(|&mv| {
            let mut after = g.clone();
            after.play(mv);
            match after.outcome() {
                Some(o) => -plies::search::alphabeta::terminal_score(o, after.side_to_move(), 1),
                None => -material(&after),
            }
        })
        .max()
        .expect("a legal turn of one step")
}

/// With a budget, deepening starts at one step: the iterations of 1, 2 and
/// 3 steps answer the best turn of at most that many steps (worth what
/// every such turn is worth at most), then the whole turn as without one.
#[test]
fn a_budgeted_search_answers_short_turns_first() {
    let scorer = material_steps();
    let mut full = 0;
    for g in midgame_positions(12, 6)
        .iter()
        .chain(&endgame_positions(4, 7))
    {
        let budget = StepLimits {
            max_nodes: Some(u64::MAX),
            ..limits(4, true, false)
        };
        let mut seen = Vec::new();
        let r = step_search(g, &scorer, &budget, |it| {
            seen.push((it.depth, it.best.unwrap(), it.score))
        });
        let depths: Vec<u32> = seen.iter().map(|s| s.0).collect();
        // Deepening stops early only on a won or lost score.
        assert_eq!(depths, (1..=depths.len() as u32).collect::<Vec<_>>());
        assert!(
            depths.len() == 4 || r.score.abs() >= WIN_THRESHOLD,
            "{depths:?}: {}",
            g.to_text()
        );
        for &(depth, mv, score) in seen.iter().filter(|s| s.0 < 4) {
            assert!(mv.steps().count() <= depth as usize, "{}", g.to_text());
            check_turn(g, mv, score);
            assert_eq!(score, best_short_turn(g, depth as usize), "{}", g.to_text());
        }
        if depths.len() == 4 {
            assert_eq!(r.score, full_move_score(g, 1, &material), "{}", g.to_text());
            check_turn(g, r.best.unwrap(), r.score);
            full += 1;
        }
    }
    assert!(full >= 12, "{full} positions searched to a whole turn");
}

/// A node budget smaller than one turn's search still gets an answer: the
/// deepest short turn finished within it.
#[test]
fn a_node_budget_below_one_turn_gets_a_short_turn() {
    let scorer = material_steps();
    for g in midgame_positions(6, 8) {
        let budget = StepLimits {
            max_nodes: Some(2_000),
            ..limits(8, true, false)
        };
        let r = step_search(&g, &scorer, &budget, |_| {});
        assert!(
            (1..4).contains(&r.depth),
            "depth {}: {}",
            r.depth,
            g.to_text()
        );
        let mv = r.best.expect("an answer within the budget");
        assert!(mv.steps().count() <= r.depth as usize);
        check_turn(&g, mv, r.score);
    }
}
