//! Behaviour of the whole search: determinism, exact visit counts under
//! many threads, subtree reuse, priors, errors, and strength.

use super::*;
use crate::game::{Amazons, Game, TicTacToe, TttMove};
use crate::infer::{Evaluation, Evaluator, InferError};
use crate::search::RandomPlayer;
use crate::search::{GameSession, Player};
use crate::util::seeded_rng;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn visits<G: crate::games::GameSupport>(root: &Node<G::Move>) -> Vec<u32> {
    root.children()
        .unwrap()
        .iter()
        .map(|e| e.visits())
        .collect()
}

#[test]
fn one_thread_is_a_function_of_the_seed() {
    let g = TicTacToe::new();
    let cfg: MctsConfig = "sims=300".parse().unwrap();
    let run = |seed| {
        let root = Node::default();
        run_search(&root, &g, &cfg, None, seed, None).unwrap();
        (visits::<TicTacToe>(&root), best_move(&root))
    };
    assert_eq!(run(5), run(5));
    assert_ne!(run(5).0, run(6).0);
}

#[test]
fn many_threads_lose_no_visit_and_leave_no_virtual_loss() {
    let g = TicTacToe::new();
    for threads in [2, 8, 32] {
        let cfg: MctsConfig = format!("sims=2000,threads={threads}").parse().unwrap();
        let root = Node::default();
        let stats = run_search(&root, &g, &cfg, None, 1, None).unwrap();
        assert_eq!(stats.simulations, 2000);
        assert_eq!(root.visits(), 2000, "threads {threads}");
        let children = root.children().unwrap();
        // Every simulation but those that valued the root itself went into
        // a child; threads that found the root unexpanded at the same time
        // each valued it (only one expansion is kept).
        let below: u32 = children.iter().map(|e| e.visits()).sum();
        assert!(
            (2000 - threads as u32..=2000 - 1).contains(&below),
            "threads {threads}: {below} visits below the root"
        );
        fn no_flight(n: &Node<TttMove>) -> bool {
            n.in_flight() == 0
                && n.children()
                    .is_none_or(|c| c.iter().filter_map(|e| e.node()).all(no_flight))
        }
        assert!(no_flight(&root));
    }
}

#[test]
fn finds_the_win_and_the_only_defence() {
    let player = MctsPlayer::<TicTacToe>::new("sims=2000".parse().unwrap(), None).unwrap();
    let mut rng = seeded_rng(2, 0);
    // o to move must block c1 (x has a1, b1).
    let mut g = TicTacToe::new();
    for m in ["a1", "b2", "b1"] {
        g.play_str(m).unwrap();
    }
    let mv = player.choose(&g, &mut rng).unwrap();
    assert_eq!(g.move_to_string(mv), "c1");
}

#[test]
fn a_session_reuses_the_subtree_of_the_position_reached() {
    let player = MctsPlayer::<TicTacToe>::new("sims=500".parse().unwrap(), None).unwrap();
    let mut session = player.game_session();
    let mut rng = seeded_rng(3, 0);
    let mut g = TicTacToe::new();
    let mine = session.choose(&g, &mut rng).unwrap();
    session.observe(&g, mine);
    g.play(mine);
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    let reply = legal[0];
    session.observe(&g, reply);
    g.play(reply);
    let kept = session.reused_visits(&g);
    assert!(kept > 0, "no visits kept");
    session.choose(&g, &mut rng).unwrap();
    let stats = player.last_stats().unwrap();
    assert_eq!(stats.simulations, 500);
    assert_eq!(stats.root_visits, 500 + kept as u64);
    // With reuse off the tree starts empty.
    let off = MctsPlayer::<TicTacToe>::new("sims=500,reuse=off".parse().unwrap(), None).unwrap();
    let mut s = off.game_session();
    let g0 = TicTacToe::new();
    let m = s.choose(&g0, &mut rng).unwrap();
    s.observe(&g0, m);
    let mut g1 = g0;
    g1.play(m);
    assert_eq!(s.reused_visits(&g1), 0);
    g1.legal_moves(&mut legal);
    s.observe(&g1, legal[0]);
    g1.play(legal[0]);
    s.choose(&g1, &mut rng).unwrap();
    assert_eq!(off.last_stats().unwrap().root_visits, 500);
}

/// A value of 0 and a policy that puts all its weight on one point.
struct Pointing(usize, AtomicUsize);

impl Evaluator<TicTacToe> for Pointing {
    fn evaluate(&self, states: &[TicTacToe]) -> Result<Vec<f32>, InferError> {
        Ok(vec![0.0; states.len()])
    }
    fn evaluate_full(&self, states: &[TicTacToe]) -> Result<Vec<Evaluation>, InferError> {
        self.1.fetch_add(states.len(), Ordering::Relaxed);
        let mut policy = vec![-20.0; 9];
        policy[self.0] = 20.0;
        Ok(states
            .iter()
            .map(|_| Evaluation {
                value: 0.0,
                policy: Some(policy.clone()),
            })
            .collect())
    }
    fn has_policy(&self) -> bool {
        true
    }
    fn name(&self) -> String {
        "pointing".into()
    }
}

#[test]
fn puct_follows_the_policy() {
    let eval = Arc::new(Pointing(7, AtomicUsize::new(0)));
    let cfg: MctsConfig = "sims=50,eval=pointing".parse().unwrap();
    let root = Node::default();
    let stats = run_search(&root, &TicTacToe::new(), &cfg, Some(eval.as_ref()), 1, None).unwrap();
    assert_eq!(best_move(&root), Some(TttMove(7)));
    let on_7 = root
        .children()
        .unwrap()
        .iter()
        .find(|e| e.mv == TttMove(7))
        .unwrap();
    assert!(
        on_7.prior > 0.99 && on_7.visits() >= 40,
        "{}",
        on_7.visits()
    );
    assert_eq!(stats.evaluations as usize, eval.1.load(Ordering::Relaxed));
}

