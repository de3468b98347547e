//! The `movelist` field, turn by turn: each label checked against the one
//! expected next, the `takeback` and `resign` pseudo-moves, empty turns at
//! the end.

use super::fail::Fail;
use super::reason;
use super::replay::Replay;
use crate::game::arimaa::notation::{parse_turn_label, turn_label};
use crate::game::Side;

/// The label of the `k`-th move after the setups (0 is `2g`).
pub fn move_label(k: usize) -> String {
    let side = if k.is_multiple_of(2) {
        Side::First
    } else {
        Side::Second
    };
    turn_label(2 + (k / 2) as u32, side)
}

fn next_label((n, side): (u32, Side)) -> (u32, Side) {
    match side {
        Side::First => (n, Side::Second),
        Side::Second => (n + 1, Side::First),
    }
}

/// Replays a `movelist` field. Returns the finished replay (both setups
/// played) or the first failure.
pub(super) fn replay_movelist(movelist: &str) -> Result<Replay, Fail> {
    let turns: Vec<Vec<&str>> = movelist
        .split("\\n")
        .map(|t| t.split_whitespace().collect())
        .collect();
    // Turns after the last one with steps may be empty or a bare label.
    let last_with_steps = turns.iter().rposition(|t| t.len() >= 2);
    let mut r = Replay::new();
    let mut resigned = false;
    let mut expected = r.expected();
    for (i, tokens) in turns.iter().enumerate() {
        let trailing = last_with_steps.is_none_or(|l| i > l);
        let Some(&label) = tokens.first() else {
            if trailing {
                continue;
            }
            return Err(Fail::new(
                reason::ILLEGAL_MOVE,
                None,
                None,
                format!(
                    "turn {} of the move list is empty, after {}",
                    i + 1,
                    turn_label(expected.0, expected.1)
                ),
            ));
        };
        let parsed = parse_turn_label(label)
            .map_err(|e| Fail::from_game_error(reason::BAD_TURN_LABEL, label, e))?;
        if parsed != expected {
            return Err(Fail::new(
                reason::BAD_TURN_LABEL,
                Some(label),
                Some(label),
                format!(
                    "expected turn {} here, found {label}",
                    turn_label(expected.0, expected.1)
                ),
            ));
        }
        let steps = &tokens[1..];
        if steps.is_empty() {
            if trailing {
                expected = next_label(expected);
                continue;
            }
            return Err(Fail::new(
                reason::ILLEGAL_MOVE,
                Some(label),
                None,
                "a turn with no steps before the end of the game".into(),
            ));
        }
        if resigned {
            return Err(Fail::new(
                reason::ILLEGAL_MOVE,
                Some(label),
                Some(&steps.join(" ")),
                "moves after a resignation".into(),
            ));
        }
        match steps {
            ["takeback"] => {
                expected = r.take_back().ok_or_else(|| {
                    Fail::new(
                        reason::ILLEGAL_MOVE,
                        Some(label),
                        Some("takeback"),
                        "nothing to take back".into(),
                    )
                })?;
            }
            ["resign"] => {
                if r.game.is_none() {
                    return Err(Fail::new(
                        reason::BAD_SETUP,
                        Some(label),
                        Some("resign"),
                        "resigned before both setups".into(),
                    ));
                }
                resigned = true;
                expected = next_label(expected);
            }
            _ => {
                r.play_turn(label, steps)?;
                expected = r.expected();
            }
        }
    }
    if r.game.is_none() {
        let missing = if r.gold.is_none() { "gold" } else { "silver" };
        return Err(Fail::new(
            reason::BAD_SETUP,
            None,
            None,
            format!("the move list has no setup for {missing}"),
        ));
    }
    Ok(r)
}
