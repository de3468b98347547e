use super::*;
use crate::game::{Amazons, Arimaa, AtariGo, Gomoku, Pentago, TicTacToe};
use crate::game::{Game, Side};
use crate::games::GameSupport;
use crate::util::seeded_rng;

fn err(text: &str) -> String {
    text.parse::<GamePlayerSpec>().unwrap_err().to_string()
}

#[test]
fn specs_parse_and_print_back() {
    for text in [
        "random",
        "naive",
        "alphabeta:depth=3",
        "alphabeta:depth=1,eval=material",
        "alphabeta",
        "alphabeta:time=0.5,nodes=1000",
        "greedy",
        "greedy:eval=lieberum",
        "random-steps",
        "random-steps:end=0.25",
        "mcts:sims=800,threads=8,eval=mindist",
        "mcts:sims=100,eval=ckpt:runs/x,rollout=10",
        "spiel-mcts:sims=100,rollouts=2",
        "mdp:runs/pentago-mdp.json",
        "policy:ckpt=runs/evolve/best",
        "policy:ckpt=runs/evolve/best,temperature=0.5",
    ] {
        let spec: GamePlayerSpec = text.parse().unwrap();
        assert_eq!(spec.to_string(), text);
    }
    assert_eq!(
        "alphabeta:eval=material,depth=2"
            .parse::<GamePlayerSpec>()
            .unwrap(),
        GamePlayerSpec::AlphaBeta(AlphaBetaSpec(SearchOptions {
            depth: Some(2),
            time: None,
            nodes: None,
            eval: Some("material".into())
        }))
    );
}

#[test]
fn errors_name_the_bad_key_or_value() {
    assert!(err("minimax").contains("unknown player 'minimax'"));
    assert!(err("alphabeta:time=0").contains("time '0'"));
    assert!(err("alphabeta:nodes=0").contains("nodes '0'"));
    assert!(err("alphabeta:depth=x").contains("depth 'x'"));
    assert!(err("alphabeta:depth=0").contains("depth '0'"));
    assert!(err("alphabeta:time=1e300").contains("time '1e300'"));
    assert!(err("alphabeta:depth=2,width=3").contains("unknown option 'width'"));
    assert!(err("random:depth=2").contains("takes no options"));
    assert!(err("random-steps:end=2").contains("end '2'"));
    assert!(err("greedy:eval").contains("'eval' is not key=value"));
    assert!(err("alphabeta:depth=1,depth=2").contains("'depth' given twice"));
    assert!(err("mcts:sims=10,thread=2").contains("unknown option 'thread'"));
    assert!(err("mcts:sims=1e3").contains("sims=1e3"));
    assert!(err("spiel-mcts:simulations=3").contains("unknown option 'simulations'"));
    assert!(err("mdp").contains("mdp:MODEL_FILE"));
    let e = player_from_spec::<Amazons>("mdp:/no/model.json")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("does not play amazons"), "{e}");
    let e = player_from_spec::<Pentago>("mdp:/no/model.json")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("/no/model.json") && e.contains("cannot read"),
        "{e}"
    );
    assert!(err("policy").contains("expected policy:ckpt=CHECKPOINT_DIR"));
    assert!(err("policy:ckpt=x,temperature=-1").contains("temperature '-1'"));
    assert!(err("policy:ckpt=x,temp=1").contains("unknown option 'temp'"));
    let e = player_from_spec::<Arimaa>("greedy:eval=mindist")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("'mindist' is not an evaluator of arimaa") && e.contains("material"),
        "{e}"
    );
    let e = player_from_spec::<Amazons>("mcts:sims=10,eval=mindst")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("'mindst'") && e.contains("lieberum"), "{e}");
    let e = player_from_spec::<Arimaa>("spiel-mcts:sims=10")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("not arimaa"), "{e}");
    let e = player_from_spec::<AtariGo>("alphabeta:depth=2")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("atari_go has no hand evaluator"), "{e}");
    let e = player_from_spec::<Amazons>("random-steps")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("Arimaa player"), "{e}");
}

/// Every player of every game plays legal moves to the end of a game.
fn plays_legal_games<G: GameSupport>(g: G, specs: &[&str]) {
    let mut rng = seeded_rng(3, 0);
    for text in specs {
        let p = player_from_spec::<G>(text).unwrap();
        let mut g = g.clone();
        let mut legal = Vec::new();
        while g.outcome().is_none() && g.ply() < 40 {
            let mv = p.choose(&g, &mut rng).unwrap();
            g.legal_moves(&mut legal);
            assert!(legal.contains(&mv), "{text}: {}", g.move_to_string(mv));
            g.play(mv);
        }
    }
}

#[test]
fn players_play_legal_moves() {
    plays_legal_games(TicTacToe::new(), &["random", "naive", "mcts:sims=50"]);
    plays_legal_games(
        Gomoku::with_size(7).unwrap(),
        &[
            "random",
            "naive",
            "mcts:sims=20,threads=2",
            "greedy:eval=random",
        ],
    );
    plays_legal_games(AtariGo::with_size(5).unwrap(), &["random", "naive"]);
    plays_legal_games(
        Amazons::with_size(6).unwrap(),
        &[
            "random",
            "alphabeta:depth=2",
            "greedy:eval=lieberum",
            "mcts:sims=30,eval=mindist,threads=2",
            "mcts:sims=20,eval=lieberum,rollout=3,puct=off",
        ],
    );
    plays_legal_games(
        Pentago::new(),
        &[
            "random",
            "greedy",
            "alphabeta:depth=1,eval=pentago-features",
        ],
    );
}

#[test]
fn arimaa_material_players_take_a_free_capture() {
    // Gold's elephant on d5 can push the silver cat on c5 onto trap c6.
    let board = format!(
        ".......r{}..cE....{}R.......",
        ".".repeat(16),
        ".".repeat(24)
    );
    let g = Arimaa::from_text(&format!("g {board}")).unwrap();
    let mut rng = seeded_rng(4, 0);
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    for text in [
        "greedy",
        "alphabeta:depth=1,eval=material",
        "alphabeta:depth=2",
    ] {
        let p = player_from_spec::<Arimaa>(text).unwrap();
        let mv = p.choose(&g, &mut rng).unwrap();
        assert!(legal.contains(&mv), "{text}");
        let mut after = g.clone();
        after.play(mv);
        let cats = after.position().material(Side::Second)[1];
        assert_eq!(cats, 0, "{text}: {}", g.move_to_string(mv));
    }
    let p = player_from_spec::<Arimaa>("random-steps").unwrap();
    assert_eq!(p.name(), "random-steps");
    let mv = p.choose(&g, &mut rng).unwrap();
    assert_eq!(g.parse_move(&g.move_to_string(mv)).unwrap(), mv);
}
