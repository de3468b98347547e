use crate::dataset::PositionRow;
use crate::encode::Encoder;
use crate::game::Game;

/// One row per position of a finished game, the final position included
/// (its `move_played` is `None`). `states[k]` is the position before
/// `moves[k]`; `states` has one more entry than `moves`.
pub fn game_rows<G: Game>(
    game_id: &str,
    states: &[G],
    moves: &[G::Move],
    encoder: &dyn Encoder<G>,
    source: &str,
) -> Vec<PositionRow> {
    let Some(outcome) = states.last().and_then(|s| s.outcome()) else {
        return Vec::new();
    };
    let spec = encoder.spec();
    let n = spec.shape.iter().product::<usize>();
    let last = states.len() - 1;
    states
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let mut planes = vec![0i8; n];
            let mut globals = vec![0f32; spec.globals];
            encoder.encode(s, &mut planes, &mut globals);
            PositionRow {
                game_id: game_id.to_string(),
                ply: k as u32,
                plies_to_end: (last - k) as u32,
                side_to_move: s.side_to_move().index() as u8,
                position: s.to_text(),
                planes,
                globals,
                label: outcome.score_for(s.side_to_move()),
                move_played: moves.get(k).map(|&m| s.move_to_string(m)),
                source: source.to_string(),
                termination: Some(match outcome {
                    crate::game::Outcome::Draw => "draw".into(),
                    crate::game::Outcome::Win(_) => "win".into(),
                }),
                white_rating: None,
                black_rating: None,
                policy: None,
            }
        })
        .collect()
}
