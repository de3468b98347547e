use super::ArenaError;
use crate::game::{Game, Outcome};
use crate::search::Player;
use crate::util::SeededRng;

/// Plays one game from the start; returns the outcome and the moves.
pub fn play_game<G: Game>(
    first: &dyn Player<G>,
    second: &dyn Player<G>,
    index: usize,
    rng: &mut SeededRng,
) -> Result<(Outcome, Vec<G::Move>), ArenaError> {
    let mut state = G::new();
    let mut moves = Vec::new();
    let mut legal = Vec::new();
    let mut sessions = [first.session(), second.session()];
    loop {
        if let Some(o) = state.outcome() {
            return Ok((o, moves));
        }
        let (player, mover) = match state.side_to_move() {
            crate::game::Side::First => (first, 0),
            crate::game::Side::Second => (second, 1),
        };
        let mv = sessions[mover]
            .choose(&state, rng)
            .map_err(|source| ArenaError::Player {
                game: index,
                player: player.name(),
                source: Box::new(source),
            })?;
        state.legal_moves(&mut legal);
        if !legal.contains(&mv) {
            return Err(ArenaError::IllegalMove {
                game: index,
                player: player.name(),
                mv: state.move_to_string(mv),
            });
        }
        for s in &mut sessions {
            s.observe(&state, mv);
        }
        state.play(mv);
        moves.push(mv);
    }
}
