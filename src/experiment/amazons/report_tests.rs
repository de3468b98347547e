//! Tables 4 and 5's cells, their keys, and the report's tables, CSVs and
//! plots, from given numbers.

use super::config::AmazonsExperimentConfig;
use super::database::DbStats;
use super::equity::{contenders, equity_interval, equity_row, plan_cells, Cell, EquityRow};
use super::plots::{highest_test_error, ply_points};
use super::prediction_errors::ErrorRow;
use super::report::{
    equity_table, error_table, write_error_outputs, write_outputs, AmazonsExperimentReport,
};
use super::tests::{net_result, tiny};
use super::thesis::thesis_equity;
use crate::arena::Wdl;
use crate::eval::GroupedMetrics;
use crate::experiment::amazons_value::ValueNet;
use crate::experiment::match_cache::file_key;
use std::path::{Path, PathBuf};

fn error_row(evaluator: &str, split: &str, error: f64, thesis: Option<f64>) -> ErrorRow {
    ErrorRow {
        evaluator: evaluator.into(),
        split: split.into(),
        positions: 100,
        error,
        thesis,
    }
}

fn equity(evaluator: &str, search: &str, opponent: &str, equity: f64) -> EquityRow {
    EquityRow {
        evaluator: evaluator.into(),
        search: search.into(),
        opponent: opponent.into(),
        spec: format!("greedy:eval={evaluator}"),
        games: 10,
        wins: 5,
        draws: 0,
        losses: 5,
        equity,
        equity_lo: equity - 0.25,
        equity_hi: equity + 0.25,
        thesis: thesis_equity(evaluator, 0, opponent),
    }
}

fn report(
    errors: Vec<ErrorRow>,
    equities: Vec<EquityRow>,
    out: PathBuf,
) -> AmazonsExperimentReport {
    AmazonsExperimentReport {
        config: AmazonsExperimentConfig::quick(out),
        database: DbStats::default(),
        train_games: 9,
        test_games: 1,
        test_positions: 40,
        nets: Vec::new(),
        value_nets: Vec::new(),
        errors,
        equities,
        seconds: 1.0,
    }
}

#[test]
fn the_equity_interval_holds_the_equity() {
    let all_won = Wdl {
        wins: 10,
        draws: 0,
        losses: 0,
    };
    let (lo, hi) = equity_interval(&all_won);
    assert!((hi - 1.0).abs() < 1e-9 && lo > 0.0 && lo < 1.0, "{lo} {hi}");
    // Without draws: Wilson's interval of the win rate.
    let (wl, wh) = all_won.win_rate_interval();
    assert_eq!((lo, hi), (2.0 * wl - 1.0, 2.0 * wh - 1.0));
    // With draws: the score's.
    let drawn = Wdl {
        wins: 5,
        draws: 2,
        losses: 3,
    };
    let (lo, hi) = equity_interval(&drawn);
    let (sl, sh) = drawn.score_interval();
    assert_eq!((lo, hi), (2.0 * sl - 1.0, 2.0 * sh - 1.0));
    assert!(lo < drawn.equity() && drawn.equity() < hi);
}

/// The contenders of a study with two thesis networks (UNITS-8 the better),
/// one beyond the thesis and a value network that plays only some columns.
fn planned(out: &Path) -> (AmazonsExperimentConfig, Vec<Cell>) {
    let mut cfg = tiny(out.to_path_buf());
    cfg.searches = vec![0, 2];
    cfg.value_net_searches = vec![2];
    let units = net_result("UNITS-8", &[0.30]);
    let bits = net_result("BITS-8", &[0.35]);
    let territory = net_result("TERRITORY-8", &[0.40]);
    let (du, db, dt) = (out.join("u"), out.join("b"), out.join("t"));
    let nets = [
        (&units, du.as_path()),
        (&bits, db.as_path()),
        (&territory, dt.as_path()),
    ];
    let value_nets = [ValueNet {
        name: "resnet-tiny".into(),
        dir: out.join("v"),
        native: false,
    }];
    let cells = plan_cells(&cfg, &contenders(&cfg, &nets, &value_nets));
    (cfg, cells)
}

