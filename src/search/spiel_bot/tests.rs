use super::*;
use crate::game::{Amazons, Game, Gomoku, Pentago, PentagoMove, TicTacToe};
use crate::games::spiel_game_string;

#[test]
fn options_parse_and_name_bad_keys() {
    let o = SpielMctsOptions::from_pairs(&[("sims", "50"), ("c", "1.4"), ("seed", "9")]).unwrap();
    assert_eq!(
        (o.simulations, o.uct_c, o.seed, o.rollouts),
        (50, 1.4, 9, 1)
    );
    assert_eq!(o.label(), "spiel-mcts:sims=50,c=1.4,seed=9");
    let e = SpielMctsOptions::from_pairs(&[("simz", "5")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("'simz'"), "{e}");
    let e = SpielMctsOptions::from_pairs(&[("sims", "0")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("sims=0"), "{e}");
    let e = SpielMctsOptions::from_pairs(&[("rollouts", "x")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("rollouts=x"), "{e}");
    let e = SpielMctsOptions::from_pairs(&[("c", "-1")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("c=-1"), "{e}");
    let o = SpielMctsOptions::from_pairs(&[("timeout", "0"), ("impl", "python")]).unwrap();
    assert_eq!(o.move_timeout, None);
    assert_eq!(o.implementation, Some(SpielMctsImpl::Python));
}

#[test]
fn actions_round_trip() {
    let g = Amazons::with_size(6).unwrap();
    let mut moves = Vec::new();
    g.legal_moves(&mut moves);
    for &mv in &moves {
        assert_eq!(g.spiel_move(&g.to_spiel_actions(mv)), Some(mv));
    }
    assert_eq!(g.spiel_move(&[1, 2]), None);
    assert_eq!(g.spiel_move(&[1, 2, 36]), None);
    let p = Pentago::new();
    assert_eq!(p.spiel_move(&[288]), None);
    assert_eq!(p.spiel_move(&[169]), Some(PentagoMove(169)));
    assert_eq!(
        spiel_game_string::<Amazons>(6).unwrap(),
        "amazons(board_size=6)"
    );
    assert_eq!(
        spiel_game_string::<Gomoku>(9).unwrap(),
        "gomoku(size=9,connect=5)"
    );
    assert_eq!(spiel_game_string::<TicTacToe>(3).unwrap(), "tic_tac_toe()");
    assert_eq!(
        spiel_game_string::<crate::game::AtariGo>(9).unwrap(),
        "atari_go(board_size=9)"
    );
}
