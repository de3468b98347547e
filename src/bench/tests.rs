//! The harnesses' options, reports and refusals (no timing assertions).

use super::conv::{self, ConvOptions};
use super::evaluator::{self, EvaluatorOptions};
use super::mcts::{MctsReport, MctsRow};
use super::models::{self, BenchModel, InferOptions, ModelBenchOptions};
use super::peer::{self, PeerError};
use super::playouts::{self, PlayoutOptions};
use super::report::{num, ratio};
use super::vs_spiel::SpielGame;
use super::BenchError;
use crate::games::GameKind;

fn option_of(e: BenchError) -> String {
    match e {
        BenchError::BadOption { option, .. } => option,
        other => panic!("expected a bad option, got {other}"),
    }
}

#[test]
fn playouts_count_every_game() {
    let r = playouts::run(&PlayoutOptions {
        game: GameKind::TicTacToe,
        size: None,
        games: 30,
        seed: 1,
    })
    .expect("tictactoe playouts");
    let t = &r.tally;
    assert_eq!(t.first + t.second + t.draws, 30);
    assert!((5.0..=9.0).contains(&r.mean_length()));
    assert_eq!(r.to_json()["games"], 30);
    assert!(r.to_string().contains("uniformly random games"));
}

#[test]
fn playouts_refuse_arimaa_and_zero_games() {
    let opts = |game, games| PlayoutOptions {
        game,
        size: None,
        games,
        seed: 1,
    };
    let e = playouts::run(&opts(GameKind::Arimaa, 1))
        .err()
        .expect("refused");
    assert!(matches!(e, BenchError::Unsupported(_)), "{e}");
    assert!(e.to_string().contains("arimaa"), "{e}");
    let e = playouts::run(&opts(GameKind::Gomoku, 0))
        .err()
        .expect("refused");
    assert_eq!(option_of(e), "--games");
}

#[test]
fn conv_rows_per_channel_and_pass() {
    let r = conv::run(&ConvOptions {
        channels: vec![8, 3],
        board: 4,
        batch: 2,
        rounds: 1,
    })
    .expect("conv bench");
    assert_eq!(r.rows.len(), 4);
    assert!(r.rows.iter().all(|row| row.im2col_gflops > 0.0));
    // 3 channels never fit the direct kernel's vectors.
    assert!(r.rows[2..].iter().all(|row| row.direct_gflops.is_none()));
    let bad = conv::run(&ConvOptions {
        channels: vec![0],
        board: 4,
        batch: 2,
        rounds: 1,
    });
    assert_eq!(option_of(bad.err().expect("refused")), "--channels");
}

#[test]
fn spiel_games_parse_with_and_without_size() {
    let g: SpielGame = "gomoku:9".parse().expect("gomoku:9");
    assert_eq!((g.game, g.size), (GameKind::Gomoku, Some(9)));
    let g: SpielGame = "amazons".parse().expect("amazons");
    assert_eq!(g.size, None);
    let e = "gomoku:x".parse::<SpielGame>().expect_err("bad size");
    assert_eq!(option_of(e), "--games gomoku:x");
    let e = "arimaa".parse::<SpielGame>().expect_err("not in OpenSpiel");
    assert!(e.to_string().contains("OpenSpiel"), "{e}");
}

#[test]
fn mcts_csv_has_a_header_and_a_line_per_row() {
    let row = MctsRow {
        threads: 2,
        unbatched_sims_per_s: 100.0,
        batched_sims_per_s: 150.0,
        ratio: 1.5,
        mean_batch: 1.25,
        latency_p50_us: 10.0,
        latency_p99_us: 20.0,
        zero_cost_sims_per_s: 200.0,
        of_zero_cost: 0.75,
        split: crate::infer::BatchSplit {
            form_us: 1.0,
            encode_us: 2.0,
            network_us: 30.0,
            finish_us: 0.5,
            reply_us: 1.5,
        },
    };
    let csv = MctsReport { rows: vec![row] }.csv();
    assert_eq!(
        csv,
        "threads,unbatched_sims_per_s,batched_sims_per_s,ratio,mean_batch,latency_p50_us,latency_p99_us,\
         zero_cost_sims_per_s,of_zero_cost,form_us,encode_us,network_us,finish_us,reply_us\n\
         2,100.0,150.0,1.500,1.25,10.0,20.0,200.0,0.750,1.0,2.0,30.0,0.5,1.5\n"
    );
}

#[test]
fn evaluator_refuses_bad_options_before_building_anything() {
    let opts = EvaluatorOptions {
        model: BenchModel::Cnn3,
        clients: vec![1, 0],
        max_batch: vec![16],
        max_wait_us: 200,
        cache_entries: 0,
        seconds: 0.1,
        rounds: 1,
        positions: 8,
        python: None,
        no_torch: true,
    };
    assert_eq!(
        option_of(evaluator::run(&opts).err().expect("refused")),
        "--clients"
    );
    let opts = EvaluatorOptions {
        clients: vec![1],
        seconds: f64::NAN,
        ..opts
    };
    assert_eq!(
        option_of(evaluator::run(&opts).err().expect("refused")),
        "--seconds"
    );
}

#[test]
fn infer_refuses_a_zero_batch() {
    let opts = InferOptions {
        common: ModelBenchOptions {
            model: BenchModel::Cnn3,
            threads: None,
            seconds: 0.01,
            rounds: 1,
            python: None,
            no_torch: true,
            no_stock: true,
        },
        batches: vec![4, 0],
    };
    assert_eq!(
        option_of(models::infer(&opts).err().expect("refused")),
        "--batch"
    );
}

#[test]
fn models_name_their_configs() {
    for m in [
        BenchModel::Cnn3,
        BenchModel::ResnetTiny,
        BenchModel::ResnetSmall,
    ] {
        assert!(m.describe().starts_with(m.name()), "{}", m.describe());
        assert!(m.config().num_params() > 0);
    }
}

#[test]
fn a_missing_interpreter_is_a_peer_note() {
    let e = peer::require_modules(
        std::path::Path::new("/nonexistent/python"),
        "torch",
        "install it",
    )
    .expect_err("no interpreter there");
    assert!(matches!(e, PeerError::Missing { .. }));
    assert_eq!(peer::peer_head("PyTorch", &Err(e)), "PyTorch");
    assert_eq!(peer::peer_head("PyTorch", &Ok("2.5".into())), "PyTorch 2.5");
}

#[test]
fn cells_show_dashes_where_a_side_is_missing() {
    assert_eq!(num(None, 2), "-");
    assert_eq!(num(ratio(Some(3.0), Some(2.0)), 2), "1.50");
    assert_eq!(ratio(Some(1.0), None), None);
}

#[test]
fn policy_bench_times_every_size_and_refuses_an_unplayable_one() {
    use super::policy::{self, PolicyBenchOptions};
    let opts = |sizes: Vec<usize>| PolicyBenchOptions {
        sizes,
        hidden: 3,
        moves: 3,
        fitness_games: 4,
    };
    let r = policy::run(&opts(vec![5, 9])).unwrap();
    assert_eq!(r.moves.len(), 2);
    assert!(r
        .moves
        .iter()
        .all(|m| m.plain_ms > 0.0 && m.candle_ms > 0.0));
    assert_eq!(r.moves[1].paper_ms, Some(20.0));
    assert_eq!(r.fitness.iter().map(|f| f.size).collect::<Vec<_>>(), [5, 7]);
    assert!(r.to_string().contains("paper ms"));
    let e = policy::run(&opts(vec![4])).err().unwrap();
    assert_eq!(option_of(e), "--sizes");
}