#[test]
fn cells_are_planned_cheap_first_and_only_where_each_evaluator_plays() {
    let (_, cells) = planned(Path::new("out"));
    let order: Vec<(usize, &str, &str)> = cells
        .iter()
        .map(|c| (c.search, c.opponent, c.evaluator.as_str()))
        .collect();
    let hand = ["lieberum", "mindist", "random"];
    let mut expected = Vec::new();
    for (s, opponents) in [(0, ["simple", "good"]), (2, ["simple", "good"])] {
        for opp in opponents {
            for h in hand {
                expected.push((s, opp, h));
            }
            expected.push((s, opp, "UNITS-8"));
            // Only the best thesis network plays the good player.
            if opp == "simple" {
                expected.push((s, opp, "BITS-8"));
            }
            expected.push((s, opp, "TERRITORY-8"));
            if s == 2 {
                expected.push((s, opp, "resnet-tiny"));
            }
        }
    }
    assert_eq!(order, expected);
    let first = &cells[0];
    assert_eq!(first.spec, "greedy:eval=lieberum");
    assert_eq!(first.opponent_spec, "random");
    assert_eq!(first.name, "lieberum-no-lookahead-vs-simple");
    let mcts = cells
        .iter()
        .find(|c| c.evaluator == "UNITS-8" && c.search == 2 && c.opponent == "good")
        .unwrap();
    assert_eq!(
        mcts.spec,
        format!("mcts:sims=50,eval=ckpt:{}", Path::new("out/u").display())
    );
    assert_eq!(mcts.name, "UNITS-8-MCTS-vs-good");
}

#[test]
fn a_cells_seed_follows_its_name_and_its_key_what_it_plays() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, here) = planned(&tmp.path().join("a"));
    let (_, there) = planned(&tmp.path().join("b"));
    for (a, b) in here.iter().zip(&there) {
        assert_eq!(a.seed, b.seed, "{}", a.name);
    }
    let mut seeds: Vec<u64> = here.iter().map(|c| c.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    assert_eq!(seeds.len(), here.len());
    let hand = &here[0];
    assert!(hand
        .key
        .starts_with("greedy:eval=lieberum vs random, 10 games, 2 random plies, size 6, seed "));
    assert!(hand.key.ends_with("files "), "{}", hand.key);
    let net = here.iter().find(|c| c.evaluator == "UNITS-8").unwrap();
    assert!(net.key.ends_with("files absent"), "{}", net.key);
    // New weights, a new key.
    let weights = tmp.path().join("a/u/model.safetensors");
    std::fs::create_dir_all(weights.parent().unwrap()).unwrap();
    std::fs::write(&weights, b"weights").unwrap();
    let (_, again) = planned(&tmp.path().join("a"));
    let net_again = again.iter().find(|c| c.name == net.name).unwrap();
    assert_ne!(net_again.key, net.key);
    assert!(net_again.key.ends_with(&file_key(&weights)));
}

#[test]
fn an_equity_row_carries_the_games_and_the_thesis_figure() {
    let (_, cells) = planned(Path::new("out"));
    let cell = cells
        .iter()
        .find(|c| c.evaluator == "mindist" && c.search == 2 && c.opponent == "simple")
        .unwrap();
    let wdl = Wdl {
        wins: 6,
        draws: 0,
        losses: 4,
    };
    let row = equity_row(cell, &wdl);
    assert_eq!(
        (row.search.as_str(), row.opponent.as_str()),
        ("MCTS", "simple")
    );
    assert_eq!((row.games, row.wins, row.draws, row.losses), (10, 6, 0, 4));
    assert!((row.equity - 0.2).abs() < 1e-12);
    assert_eq!((row.equity_lo, row.equity_hi), equity_interval(&wdl));
    assert_eq!(row.thesis, Some(0.44));
    assert_eq!(row.spec, cell.spec);
}

#[test]
fn the_error_table_pairs_the_splits_and_quotes_the_thesis() {
    let rows = vec![
        error_row("lieberum", "test", 0.25, Some(0.24)),
        error_row("UNITS-8", "test", 0.4, None),
        error_row("TERRITORY-8", "test", 0.3, None),
        error_row("lieberum", "train", 0.2, None),
        error_row("UNITS-8", "train", 0.1, None),
    ];
    let t = error_table(&report(rows, Vec::new(), "out".into()));
    assert_eq!(
        t.headers,
        ["evaluator", "test error", "train error", "thesis (test)"]
    );
    assert_eq!(
        t.rows,
        [
            ["lieberum", "0.250", "0.200", "0.24"],
            ["UNITS-8", "0.400", "0.100", "0.37-0.38"],
            ["TERRITORY-8", "0.300", "-", "-"],
        ]
    );
}

