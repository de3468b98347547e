//! Arimaa one step at a time through the loop: alpha-beta over steps plays
//! the bootstrap games, each step (or pass) a policy target among the 320
//! step logits, and the network with a 5-plane policy head plays MCTS over
//! steps in the gate and against the anchors.

mod common;

use common::{plies, run_loop, text};
use plies::dataset::Dataset;
use plies::game::{ArimaaSteps, Game};

#[test]
fn the_loop_runs_on_arimaa_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let config = r#"{
  "game": "arimaa-steps",
  "encoder": "arimaa-steps-8x8x8",
  "generations": 1,
  "window": 1,
  "seed": 3,
  "threads": 2,
  "selfplay": { "games": 3, "sims": 16, "bootstrap": "alphabeta:depth=4,eval=material", "temperature_plies": 4 },
  "train": { "model": "resnet-tiny", "epochs": 1, "batch": 64 },
  "gate": { "games": 2, "sims": 16 },
  "anchors": { "players": ["random"], "games": 2 }
}"#;
    let path = tmp.path().join("loop.json");
    std::fs::write(&path, config).unwrap();
    let out = tmp.path().join("loop");
    let o = run_loop("arimaa-steps", &path, &out);
    assert!(o.status.success(), "{}", text(&o));

    let rows = Dataset::open(out.join("gen-000/data"))
        .unwrap()
        .rows(None)
        .unwrap();
    let mut targets = 0;
    for row in &rows {
        // Every position reads back mid-turn, and its target is the step played.
        let state = ArimaaSteps::from_text(&row.position).unwrap();
        if let (Some(token), Some(target)) = (&row.move_played, &row.policy) {
            let mv = state.parse_move(token).unwrap();
            assert_eq!(target.index, [state.policy_index(mv).unwrap() as u32]);
            assert!(target.index[0] < 320);
            targets += 1;
        }
    }
    assert!(targets > 100, "{targets} targets");
    let net = std::fs::read_to_string(out.join("gen-000/net/config.json")).unwrap();
    assert!(net.contains("\"policy_planes\": 5"), "{net}");
    let anchors = std::fs::read_to_string(out.join("gen-000/anchors.json")).unwrap();
    assert!(anchors.contains("random"), "{anchors}");

    // The step network scores real whole-turn games: each position is the
    // start of a turn of steps.
    let records = tmp.path().join("records");
    let dataset = tmp.path().join("dataset");
    let games = concat!(env!("CARGO_MANIFEST_DIR"), "/data/arimaa/allgames2002.txt");
    let o = plies(&[
        "import",
        "--game",
        "arimaa",
        games,
        "--out",
        records.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = plies(&[
        "dataset",
        "build",
        "--records",
        records.join("games.jsonl").to_str().unwrap(),
        "--encoder",
        "arimaa-6x8x8",
        "--out",
        dataset.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let net = out.join("gen-000/net");
    let report_dir = tmp.path().join("report");
    let o = plies(&[
        "evaluate",
        "--checkpoint",
        net.to_str().unwrap(),
        "--data",
        dataset.to_str().unwrap(),
        "--split",
        "all",
        "--baseline",
        "material",
        "--out",
        report_dir.to_str().unwrap(),
    ]);
    let report = text(&o);
    assert!(o.status.success(), "{report}");
    assert!(report.contains("gen-000/net"), "{report}");
    assert!(
        report.contains("positions read as arimaa/arimaa-6x8x8 -> arimaa-steps/arimaa-steps-8x8x8"),
        "{report}"
    );
    // Beside material, paired over every game of the dataset.
    let games = Dataset::open(&dataset).unwrap().manifest().totals.games;
    let paired = format!("gen-000/net - material, paired over {games} games");
    assert!(report.contains(&paired), "{paired}\n{report}");
    let json = std::fs::read_to_string(report_dir.join("paired_by_game.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json[0]["reference"], "material");
    assert_eq!(json[0]["by_game"]["games"], games);
    let acc = &json[0]["by_game"]["accuracy"];
    let at = |k: &str| acc[k].as_f64().unwrap();
    assert!(
        at("low") <= at("value") && at("value") <= at("high"),
        "{acc}"
    );
}
