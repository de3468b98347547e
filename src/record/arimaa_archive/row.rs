//! One data row: the filters, the replay of its move list, and the
//! recorded result checked against the board's.

use super::columns::{field, parse_rating, parse_winner, Columns};
use super::fail::{outcome_words, Fail};
use super::movelist::{move_label, replay_movelist};
use super::{reason, ImportOptions, SkipReport};
use crate::game::arimaa::{Arimaa, Termination};
use crate::game::{Game, Outcome};
use crate::record::game_record::{GameRecord, PerSide};

pub(super) enum RowResult {
    Kept(Box<GameRecord>),
    Filtered(&'static str),
    Skipped(SkipReport),
}

pub(super) fn process_row(
    fields: &[&str],
    cols: &Columns,
    source: &str,
    opts: &ImportOptions,
) -> RowResult {
    let id = field(fields, cols.id).to_string();
    let marked_corrupt = cols.corrupt.is_some_and(|c| field(fields, c) == "1");
    let skip = |f: Fail| {
        let mut detail = f.detail;
        if marked_corrupt {
            detail.push_str(" (the archive marks this game corrupt)");
        }
        RowResult::Skipped(SkipReport {
            source: source.to_string(),
            game_id: id.clone(),
            turn: f.turn,
            token: f.token,
            reason: f.reason.to_string(),
            detail,
        })
    };
    if fields.len() != cols.count {
        return skip(Fail::new(
            reason::MALFORMED_ROW,
            None,
            None,
            format!(
                "{} tab-separated fields, the header has {}",
                fields.len(),
                cols.count
            ),
        ));
    }
    let ratings = PerSide::new(
        parse_rating(field(fields, cols.wrating)),
        parse_rating(field(fields, cols.brating)),
    );
    let term_code = field(fields, cols.termination);
    let recorded_term = Termination::from_code(term_code);
    if let Some(min) = opts.min_rating {
        if !matches!((ratings.first, ratings.second), (Some(a), Some(b)) if a >= min && b >= min) {
            return RowResult::Filtered(reason::BELOW_MIN_RATING);
        }
    }
    if let Some(keep) = &opts.terminations {
        if !keep.contains(&recorded_term) {
            return RowResult::Filtered(reason::TERMINATION_NOT_KEPT);
        }
    }
    let mut r = match replay_movelist(field(fields, cols.movelist)) {
        Ok(r) => r,
        Err(f) => return skip(f),
    };
    let recorded_winner = parse_winner(field(fields, cols.result));
    let game = r.game.as_mut().expect("replay_movelist checks the setups");
    let last_label = r
        .moves
        .len()
        .checked_sub(1)
        .map(move_label)
        .unwrap_or_else(|| "the setups".into());
    let engine = game.result();
    let (winner, termination) = if recorded_term.is_on_board() {
        match engine {
            Some((Outcome::Win(w), t)) if t == recorded_term && Some(w) == recorded_winner => {
                (Some(w), t)
            }
            _ => {
                return skip(Fail::new(
                    reason::CONTRADICTS_RULES,
                    Some(&last_label),
                    None,
                    format!(
                        "the record says {} by {} (result '{}', termination '{}'), the board after {last_label} shows {}",
                        outcome_words(recorded_winner.map(Outcome::Win)),
                        recorded_term.name(),
                        field(fields, cols.result),
                        term_code,
                        match engine {
                            Some((o, t)) => format!("{} by {}", outcome_words(Some(o)), t.name()),
                            None => "a game still in progress".into(),
                        }
                    ),
                ))
            }
        }
    } else {
        if let Some((o, t)) = engine {
            return skip(Fail::new(
                reason::CONTRADICTS_RULES,
                Some(&last_label),
                None,
                format!(
                    "the record says {} by {} (termination '{term_code}'), but the board after {last_label} already shows {} by {}",
                    outcome_words(recorded_winner.map(Outcome::Win)),
                    recorded_term.name(),
                    outcome_words(Some(o)),
                    t.name()
                ),
            ));
        }
        if let Some(w) = recorded_winner {
            game.set_result(Outcome::Win(w), recorded_term);
        }
        (recorded_winner, recorded_term)
    };
    let opt_field = |c: Option<usize>| c.map(|i| field(fields, i)).filter(|s| !s.is_empty());
    let player_types = match (opt_field(cols.wtype), opt_field(cols.btype)) {
        (Some(w), Some(b)) => Some(PerSide::new(w.to_string(), b.to_string())),
        _ => None,
    };
    let setups = vec![
        r.gold.as_ref().expect("setup").to_notation(),
        r.silver.as_ref().expect("setup").to_notation(),
    ];
    let plies = r.moves.len() as u32;
    RowResult::Kept(Box::new(GameRecord {
        game: Arimaa::NAME.to_string(),
        id,
        source: source.to_string(),
        event: opt_field(cols.event).unwrap_or("").to_string(),
        players: PerSide::new(
            field(fields, cols.wusername).to_string(),
            field(fields, cols.busername).to_string(),
        ),
        ratings,
        player_types,
        setups,
        moves: r.moves,
        result: winner,
        termination: termination.name().to_string(),
        plies,
        rated: opt_field(cols.rated).and_then(|s| match s {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        }),
        start_time: opt_field(cols.startts).and_then(|s| s.parse().ok()),
        board_size: None,
        explored: Vec::new(),
    }))
}
