use super::*;
use crate::game::{Amazons, Arimaa, Gomoku, Pentago, TicTacToe};
use crate::games::shipped_setups;

fn config(game: &str, size: usize, white: &str, black: &str, games: u64) -> SelfplayConfig {
    SelfplayConfig {
        format: FORMAT,
        matchup: Matchup {
            game: game.into(),
            board_size: size,
            white: white.into(),
            black: black.into(),
            alternate: false,
        },
        games,
        seed: 7,
        epsilon: 0.0,
        max_plies: 1000,
        setups: None,
        setups_sha256: None,
        id_prefix: "t".into(),
        chunk_games: 4,
        shard: None,
    }
}

fn read_all(dir: &Path) -> Vec<String> {
    let (chunks, _) = chunks::scan(&dir.join(GAMES_DIR)).unwrap();
    chunks
        .iter()
        .flat_map(|(_, p)| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Replays every record through `record_start`, `parse_move`, `play`.
fn replay_all<G: GameSupport>(dir: &Path) -> usize {
    let mut n = 0;
    for line in read_all(dir) {
        let rec = GameRecord::from_json_line(&line).unwrap();
        let mut g = G::record_start(&rec).unwrap();
        for m in &rec.moves {
            let mv = g.parse_move(m).unwrap();
            g.play(mv);
        }
        let result = match g.outcome() {
            Some(Outcome::Win(s)) => Some(s),
            _ => None,
        };
        assert_eq!(result, rec.result, "{}", rec.id);
        assert_eq!(g.termination_name(), rec.termination, "{}", rec.id);
        n += 1;
    }
    n
}

#[test]
fn results_do_not_depend_on_threads_and_records_replay() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let mut cfg = config("gomoku", 7, "random", "naive", 10);
    cfg.matchup.alternate = true;
    cfg.epsilon = 0.2;
    let s1 = run::<Gomoku>(a.path(), &cfg, &Openings::Standard, 1, false, &|_| {}).unwrap();
    run::<Gomoku>(b.path(), &cfg, &Openings::Standard, 2, false, &|_| {}).unwrap();
    assert_eq!(read_all(a.path()), read_all(b.path()));
    assert_eq!(s1.games, 10);
    assert_eq!(s1.first.wins + s1.first.losses + s1.first.draws, 10);
    let (w, b) = (s1.white_player, s1.black_player);
    assert_eq!(w.wins + b.wins, s1.first.wins + s1.second.wins);
    assert_eq!((w.wins, w.losses), (b.losses, b.wins));
    assert_eq!(w.wins + w.losses + w.draws, 10);
    assert_eq!(replay_all::<Gomoku>(a.path()), 10);
    let rec = GameRecord::from_json_line(&read_all(a.path())[1]).unwrap();
    assert_eq!(rec.players, PerSide::new("naive".into(), "random".into()));
    assert_eq!(rec.board_size, Some(7));
    assert_eq!(rec.id, "t-1");
}

#[test]
fn arimaa_records_replay_with_their_setups_and_terminations() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config("arimaa", 8, "random-steps", "random-steps", 6);
    cfg.setups = Some("random".into());
    cfg.max_plies = 150;
    run::<Arimaa>(dir.path(), &cfg, &Openings::RandomSetups, 2, false, &|_| {}).unwrap();
    assert_eq!(replay_all::<Arimaa>(dir.path()), 6);
    let (sampler, _) = shipped_setups().unwrap();
    assert!(sampler.len() > 10);
}

