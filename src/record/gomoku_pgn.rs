//! PlayOK Gomoku games (PGN-like text) to [`GameRecord`]s.
//!
//! A game is a block of `[Tag "value"]` headers (`Black`, `White`,
//! `BlackElo`, `WhiteElo`, `Result`, `Date`, `Time`, `GameType`, ...)
//! followed by numbered moves such as `1. h13 i13 2. j13 white 3. -- h12
//! ... 1-0`, on 15x15 with squares `a1`..`o15` (rank 1 at the bottom, the
//! same notation as [`Gomoku`]).
//!
//! GameType `61,15` has a swap opening: tokens fill alternating slots (the
//! PGN's Black player, then White), and besides stones a slot may hold a
//! colour choice (`black` / `white`: the slot's player takes that colour
//! from now on, the other player the other one) or a pass `--`. Each stone
//! gets the colour its slot's player has at that moment; a game whose
//! stones then alternate Black, White, ... from the first one is imported,
//! the others (a pass in mid-game: two stones of one colour in a row) are
//! listed in [`PlayokImport::skipped`]. The record keeps:
//!
//! * `moves`: the stones only (every one checked legal by replaying it with
//!   [`Gomoku`]); `setups`: the choice and pass tokens in order (`["white", "--"]`,
//!   `["black"]` or empty);
//! * `players` / `ratings`: `first` = whoever plays the black stones after
//!   the swap (the PGN's White player when the swap tokens are odd in
//!   number);
//! * `result`: the winner by stone colour. The PGN result refers to the
//!   slots, so it is flipped together with the players. When the last
//!   position has a five, its colour must agree (else the game is refused);
//! * `termination`: `five`, `draw`, or `resignation_or_time` (a decided
//!   game without a five; the file does not say which);
//! * `id`: `FILE_STEM:N` (N = 1-based game number in the file), `source`:
//!   `FILE:LINE` of the game's first header, `start_time` from `Date` and
//!   `Time` (taken as UTC).

use super::{GameRecord, PerSide, RecordError};
use crate::game::{Game, Gomoku, Outcome, Side};
use crate::util::text::{read_text, strip_bom};
use std::collections::HashMap;
use std::path::Path;

/// The games of one file: those that replay as Gomoku, and the others
/// (`id: why`), which have a pass after the opening (two stones of one
/// colour in a row) and so cannot be played by [`Gomoku`].
#[derive(Debug, Default)]
pub struct PlayokImport {
    pub records: Vec<GameRecord>,
    pub skipped: Vec<String>,
}

/// Reads every game of a PlayOK Gomoku file.
pub fn import_playok_gomoku(path: &Path) -> Result<PlayokImport, RecordError> {
    let text = read_text(path).map_err(RecordError::io(path))?;
    parse_playok_gomoku(&text, path)
}

/// Parses the text of a PlayOK Gomoku file; `path` names it in errors and
/// in the records' `id` and `source`.
pub fn parse_playok_gomoku(text: &str, path: &Path) -> Result<PlayokImport, RecordError> {
    let mut out = PlayokImport::default();
    let mut number = 0;
    let mut headers: HashMap<String, String> = HashMap::new();
    let mut body = String::new();
    let mut start_line = 0;
    for (i, line) in strip_bom(text).lines().enumerate() {
        let t = line.trim();
        if t.starts_with('[') {
            if out.add_game(&headers, &body, path, start_line, &mut number)? {
                headers.clear();
                body.clear();
            }
            if headers.is_empty() {
                start_line = i + 1;
            }
            if let Some((k, v)) = parse_tag(t) {
                headers.insert(k, v);
            }
        } else if !t.is_empty() {
            body.push_str(t);
            body.push(' ');
        }
    }
    out.add_game(&headers, &body, path, start_line, &mut number)?;
    Ok(out)
}

