//! Tests of the grid's axes and ranking; whole grids are in `tests/grid.rs`.

use super::*;

#[test]
fn paper_axes_and_sampling() {
    let a = GridAxes::paper();
    assert_eq!(a.len(), 7 * 3 * 4 * 9);
    let ids: Vec<String> = a.product().iter().map(GridPoint::id).collect();
    let mut u = ids.clone();
    u.sort();
    u.dedup();
    assert_eq!(u.len(), ids.len());
    assert!(ids.contains(&"k4x4-nesterov-l1-d0".to_string()));
}

#[test]
fn bad_axis_values_name_the_flag() {
    for (args, flag, value) in [
        (["0.7,1.5", "l1", "sgd", "4x4"], "--dropout", "1.5"),
        (["0", "l3", "sgd", "4x4"], "--regularizer", "l3"),
        (["0", "l1", "adam", "4x4"], "--optimizer", "adam"),
        (["0", "l1", "sgd", "4by4"], "--kernel", "4by4"),
        (["0", "l1", "sgd", "0x4"], "--kernel", "0x4"),
    ] {
        let e = GridAxes::parse(args[0], args[1], args[2], args[3])
            .unwrap_err()
            .to_string();
        assert!(e.contains(flag) && e.contains(value), "{e}");
    }
}

#[test]
fn ranking_means_and_stds() {
    let p = |d: f64| GridPoint {
        dropout: d,
        regularizer: Regularizer::None,
        optimizer: Rule::Sgd,
        kernel: [2, 2],
    };
    let m = |mse: f64| crate::eval::Metrics {
        count: 10,
        mse,
        mae: mse,
        r2: Some(1.0 - mse),
        accuracy: Some(0.5),
        error01: Some(0.5),
        decisive: 10,
        draws: 0,
        mean_prediction: 0.5,
        mean_label: 0.5,
    };
    let run = |pt: GridPoint, f: u8, mse: f64| RunResult {
        id: pt.id(),
        fold: f,
        config: pt,
        train_folds: vec![],
        valid_folds: vec![f],
        metrics: m(mse),
        epochs: 1,
        steps: 1,
        seconds: 0.0,
    };
    let rows = rank(&[
        (p(0.5), vec![run(p(0.5), 0, 0.3), run(p(0.5), 1, 0.1)]),
        (p(0.0), vec![run(p(0.0), 0, 0.1), run(p(0.0), 1, 0.1)]),
    ]);
    assert_eq!(rows[0].config.dropout, 0.0);
    assert_eq!(rows[0].rank, 1);
    assert!((rows[1].mse - 0.2).abs() < 1e-12);
    assert!((rows[1].mse_std - 0.02f64.sqrt()).abs() < 1e-12);
    assert_eq!(rows[1].positions, 20);
    let md = markdown(&rows, "t");
    assert_eq!(
        md.lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| ---"))
            .count(),
        3
    );
}

#[test]
fn a_rerun_with_other_arguments_names_the_top_level_field() {
    use crate::util::run_dir::{check_fingerprint, Depth, JsonLayout};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(ARGS_FILE);
    let args = |lr: f64| serde_json::json!({"seed": 1, "axes": {"dropout": [lr]}});
    let check = |v| check_fingerprint(&path, &v, Depth::TopLevel, JsonLayout::Pretty);
    check(args(0.5)).unwrap();
    let stored = std::fs::read_to_string(&path).unwrap();
    assert_eq!(stored, serde_json::to_string_pretty(&args(0.5)).unwrap());
    let e = GridError::from(check(args(0.25)).unwrap_err());
    assert_eq!(
        e.to_string(),
        format!(
            "{} holds a grid started with other arguments (`axes` was {{\"dropout\":[0.5]}}, \
             now {{\"dropout\":[0.25]}}); rerun with the same arguments or use another --out",
            dir.path().display()
        )
    );
}