#[test]
fn a_different_configuration_is_refused_and_force_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config("tictactoe", 3, "random", "random", 9);
    run::<TicTacToe>(dir.path(), &cfg, &Openings::Standard, 1, false, &|_| {}).unwrap();
    let mut other = cfg.clone();
    other.seed = 8;
    let err = prepare(dir.path(), &other, false).unwrap_err().to_string();
    assert!(err.contains("'seed' was 7, now 8"), "{err}");
    // Every differing field is named in declaration order (not sorted),
    // the first with both values.
    let mut three = other.clone();
    three.games = 10;
    three.id_prefix = "u".into();
    let err = prepare(dir.path(), &three, false).unwrap_err().to_string();
    assert!(
        err.contains("'games' was 9, now 10 (also seed, id_prefix);"),
        "{err}"
    );
    let plan = prepare(dir.path(), &cfg, false).unwrap();
    assert!(plan.missing.is_empty() && plan.games_done == 9);
    let plan = prepare(dir.path(), &other, true).unwrap();
    assert_eq!(plan.missing.len(), 3);
    // A chunk cut short is reported, not silently replayed.
    run::<TicTacToe>(dir.path(), &other, &Openings::Standard, 1, false, &|_| {}).unwrap();
    let p = chunk_path(&dir.path().join(GAMES_DIR), 1);
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, text.lines().next().unwrap()).unwrap();
    let err = prepare(dir.path(), &other, false).unwrap_err().to_string();
    assert!(
        err.contains("part-00001.jsonl") && err.contains("expected 4"),
        "{err}"
    );
}

#[test]
fn a_missing_chunk_is_played_again_identically() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config("pentago", 6, "random", "greedy", 10);
    run::<Pentago>(dir.path(), &cfg, &Openings::Standard, 2, false, &|_| {}).unwrap();
    let before = read_all(dir.path());
    let games_dir = dir.path().join(GAMES_DIR);
    std::fs::remove_file(chunk_path(&games_dir, 1)).unwrap();
    std::fs::write(games_dir.join(".part-00001.jsonl.tmp-1-1"), "half").unwrap();
    let plan = prepare(dir.path(), &cfg, false).unwrap();
    assert_eq!((plan.missing.clone(), plan.stale_removed), (vec![1], 1));
    let s = run::<Pentago>(dir.path(), &cfg, &Openings::Standard, 1, false, &|_| {}).unwrap();
    assert_eq!(s.played.games, 4);
    assert_eq!(s.chunks_resumed, 2);
    assert_eq!(read_all(dir.path()), before);
    assert_eq!(replay_all::<Pentago>(dir.path()), 10);
}

#[test]
fn max_plies_leaves_games_unfinished() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config("amazons", 6, "random", "random", 3);
    cfg.max_plies = 4;
    let s = run::<Amazons>(dir.path(), &cfg, &Openings::Standard, 1, false, &|_| {}).unwrap();
    assert_eq!(s.unfinished, 3);
    assert_eq!(s.terminations.get("unfinished"), Some(&3));
    for line in read_all(dir.path()) {
        let rec = GameRecord::from_json_line(&line).unwrap();
        assert_eq!((rec.plies, rec.result), (4, None));
    }
}

#[test]
fn a_run_holds_its_directory_and_stores_the_configuration_as_declared() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let cfg = config("tictactoe", 3, "random", "random", 5);
    let play = || run::<TicTacToe>(&out, &cfg, &Openings::Standard, 1, false, &|_| {});
    let held = RunDir::claim(&out).unwrap();
    let err = play().unwrap_err().to_string();
    assert!(err.contains("another writer holds it"), "{err}");
    assert!(!out.join(CONFIG_FILE).exists());
    drop(held);
    play().unwrap();
    // The fields in their declared order, as people read them.
    let stored = std::fs::read_to_string(out.join(CONFIG_FILE)).unwrap();
    assert_eq!(stored, serde_json::to_string_pretty(&cfg).unwrap() + "\n");
    assert!(stored.starts_with("{\n  \"format\""), "{stored}");
    std::fs::write(out.join(CONFIG_FILE), "{").unwrap();
    let err = prepare(&out, &cfg, false).unwrap_err().to_string();
    assert!(err.contains("not a self-play configuration"), "{err}");
    prepare(&out, &cfg, true).unwrap();
}