struct Failing;

impl Evaluator<TicTacToe> for Failing {
    fn evaluate(&self, _: &[TicTacToe]) -> Result<Vec<f32>, InferError> {
        Err(InferError::Other("device lost".into()))
    }
    fn name(&self) -> String {
        "failing".into()
    }
}

#[test]
fn an_evaluator_error_ends_the_search_with_that_error() {
    for threads in [1, 8] {
        let cfg: MctsConfig = format!("sims=100,threads={threads},eval=failing")
            .parse()
            .unwrap();
        let root = Node::default();
        let err = run_search(&root, &TicTacToe::new(), &cfg, Some(&Failing), 1, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("device lost"), "{err}");
    }
}

/// Plays `games` games of `a` against uniform random moves, colours
/// alternating; returns (wins, draws, losses) of `a`.
fn against_random<G: crate::games::GameSupport>(
    start: G,
    a: &dyn Player<G>,
    games: u64,
) -> (u32, u32, u32) {
    let mut wdl = (0, 0, 0);
    for i in 0..games {
        let mut rng = seeded_rng(11, i);
        let mut g = start.clone();
        let a_side = if i % 2 == 0 {
            g.side_to_move()
        } else {
            g.side_to_move().other()
        };
        let mut session = a.session();
        while g.outcome().is_none() {
            let mv = if g.side_to_move() == a_side {
                session.choose(&g, &mut rng).unwrap()
            } else {
                RandomPlayer.choose(&g, &mut rng).unwrap()
            };
            session.observe(&g, mv);
            g.play(mv);
        }
        match g.outcome().unwrap() {
            crate::game::Outcome::Win(w) if w == a_side => wdl.0 += 1,
            crate::game::Outcome::Draw => wdl.1 += 1,
            _ => wdl.2 += 1,
        }
    }
    wdl
}

#[test]
fn beats_random_play() {
    let ttt = MctsPlayer::<TicTacToe>::new("sims=300".parse().unwrap(), None).unwrap();
    let (w, _, l) = against_random(TicTacToe::new(), &ttt, 20);
    assert_eq!(l, 0);
    assert!(w >= 14, "{w} wins");
    let amazons = MctsPlayer::<Amazons>::new("sims=200,threads=2".parse().unwrap(), None).unwrap();
    let (w, _, _) = against_random(Amazons::with_size(6).unwrap(), &amazons, 6);
    assert!(w >= 5, "{w} wins of 6");
}

#[test]
fn decisive_moves_are_found_with_few_simulations() {
    use crate::game::{Outcome, Pentago};
    use rand::seq::IndexedRandom;
    // Random Pentago games up to a position where few of the 100+ moves
    // win at once.
    let winning = |g: &Pentago| {
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let me = g.side_to_move();
        let n = moves.len();
        let wins = moves
            .into_iter()
            .filter(|&m| {
                let mut next = *g;
                next.play(m);
                next.outcome() == Some(Outcome::Win(me))
            })
            .count();
        (wins, n)
    };
    let mut rng = seeded_rng(11, 0);
    let mut found = Vec::new();
    while found.len() < 5 {
        let mut g = Pentago::new();
        let mut moves = Vec::new();
        while g.outcome().is_none() {
            let (w, n) = winning(&g);
            if w > 0 && w * 16 <= n {
                found.push(g);
                break;
            }
            g.legal_moves(&mut moves);
            g.play(*moves.choose(&mut rng).unwrap());
        }
    }
    let wins = |g: &Pentago, cfg: &MctsConfig, seed: u64| {
        let root = Node::default();
        run_search(&root, g, cfg, None, seed, None).unwrap();
        let mut after = *g;
        after.play(best_move(&root).unwrap());
        after.outcome() == Some(Outcome::Win(g.side_to_move()))
    };
    let plain: MctsConfig = "sims=8".parse().unwrap();
    let decisive: MctsConfig = "sims=8,decisive=on".parse().unwrap();
    assert_eq!(decisive.to_string(), "mcts:sims=8,decisive=on");
    let (mut with, mut without) = (0, 0);
    for g in &found {
        for seed in 0..4 {
            with += usize::from(wins(g, &decisive, seed));
            without += usize::from(wins(g, &plain, seed));
        }
    }
    assert_eq!(with, 20);
    // Eight simulations over 100+ moves rarely reach a win without it.
    assert!(without < 20, "{without}");
}

use crate::game::test_support::{double_turns_won, DoubleTurns};

#[test]
fn values_are_backed_up_to_whoever_moved_when_one_side_moves_twice() {
    let cfg: MctsConfig = "sims=4000".parse().unwrap();
    let mut checked = 0;
    for left in 3..=14 {
        for plies_left in [1, 2] {
            let g = DoubleTurns {
                left,
                plies_left,
                ..DoubleTurns::new()
            };
            let winning: Vec<u32> = [1, 2]
                .into_iter()
                .filter(|&take| {
                    let mut next = g;
                    next.play(take);
                    next.outcome().is_some()
                        || (next.side_to_move() == g.side_to_move()) == double_turns_won(&next)
                })
                .collect();
            if winning.len() != 1 {
                continue; // both win or both lose: any choice is right
            }
            let root = Node::default();
            run_search(&root, &g, &cfg, None, 7, None).unwrap();
            assert_eq!(best_move(&root), Some(winning[0]), "{g:?}");
            checked += 1;
        }
    }
    assert!(checked >= 6, "{checked} positions with one winning move");
}
