//! The reference oracle's text outputs (`scripts/oracles/arimaa_oracle.py`
//! `moves`, `moves --digest` and `steps`), produced by this engine so the two
//! can be compared with `diff`.

use super::movegen::MoveGen;
use super::notation::{self, board64, parse_step_token, position_line};
use super::position::Position;
use super::step::TurnState;
use crate::game::GameError;
use crate::util::legal_digest;

/// `<side> <board> <count> <fnv>`: the distinct result boards of a turn,
/// sorted, hashed as the oracle's `moves --digest` does.
pub fn moves_digest_line(gen: &mut MoveGen, pos: &Position) -> String {
    let boards = result_boards(gen, pos);
    let boards: Vec<String> = boards.into_iter().map(|(b, _)| b).collect();
    format!(
        "{} {} {}",
        position_line(pos),
        boards.len(),
        legal_digest(&boards)
    )
}

/// The oracle's full `moves` block for position number `k`.
pub fn moves_listing(gen: &mut MoveGen, pos: &Position, k: usize) -> String {
    let boards = result_boards(gen, pos);
    let mut out = format!(
        "position {k} {}\ncount {}\n",
        position_line(pos),
        boards.len()
    );
    for (board, steps) in boards {
        out.push_str(&board);
        out.push(' ');
        out.push_str(&steps);
        out.push('\n');
    }
    out.push_str("end\n");
    out
}

/// (result board, step notation) for every distinct move, sorted by board.
fn result_boards(gen: &mut MoveGen, pos: &Position) -> Vec<(String, String)> {
    let mut moves = Vec::new();
    gen.generate(pos, &mut moves);
    let mut rows: Vec<(String, String)> = moves
        .into_iter()
        .map(|mv| {
            let mut after = *pos;
            for s in mv.steps() {
                after.move_piece(s.from, s.to);
            }
            (board64(&after), notation::move_to_string(pos, mv))
        })
        .collect();
    rows.sort();
    rows
}

/// The oracle's `steps` block: the legal single steps after the partial
/// move `partial` (step tokens, capture tokens ignored) from the start of
/// `start`'s turn.
pub fn steps_listing(start: &Position, partial: &str, k: usize) -> Result<String, GameError> {
    let mut pos = *start;
    let mut state = TurnState::START;
    let mut played = Vec::new();
    for token in partial.split_whitespace() {
        if token.len() == 4 && token.ends_with('x') {
            continue;
        }
        let (piece, step) = parse_step_token(token)?;
        if pos.piece_at(step.from) != Some(piece) {
            return Err(GameError::BadMove {
                token: token.to_string(),
                why: format!(
                    "{} holds {}, not '{}'",
                    super::bitboard::square_name(step.from),
                    pos.piece_at(step.from)
                        .map_or("nothing".to_string(), |p| format!("'{}'", p.to_char())),
                    piece.to_char()
                ),
            });
        }
        let kind = pos
            .classify_step(&state, step)
            .map_err(|why| GameError::BadMove {
                token: token.to_string(),
                why: why.to_string(),
            })?;
        played.push(notation::step_token(&pos, step));
        let captured = pos.apply_step(&state, step, kind);
        state = captured.0;
        if let Some((sq, piece)) = captured.1 {
            played.push(format!(
                "{}{}x",
                piece.to_char(),
                super::bitboard::square_name(sq)
            ));
        }
        if state.steps_left == 0 {
            return Err(GameError::BadMove {
                token: partial.to_string(),
                why: "the partial move already used all 4 steps".into(),
            });
        }
    }
    let mut rows: Vec<(String, String, &'static str)> = pos
        .steps(&state)
        .into_iter()
        .map(|(step, kind)| {
            let mut after = pos;
            let mut note = notation::step_token(&pos, step);
            if let Some((sq, piece)) = after.move_piece(step.from, step.to) {
                note.push_str(&format!(
                    " {}{}x",
                    piece.to_char(),
                    super::bitboard::square_name(sq)
                ));
            }
            (note, board64(&after), kind.name())
        })
        .collect();
    rows.sort();
    let can_end = !played.is_empty() && state.can_end() && pos.board != start.board;
    let mut out = format!(
        "position {k} {} | {}\nsteps {} can_end_turn {}\n",
        position_line(start),
        played.join(" "),
        rows.len(),
        can_end as u8
    );
    for (note, board, kind) in rows {
        out.push_str(&format!("{note} {board} {kind}\n"));
    }
    out.push_str("end\n");
    Ok(out)
}