#[test]
fn the_equity_table_has_a_column_per_search_and_dashes_where_nothing_played() {
    let equities = vec![
        equity("lieberum", "no lookahead", "simple", 0.5),
        equity("UNITS-40", "no lookahead", "simple", -0.5),
        equity("lieberum", "MCTS", "simple", 0.75),
        equity("mindist", "no lookahead", "good", -1.0),
    ];
    let r = report(Vec::new(), equities, "out".into());
    let simple = equity_table(&r, "simple");
    assert_eq!(
        simple.headers,
        [
            "evaluator",
            "no lookahead (thesis)",
            "alpha-beta (thesis)",
            "MCTS (thesis)"
        ]
    );
    assert_eq!(
        simple.rows,
        [
            [
                "lieberum",
                "+0.50 [+0.25, +0.75] (+0.42)",
                "-",
                "+0.75 [+0.50, +1.00] (+0.42)"
            ],
            ["UNITS-40", "-0.50 [-0.75, -0.25] (-0.92)", "-", "-"],
        ]
    );
    let good = equity_table(&r, "good");
    assert_eq!(
        good.rows,
        [["mindist", "-1.00 [-1.25, -0.75] (-0.98)", "-", "-"]]
    );
}

#[test]
fn the_csvs_are_written_from_the_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path();
    let rows = vec![
        error_row("lieberum", "test", 0.25, Some(0.24)),
        error_row("UNITS-8", "test", 0.4, None),
    ];
    // Two positions at ply 3: in the CSV, too few for a plot.
    let mut m = GroupedMetrics::default();
    m.push(0.9, 1.0, 3, 10);
    m.push(0.9, 0.0, 3, 10);
    let by_ply = vec![("UNITS-8".to_string(), "test".to_string(), m)];
    write_error_outputs(out, &rows, &by_ply).unwrap();
    let errors = std::fs::read_to_string(out.join("errors.csv")).unwrap();
    let lines: Vec<&str> = errors.lines().collect();
    assert_eq!(
        lines,
        [
            "evaluator,split,positions,error,thesis",
            "lieberum,test,100,0.2500,0.24",
            "UNITS-8,test,100,0.4000,",
        ]
    );
    let ply = std::fs::read_to_string(out.join("error_by_ply.csv")).unwrap();
    assert_eq!(
        ply.lines().collect::<Vec<_>>(),
        [
            "evaluator,split,ply,positions,error",
            "UNITS-8,test,3,2,0.5000"
        ]
    );
    assert!(!out.join("error_by_ply.png").exists());
    assert!(!out.join("train_vs_test.png").exists());

    let r = report(
        Vec::new(),
        vec![equity("lieberum", "no lookahead", "simple", 0.5)],
        out.to_path_buf(),
    );
    write_outputs(&r).unwrap();
    let eq = std::fs::read_to_string(out.join("equities.csv")).unwrap();
    assert_eq!(
        eq.lines().nth(1),
        Some(
            "lieberum,no lookahead,simple,greedy:eval=lieberum,10,5,0,5,0.5000,0.2500,0.7500,0.42"
        )
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["test_positions"], 40);
}

#[test]
fn the_plots_leave_out_thin_plies_and_the_hand_evaluators() {
    let mut m = GroupedMetrics::default();
    for _ in 0..5 {
        m.push(0.9, 1.0, 2, 10);
    }
    for _ in 0..4 {
        m.push(0.9, 0.0, 7, 10);
    }
    assert_eq!(ply_points(&m), [(2.0, 0.0)]);
    let rows = vec![
        error_row("random", "test", 0.5, Some(0.5)),
        error_row("UNITS-8", "test", 0.4, None),
        error_row("BITS-8", "test", 0.35, None),
        error_row("BITS-8", "train", 0.45, None),
    ];
    assert_eq!(
        highest_test_error(&rows).map(|r| r.evaluator.as_str()),
        Some("UNITS-8")
    );
    assert!(highest_test_error(&rows[..1]).is_none());
}
