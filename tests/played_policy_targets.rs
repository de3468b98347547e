//! Policy targets from the moves players chose: alpha-beta self-play and
//! real games become policy data (`--policy-targets played`), exploration
//! moves excepted; and the loop bootstraps from an alpha-beta player
//! (`selfplay.bootstrap`) whose choices are its first policy targets.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{plies, run_loop, text};
use plies::dataset::{Dataset, PolicyTarget, PositionRow};
use plies::game::{ConnectFour, Game};
use plies::record::{read_records, GameRecord};

fn records(dir: &Path) -> HashMap<String, GameRecord> {
    let mut all = HashMap::new();
    for entry in std::fs::read_dir(dir.join("games")).unwrap() {
        for rec in read_records(entry.unwrap().path()).unwrap() {
            all.insert(rec.id.clone(), rec);
        }
    }
    all
}

/// The target a row should have: the move played where it was chosen.
fn expected_target(row: &PositionRow, rec: &GameRecord) -> Option<PolicyTarget> {
    let token = row.move_played.as_ref()?;
    if rec.explored.contains(&row.ply) {
        return None;
    }
    let state = ConnectFour::from_text(&row.position).unwrap();
    let mv = state.parse_move(token).unwrap();
    Some(PolicyTarget::best(state.policy_index(mv).unwrap() as u32))
}

#[test]
fn alpha_beta_self_play_keeps_its_choices_as_policy_targets() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let o = plies(&[
        "selfplay",
        "--game",
        "connect-four",
        "--white",
        "alphabeta:depth=2",
        "--black",
        "alphabeta:depth=2",
        "--games",
        "12",
        "--epsilon",
        "0.25",
        "--seed",
        "5",
        "--threads",
        "2",
        "--out",
        run.to_str().unwrap(),
        "--dataset",
        "stones-2",
        "--policy-targets",
        "played",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let recs = records(&run);
    assert_eq!(recs.len(), 12);
    let explored: usize = recs.values().map(|r| r.explored.len()).sum();
    let moves: usize = recs.values().map(|r| r.moves.len()).sum();
    // A quarter of the moves, give or take: the exploration is recorded.
    assert!(
        explored * 8 > moves && explored * 8 < moves * 3,
        "{explored} of {moves}"
    );

    let data = Dataset::open(run.join("dataset")).unwrap();
    data.verify().unwrap();
    let rows = data.rows(None).unwrap();
    assert_eq!(rows.len(), moves + recs.len());
    let mut with_target = 0;
    for row in &rows {
        let rec = &recs[&row.game_id];
        assert_eq!(
            row.policy,
            expected_target(row, rec),
            "{} ply {}",
            row.game_id,
            row.ply
        );
        with_target += usize::from(row.policy.is_some());
    }
    assert_eq!(with_target, moves - explored);

    // `plies dataset build` gives the same targets from the records.
    let rebuilt = tmp.path().join("rebuilt");
    let o = plies(&[
        "dataset",
        "build",
        "--records",
        run.to_str().unwrap(),
        "--encoder",
        "stones-2",
        "--terminations",
        "all",
        "--out",
        rebuilt.to_str().unwrap(),
        "--policy-targets",
        "played",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let report = text(&o);
    assert!(
        report.contains(&format!(
            "policy targets: played ({with_target} positions have one)"
        )),
        "{report}"
    );
    let again = Dataset::open(&rebuilt).unwrap().rows(None).unwrap();
    let key = |r: &PositionRow| (r.game_id.clone(), r.ply);
    let mut by_key: HashMap<_, _> = again.iter().map(|r| (key(r), &r.policy)).collect();
    for row in &rows {
        assert_eq!(by_key.remove(&key(row)), Some(&row.policy));
    }
}

#[test]
fn games_without_policy_indices_are_refused_before_any_game() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("arimaa");
    let o = plies(&[
        "selfplay",
        "--game",
        "arimaa",
        "--white",
        "random",
        "--black",
        "random",
        "--games",
        "2",
        "--out",
        run.to_str().unwrap(),
        "--dataset",
        "arimaa-6x8x8",
        "--policy-targets",
        "played",
        "--quiet",
    ]);
    assert!(!o.status.success());
    let err = text(&o);
    assert!(
        err.contains("--policy-targets") && err.contains("arimaa") && err.contains("policy index"),
        "{err}"
    );
    assert!(!run.join("games").exists(), "games were played first");

    let o = plies(&[
        "dataset",
        "build",
        "--records",
        "x.jsonl",
        "--out",
        "y",
        "--policy-targets",
        "visits",
    ]);
    assert!(!o.status.success());
    let err = text(&o);
    assert!(
        err.contains("'visits'") && err.contains("none, played"),
        "{err}"
    );
}

#[test]
fn the_loop_bootstraps_from_an_alpha_beta_player() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("loop");
    let config = r#"{
  "game": "connect-four",
  "generations": 1,
  "window": 1,
  "seed": 3,
  "threads": 2,
  "selfplay": { "games": 8, "sims": 16, "bootstrap": "alphabeta:depth=2", "temperature_plies": 3 },
  "train": { "model": "resnet-tiny", "epochs": 1, "batch": 32 },
  "gate": { "games": 2, "sims": 16 },
  "anchors": { "players": ["random"], "games": 2 }
}"#;
    let path = tmp.path().join("loop.json");
    std::fs::write(&path, config).unwrap();
    let run = |out: &Path| run_loop("connect-four", &path, out);
    let o = run(&out);
    assert!(o.status.success(), "{}", text(&o));

    let data = Dataset::open(out.join("gen-000/data")).unwrap();
    let rows = data.rows(None).unwrap();
    let games: std::collections::HashSet<_> = rows.iter().map(|r| &r.game_id).collect();
    assert_eq!(games.len(), 8);
    for row in &rows {
        let state = ConnectFour::from_text(&row.position).unwrap();
        match (&row.move_played, row.ply < 3) {
            // The random opening plies and the final positions have no target.
            (None, _) | (Some(_), true) => assert_eq!(row.policy, None, "ply {}", row.ply),
            (Some(token), false) => {
                let mv = state.parse_move(token).unwrap();
                let want = PolicyTarget::best(state.policy_index(mv).unwrap() as u32);
                assert_eq!(row.policy.as_ref(), Some(&want), "ply {}", row.ply);
            }
        }
    }
    // Random openings make the games differ.
    let openings: std::collections::HashSet<_> = rows
        .iter()
        .filter(|r| r.ply == 3)
        .map(|r| r.position.clone())
        .collect();
    assert!(openings.len() > 4, "{openings:?}");
    let manifest = std::fs::read_to_string(out.join("gen-000/data/manifest.json")).unwrap();
    assert!(manifest.contains("alphabeta"), "{manifest}");
    // Until a network is promoted, the bootstrap player is the gate's opponent.
    let gate = std::fs::read_to_string(out.join("gen-000/gate.json")).unwrap();
    assert!(gate.contains("alphabeta:depth=2"), "{gate}");

    // A bad bootstrap spec is refused before the run directory is claimed.
    std::fs::write(
        &path,
        config.replace("alphabeta:depth=2", "alphabeta:depth=x"),
    )
    .unwrap();
    let bad = tmp.path().join("bad");
    let o = run(&bad);
    assert!(!o.status.success());
    let err = text(&o);
    assert!(
        err.contains("selfplay.bootstrap") && err.contains("depth=x"),
        "{err}"
    );
    assert!(!bad.exists());
}
