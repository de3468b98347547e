use super::{ArenaError, GameStart};
use crate::game::{Game, Outcome, Side};
use crate::search::Player;
use crate::util::SeededRng;

/// One game as played: where it started, how it ended and its moves.
#[derive(Clone, Debug)]
pub struct PlayedGame<G: Game> {
    pub start: G,
    /// `None` when the game was stopped at the ply limit unfinished.
    pub outcome: Option<Outcome>,
    pub moves: Vec<G::Move>,
}

/// Plays one game from the standard start; returns the outcome and the moves.
pub fn play_game<G: Game>(
    first: &dyn Player<G>,
    second: &dyn Player<G>,
    index: usize,
    rng: &mut SeededRng,
) -> Result<(Outcome, Vec<G::Move>), ArenaError> {
    let g = play_game_from(G::new(), first, second, index, rng, None)?;
    Ok((g.outcome.unwrap_or(Outcome::Draw), g.moves))
}

/// Plays one game from `start` through a session of each player, checking
/// every move; stops unfinished after `max_plies` moves if given. `index`
/// names the game in errors.
pub fn play_game_from<G: Game>(
    start: impl Into<GameStart<G>>,
    first: &dyn Player<G>,
    second: &dyn Player<G>,
    index: usize,
    rng: &mut SeededRng,
    max_plies: Option<usize>,
) -> Result<PlayedGame<G>, ArenaError> {
    let start = start.into();
    let mut sessions = [first.session(), second.session()];
    let mut state = start.root.clone();
    for &mv in &start.opening {
        for s in &mut sessions {
            s.observe(&state, mv);
        }
        state.play(mv);
    }
    let start = state.clone();
    let mut moves = Vec::new();
    let mut legal = Vec::new();
    loop {
        if let Some(o) = state.outcome() {
            return Ok(PlayedGame {
                start,
                outcome: Some(o),
                moves,
            });
        }
        if max_plies.is_some_and(|m| moves.len() >= m) {
            return Ok(PlayedGame {
                start,
                outcome: None,
                moves,
            });
        }
        let (player, mover) = match state.side_to_move() {
            Side::First => (first, 0),
            Side::Second => (second, 1),
        };
        let mv = sessions[mover]
            .choose(&state, rng)
            .map_err(|source| ArenaError::Player {
                game: index,
                player: player.name(),
                error: Box::new(source),
            })?;
        if !state.is_legal(mv, &mut legal) {
            return Err(ArenaError::IllegalMove {
                game: index,
                player: player.name(),
                mv: state.describe_move(mv),
            });
        }
        for s in &mut sessions {
            s.observe(&state, mv);
        }
        state.play(mv);
        moves.push(mv);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::arimaa::random_steps::random_steps_move;
    use crate::game::{Arimaa, TicTacToe};
    use crate::search::{Budget, Chosen, RandomPlayer};
    use crate::util::seeded_rng;

    /// Always plays the same move.
    struct Fixed<M>(M);

    impl<G: Game> Player<G> for Fixed<G::Move> {
        fn name(&self) -> String {
            "fixed".into()
        }
        fn choose_within(&self, _: &G, _: &Budget, _: &mut SeededRng) -> Chosen<G> {
            Ok(self.0)
        }
    }

    #[test]
    fn arimaa_accepts_other_step_orders_and_refuses_illegal_moves() {
        let g = Arimaa::new();
        let mut rng = seeded_rng(2, 0);
        let mut scratch = Vec::new();
        let mut listed = Vec::new();
        g.legal_moves(&mut listed);
        let mut outside = 0;
        for _ in 0..200 {
            let mv = random_steps_move(&g, 0.1, &mut rng).unwrap();
            assert!(g.is_legal(mv, &mut scratch));
            outside += usize::from(!listed.contains(&mv));
        }
        assert!(outside > 0, "every random-steps move was a listed one");
        // Gold's move again on silver's turn: its pieces have gone.
        let mv = listed[0];
        let mut after = g.clone();
        after.play(mv);
        assert!(!after.is_legal(mv, &mut scratch));
        let e = play_game_from(after, &Fixed(mv), &Fixed(mv), 7, &mut rng, None).unwrap_err();
        assert!(matches!(&e, ArenaError::IllegalMove { game: 7, .. }), "{e}");
        assert!(e.to_string().contains("illegal move"), "{e}");
    }

    #[test]
    fn an_occupied_square_is_refused_and_a_ply_limit_leaves_the_game_unfinished() {
        let mut rng = seeded_rng(1, 0);
        let g = TicTacToe::new();
        let b2 = g.parse_move("b2").unwrap();
        let e = play_game_from(g, &Fixed(b2), &Fixed(b2), 0, &mut rng, None).unwrap_err();
        assert!(e.to_string().contains("illegal move b2"), "{e}");
        let g = play_game_from(g, &RandomPlayer, &RandomPlayer, 0, &mut rng, Some(3)).unwrap();
        assert_eq!(g.outcome, None);
        assert_eq!(g.moves.len(), 3);
    }

    /// Like OpenSpiel's bot: a session that rebuilds the position from the
    /// moves it was told since the root, and refuses a position it cannot.
    struct Replaying;

    struct ReplayingSession {
        position: TicTacToe,
    }

    impl Player<TicTacToe> for Replaying {
        fn name(&self) -> String {
            "replaying".into()
        }
        fn choose_within(&self, _: &TicTacToe, _: &Budget, _: &mut SeededRng) -> Chosen<TicTacToe> {
            unreachable!("played through its session")
        }
        fn session(&self) -> Box<dyn crate::search::GameSession<TicTacToe> + '_> {
            Box::new(ReplayingSession {
                position: TicTacToe::new(),
            })
        }
    }

    impl crate::search::GameSession<TicTacToe> for ReplayingSession {
        fn choose_within(
            &mut self,
            state: &TicTacToe,
            _: &Budget,
            _: &mut SeededRng,
        ) -> Chosen<TicTacToe> {
            if state.to_text() != self.position.to_text() {
                return Err(crate::search::SearchError::Bridge {
                    player: "replaying".into(),
                    why: format!(
                        "told {} but asked {}",
                        self.position.to_text(),
                        state.to_text()
                    ),
                });
            }
            let mut legal = Vec::new();
            state.legal_moves(&mut legal);
            Ok(legal[0])
        }
        fn observe(&mut self, before: &TicTacToe, mv: <TicTacToe as Game>::Move) {
            assert_eq!(before.to_text(), self.position.to_text());
            self.position.play(mv);
        }
    }

    #[test]
    fn players_are_told_the_opening_before_they_move() {
        let mut rng = seeded_rng(4, 0);
        let root = TicTacToe::new();
        let opening: Vec<_> = ["a1", "b2", "c3"]
            .iter()
            .map(|m| root.parse_move(m).unwrap())
            .collect();
        let start = GameStart {
            root,
            opening: opening.clone(),
        };
        let g = play_game_from(start.clone(), &Replaying, &Replaying, 0, &mut rng, None).unwrap();
        // The game record starts after the opening.
        assert_eq!(g.start.to_text(), start.position().to_text());
        assert_eq!(g.start.ply(), 3);
        assert!(g.outcome.is_some());
        // Without being told, the same session refuses the position.
        let mut session = Replaying.session();
        let e = session.choose(&start.position(), &mut rng).unwrap_err();
        assert!(e.to_string().contains("told"), "{e}");
    }
}