impl PlayokImport {
    /// Builds the game of `headers` and `body` (starting at line
    /// `start_line`) as game `number + 1`, if `body` holds any moves, and
    /// keeps or lists it; says whether there was a game.
    fn add_game(
        &mut self,
        headers: &HashMap<String, String>,
        body: &str,
        path: &Path,
        start_line: usize,
        number: &mut usize,
    ) -> Result<bool, RecordError> {
        if body.trim().is_empty() {
            return Ok(false);
        }
        *number += 1;
        let built = build(headers, body, path, start_line, *number)?;
        self.add(built, path, *number);
        Ok(true)
    }

    fn add(&mut self, built: Result<GameRecord, PlayokSkip>, path: &Path, number: usize) {
        match built {
            Ok(rec) => self.records.push(rec),
            Err(why) => {
                let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                self.skipped.push(format!("{stem}:{number}: {why}"));
            }
        }
    }
}

/// Why a game of the file is skipped (listed in [`PlayokImport::skipped`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlayokSkip {
    /// Gomoku records alternate stones; a pass (or any other gap) does not fit.
    #[error(
        "stone {stone} ({token}) is not the next alternating stone (a pass after the opening?)"
    )]
    NotAlternating { stone: usize, token: String },
}

fn parse_tag(t: &str) -> Option<(String, String)> {
    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
    let (k, v) = inner.split_once(' ')?;
    Some((k.to_string(), v.trim().trim_matches('"').to_string()))
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn start_time(date: Option<&String>, time: Option<&String>) -> Option<i64> {
    let d: Vec<i64> = date?
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let t: Vec<i64> = time?
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    if d.len() != 3 || t.len() != 3 {
        return None;
    }
    // A date or time out of range is unknown, not a wrapped-around number.
    let in_range = (0..=9999).contains(&d[0])
        && (1..=12).contains(&d[1])
        && (1..=31).contains(&d[2])
        && (0..24).contains(&t[0])
        && (0..60).contains(&t[1])
        && (0..=60).contains(&t[2]);
    if !in_range {
        return None;
    }
    Some(days_from_civil(d[0], d[1], d[2]) * 86_400 + t[0] * 3600 + t[1] * 60 + t[2])
}

fn build(
    headers: &HashMap<String, String>,
    body: &str,
    path: &Path,
    line: usize,
    number: usize,
) -> Result<Result<GameRecord, PlayokSkip>, RecordError> {
    let parse_err = |why: String| RecordError::Parse {
        path: path.to_path_buf(),
        line,
        why,
    };
    let mut g = Gomoku::new();
    let mut moves = Vec::new();
    let mut setups = Vec::new();
    let mut pgn_result = None;
    // Tokens fill alternating slots, Black slot first. `pb` is the stone
    // colour the Black-slot player has now; a colour choice sets it.
    let mut pb = Side::First;
    let mut slot = 0usize;
    for tok in body.split_whitespace() {
        if tok.ends_with('.') && tok[..tok.len() - 1].chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let slot_is_black = slot.is_multiple_of(2);
        match tok {
            "white" | "black" => {
                let chosen = if tok == "black" {
                    Side::First
                } else {
                    Side::Second
                };
                pb = if slot_is_black {
                    chosen
                } else {
                    chosen.other()
                };
                setups.push(tok.to_string());
            }
            "--" => setups.push(tok.to_string()),
            "1-0" | "0-1" | "1/2-1/2" | "*" => {
                pgn_result = Some(tok);
                continue;
            }
            _ => {
                let colour = if slot_is_black { pb } else { pb.other() };
                if colour != g.side_to_move() || g.outcome().is_some() {
                    return Ok(Err(PlayokSkip::NotAlternating {
                        stone: moves.len() + 1,
                        token: tok.to_string(),
                    }));
                }
                let mv = g.parse_move(tok).map_err(|e| RecordError::BadMove {
                    path: path.to_path_buf(),
                    line,
                    ply: moves.len(),
                    token: tok.to_string(),
                    why: e.to_string(),
                })?;
                g.play(mv);
                moves.push(tok.to_string());
            }
        }
        slot += 1;
    }
    let result_text = pgn_result
        .or(headers.get("Result").map(|s| s.as_str()))
        .unwrap_or("*");
    // The players swapped colours when the Black-slot player ends on White.
    let swapped = pb == Side::Second;
    let slot_winner = match result_text {
        "1-0" => Some(Side::First),
        "0-1" => Some(Side::Second),
        _ => None,
    };
    let result = slot_winner.map(|s| if swapped { s.other() } else { s });
    let termination = match g.outcome() {
        Some(Outcome::Win(w)) => {
            if result != Some(w) {
                return Err(parse_err(format!(
                    "the {} stones made five but the result is {result_text}",
                    if w == Side::First { "black" } else { "white" }
                )));
            }
            "five"
        }
        Some(Outcome::Draw) => "draw",
        None if result.is_some() => "resignation_or_time",
        None if result_text == "1/2-1/2" => "draw",
        None => "unfinished",
    };
    let header = |k: &str| headers.get(k).cloned().unwrap_or_default();
    let elo = |k: &str| headers.get(k).and_then(|v| v.parse::<i32>().ok());
    let (mut players, mut ratings) = (
        PerSide::new(header("Black"), header("White")),
        PerSide::new(elo("BlackElo"), elo("WhiteElo")),
    );
    if swapped {
        players = PerSide::new(players.second, players.first);
        ratings = PerSide::new(ratings.second, ratings.first);
    }
    let event = header("Event");
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Ok(GameRecord {
        game: Gomoku::NAME.into(),
        id: format!("{stem}:{number}"),
        source: format!("{file}:{line}"),
        event: if event == "?" { String::new() } else { event },
        players,
        ratings,
        player_types: None,
        setups,
        plies: moves.len() as u32,
        moves,
        result,
        termination: termination.into(),
        rated: None,
        start_time: start_time(headers.get("Date"), headers.get("Time")),
        board_size: None,
        explored: Vec::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"[Event "?"]
[Site "PlayOK"]
[Date "2021.11.07"]
[Time "07:55:59"]
[Black "alice"]
[White "bob"]
[Result "0-1"]
[GameType "61,15"]
[BlackElo "2000"]
[WhiteElo "1500"]

1. a1 a5 2. b1 black 3. b5 c1 4. c5 d1 5. d5 e1 0-1

[Event "?"]
[Black "carol"]
[White "dave"]
[Result "1-0"]
[GameType "61,15"]

1. a1 b1 2. a2 white 3. -- b2 4. a3 b3 5. a4 b4 6. a5 1-0
"#;

    #[test]
    fn swap_tokens_and_colours() {
        let imp = parse_playok_gomoku(TWO, Path::new("x/sample.pgn")).unwrap();
        assert!(imp.skipped.is_empty());
        let recs = imp.records;
        assert_eq!(recs.len(), 2);
        let a = &recs[0];
        assert_eq!(a.setups, vec!["black"]);
        assert_eq!(a.moves.len(), 9);
        // After `black` bob (the PGN's White) plays the black stones, so
        // his "0-1" is a win for the black stones a1..e1.
        assert_eq!(a.players.first, "bob");
        assert_eq!(a.result, Some(Side::First));
        assert_eq!(a.termination, "five");
        assert_eq!(a.ratings.first, Some(1500));
        assert_eq!(a.id, "sample:1");
        assert_eq!(a.source, "sample.pgn:1");
        assert_eq!(a.start_time, Some(1_636_271_759));
        let b = &recs[1];
        assert_eq!(b.setups, vec!["white", "--"]);
        assert_eq!(b.players.first, "carol");
        assert_eq!(
            b.moves,
            vec!["a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4", "a5"]
        );
        assert_eq!(b.result, Some(Side::First));
        assert_eq!(b.termination, "five");
        assert_eq!(b.source, "sample.pgn:14");
        for r in &recs {
            r.check().unwrap();
        }
    }

    #[test]
    fn bad_square_names_the_token() {
        let text = "[Black \"a\"]\n[White \"b\"]\n\n1. h8 z9 1-0\n";
        let e = parse_playok_gomoku(text, Path::new("bad.pgn")).unwrap_err();
        assert!(e.to_string().contains("'z9'"), "{e}");
    }
}
