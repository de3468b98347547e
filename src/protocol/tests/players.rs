//! Every player kind the engine serves, built as every consumer builds
//! them, on a free capture: the move, and what each says it saw.

use super::fixtures::free_cat;
use crate::game::{Game, Side};
use crate::protocol::AeiConfig;
use crate::util::seeded_rng;

/// The Arimaa players the engine serves, built as every consumer builds
/// them, searching `free_cat` with a stop flag in the budget as the
/// engine does.
fn takes_the_cat(spec: &str) -> crate::search::Searched<crate::game::arimaa::Move> {
    use crate::search::{Budget, StopFlag};
    let game = free_cat();
    let config = AeiConfig::new(spec.parse().unwrap(), 1);
    let player = config.player().unwrap();
    let budget = Budget {
        depth: Some(1),
        stop: Some(StopFlag::new()),
        ..Budget::UNLIMITED
    };
    let mut depths = Vec::new();
    let searched = player
        .session()
        .search(&game, &budget, &mut seeded_rng(1, 0), &mut |i| {
            depths.extend(i.depth)
        })
        .unwrap();
    let mut after = game.clone();
    after.play(searched.mv);
    let silver = after.position().material(Side::Second);
    assert_eq!(
        silver[crate::game::arimaa::PieceType::Cat as usize],
        0,
        "{spec}: {}",
        game.move_to_string(searched.mv)
    );
    assert_eq!(depths.is_empty(), searched.info.depth.is_none(), "{spec}");
    searched
}

#[test]
fn every_player_kind_takes_a_free_piece_and_says_what_it_saw() {
    use crate::protocol::aei_spec::centi_rabbits;
    let ab = takes_the_cat("alphabeta").info;
    assert_eq!(ab.depth, Some(1));
    assert!(ab.nodes.unwrap() > 0);
    assert!(centi_rabbits(ab.score.unwrap()) >= 150, "{ab:?}");
    let greedy = takes_the_cat("greedy:eval=material").info;
    assert_eq!(greedy.nodes, greedy.planned);
    assert!(centi_rabbits(greedy.score.unwrap()) >= 150, "{greedy:?}");
    let mcts = takes_the_cat("mcts:sims=600,eval=material").info;
    assert_eq!(mcts.nodes, Some(600));
    let tree = mcts.tree.unwrap();
    assert_eq!(tree.reused, 0);
    assert!(tree.best_visits > 0 && tree.best_value > 0.0, "{tree:?}");
}
