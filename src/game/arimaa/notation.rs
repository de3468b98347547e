//! Arimaa notation both ways: steps (`Ed2n`), capture tokens (`Dc3x`), whole
//! moves, setups (`Ra1 Rb1 ...`), turn labels (`12g`, `12s`, and the old
//! `12w`/`12b`), the 64-character board (rank 8 first) and the long diagram.

use super::bitboard::{parse_square, square_name, Dir, TRAPS};
use super::moves::Move;
use super::piece::{parse_side, side_letter, Piece};
use super::position::Position;
pub use super::setup::Setup;
use super::step::{Step, TurnState};
use crate::game::{GameError, Side};

pub(super) fn bad_move(token: &str, why: impl Into<String>) -> GameError {
    GameError::BadMove {
        token: token.to_string(),
        why: why.into(),
    }
}

/// The `len` characters of `token`; `form` says what it should look like.
pub(super) fn token_chars(token: &str, len: usize, form: &str) -> Result<Vec<char>, GameError> {
    let chars: Vec<char> = token.chars().collect();
    if chars.len() != len {
        return Err(bad_move(token, form));
    }
    Ok(chars)
}

/// The piece letter `c` of `token`.
pub(super) fn piece_letter(token: &str, c: char) -> Result<Piece, GameError> {
    Piece::from_char(c).ok_or_else(|| bad_move(token, format!("'{c}' is not a piece letter")))
}

/// The square that `chars` of `token` name.
pub(super) fn square_at(token: &str, chars: &[char]) -> Result<u8, GameError> {
    let sq: String = chars.iter().collect();
    parse_square(&sq).ok_or_else(|| bad_move(token, format!("'{sq}' is not a square")))
}

fn bad_position(text: &str, why: impl Into<String>) -> GameError {
    GameError::BadPosition {
        text: text.chars().take(80).collect(),
        why: why.into(),
    }
}

/// A turn label such as `12g`: the move number and the side.
pub fn parse_turn_label(label: &str) -> Result<(u32, Side), GameError> {
    let split = label
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| bad_move(label, "a turn label is a number then g, s, w or b"))?;
    let (num, side) = label.split_at(split);
    let number: u32 = num
        .parse()
        .map_err(|_| bad_move(label, "a turn label starts with the move number"))?;
    let side = match side {
        "g" | "w" => Side::First,
        "s" | "b" => Side::Second,
        _ => return Err(bad_move(label, "the side must be g, s, w or b")),
    };
    Ok((number, side))
}

/// `12g` / `12s`.
pub fn turn_label(number: u32, side: Side) -> String {
    format!("{number}{}", side_letter(side))
}

/// The 64-character board, rank 8 first, `.` for empty squares.
pub fn board64(pos: &Position) -> String {
    let mut s = String::with_capacity(64);
    for rank in (0..8).rev() {
        for file in 0..8 {
            s.push(pos.piece_at(rank * 8 + file).map_or('.', Piece::to_char));
        }
    }
    s
}

/// Reads a 64-character board (rank 8 first; `.`, space, `x` or `X` empty).
pub fn parse_board64(cells: &str, side: Side) -> Result<Position, GameError> {
    let chars: Vec<char> = cells.chars().collect();
    if chars.len() != 64 {
        return Err(bad_position(
            cells,
            format!("a board has 64 squares, found {}", chars.len()),
        ));
    }
    let mut pos = Position::empty(side);
    for (i, &c) in chars.iter().enumerate() {
        if matches!(c, '.' | ' ' | 'x' | 'X') {
            continue;
        }
        let piece = Piece::from_char(c).ok_or_else(|| {
            bad_position(
                cells,
                format!(
                    "square {} holds '{c}', expected one of RCDHMErcdhme or .",
                    { square_name(((7 - i / 8) * 8 + i % 8) as u8) }
                ),
            )
        })?;
        pos.place(((7 - i / 8) * 8 + i % 8) as u8, piece);
    }
    Ok(pos)
}

/// The oracle's position line: `<side> <board>`.
pub fn position_line(pos: &Position) -> String {
    format!("{} {}", side_letter(pos.side_to_move()), board64(pos))
}

/// Reads `<side> <board> [| steps]` (the oracle's input format); the board
/// may also be pyrimaa's bracketed short form `[...]` with spaces. Returns
/// the position and the partial-move text after `|`, if any.
pub fn parse_position_line(line: &str) -> Result<(Position, Option<&str>), GameError> {
    let (head, tail) = match line.split_once('|') {
        Some((h, t)) => (h.trim(), Some(t.trim())),
        None => (line.trim(), None),
    };
    let (side_tok, rest) = head
        .split_once(char::is_whitespace)
        .ok_or_else(|| bad_position(line, "expected '<side> <board>'"))?;
    let side = parse_side(side_tok.trim_start_matches(|c: char| c.is_ascii_digit()))
        .ok_or_else(|| bad_position(line, format!("side '{side_tok}' is not g, s, w or b")))?;
    let rest = rest.trim_start();
    let cells = if let Some(inner) = rest.strip_prefix('[') {
        inner
            .split_once(']')
            .ok_or_else(|| bad_position(line, "missing ']' after the short board"))?
            .0
    } else {
        rest.split_whitespace().next().unwrap_or("")
    };
    let pos = parse_board64(cells, side)?;
    Ok((pos, tail.filter(|t| !t.is_empty())))
}

/// The long diagram pyrimaa and the arimaa.com tools print, with `x` on
/// empty traps; `header` is printed above it (e.g. `12g`).
pub fn long_diagram(pos: &Position, header: &str) -> String {
    let mut out = String::new();
    out.push_str(header);
    out.push('\n');
    out.push_str(" +-----------------+\n");
    for rank in (0..8u8).rev() {
        out.push_str(&format!("{}|", rank + 1));
        for file in 0..8u8 {
            let sq = rank * 8 + file;
            let c = match pos.piece_at(sq) {
                Some(p) => p.to_char(),
                None if TRAPS >> sq & 1 == 1 => 'x',
                None => '.',
            };
            out.push(' ');
            out.push(c);
        }
        out.push_str(" |\n");
    }
    out.push_str(" +-----------------+\n   a b c d e f g h\n");
    out
}

/// Reads a long diagram: an optional label line (`g`, `12s`, ...), the
/// border, eight rank lines `8| r . x ... |`, the border. Returns the
/// position (side from the label, gold when absent) and the lines used.
pub fn parse_long_diagram(lines: &[&str]) -> Result<(Position, usize), GameError> {
    let mut i = 0;
    let mut side = Side::First;
    if let Some(first) = lines.first() {
        let t = first.trim();
        if !t.starts_with('+') {
            let label = t.trim_start_matches(|c: char| c.is_ascii_digit());
            side = parse_side(label)
                .ok_or_else(|| bad_position(t, "expected a side label such as 'g' or '12s'"))?;
            i = 1;
        }
    }
    let border = lines.get(i).map(|l| l.trim()).unwrap_or("");
    if !border.starts_with('+') {
        return Err(bad_position(border, "expected the top border ' +----...+'"));
    }
    i += 1;
    let mut cells = String::with_capacity(64);
    for rank in (1..=8).rev() {
        let line = lines
            .get(i)
            .ok_or_else(|| bad_position("", format!("missing the line of rank {rank}")))?;
        let (label, body) = line
            .trim()
            .split_once('|')
            .ok_or_else(|| bad_position(line, format!("rank {rank}: expected '{rank}| ... |'")))?;
        if label.trim() != rank.to_string() {
            return Err(bad_position(line, format!("expected rank {rank} here")));
        }
        let body = body.trim_end().trim_end_matches('|');
        let squares: Vec<char> = body.split_whitespace().flat_map(|t| t.chars()).collect();
        if squares.len() != 8 {
            // Older diagrams use spaces for empty squares: read every other column.
            let raw: Vec<char> = body.chars().collect();
            let cols: Vec<char> = (0..8)
                .map(|f| *raw.get(1 + 2 * f).unwrap_or(&' '))
                .collect();
            cells.extend(cols);
        } else {
            cells.extend(squares);
        }
        i += 1;
    }
    if lines.get(i).is_some_and(|l| l.trim().starts_with('+')) {
        i += 1;
    }
    if lines.get(i).is_some_and(|l| l.trim().starts_with("a b")) {
        i += 1;
    }
    Ok((parse_board64(&cells, side)?, i))
}

/// `Ed2n`.
pub fn step_token(pos: &Position, step: Step) -> String {
    let piece = pos.piece_at(step.from).map_or('?', Piece::to_char);
    format!("{piece}{}{}", square_name(step.from), step.dir().letter())
}

/// A move in the archive's notation, capture tokens included
/// (`Cc2n Cc3x Ee2n`), played from the start of `pos`'s turn.
pub fn move_to_string(pos: &Position, mv: Move) -> String {
    let mut p = *pos;
    let mut tokens = Vec::with_capacity(mv.len() + 1);
    for step in mv.steps() {
        tokens.push(step_token(&p, step));
        if let Some((sq, piece)) = p.move_piece(step.from, step.to) {
            tokens.push(format!("{}{}x", piece.to_char(), square_name(sq)));
        }
    }
    tokens.join(" ")
}

/// A step token: the piece, its square and the direction.
pub fn parse_step_token(token: &str) -> Result<(Piece, Step), GameError> {
    let chars = token_chars(
        token,
        4,
        "a step is a piece letter, a square and n/s/e/w (e.g. Ed2n)",
    )?;
    let piece = piece_letter(token, chars[0])?;
    let from = square_at(token, &chars[1..3])?;
    let dir = Dir::from_letter(chars[3]).ok_or_else(|| {
        bad_move(
            token,
            format!("direction '{}' is not n, s, e, w or x", chars[3]),
        )
    })?;
    let to = dir
        .apply(from)
        .ok_or_else(|| bad_move(token, "the step leaves the board"))?;
    Ok((piece, Step::new(from, to)))
}

/// Parses and checks a move played from the start of `pos`'s turn:
/// step tokens with optional capture tokens, which must name the capture
/// that really happens. The move must change the board and may not stop in
/// the middle of a push. Returns the move and the position after it (the
/// side to move not yet switched).
pub fn parse_move(pos: &Position, text: &str) -> Result<(Move, Position), GameError> {
    let mut p = *pos;
    let mut state = TurnState::START;
    let mut steps = Vec::with_capacity(4);
    let mut pending_capture: Option<(u8, Piece)> = None;
    for token in text.split_whitespace() {
        if token.len() == 4 && token.ends_with('x') {
            let piece = Piece::from_char(token.chars().next().unwrap_or('?'))
                .ok_or_else(|| bad_move(token, "not a piece letter"))?;
            let sq = parse_square(&token[1..3]).ok_or_else(|| bad_move(token, "not a square"))?;
            if pending_capture.take() != Some((sq, piece)) {
                return Err(bad_move(
                    token,
                    "no such capture happened on the previous step",
                ));
            }
            continue;
        }
        if let Some((sq, piece)) = pending_capture.take() {
            // Capture tokens are optional; a missing one is fine.
            let _ = (sq, piece);
        }
        let (piece, step) = parse_step_token(token)?;
        if steps.len() == 4 {
            return Err(bad_move(token, "a turn has at most 4 steps"));
        }
        match p.piece_at(step.from) {
            Some(actual) if actual == piece => {}
            Some(actual) => {
                return Err(bad_move(
                    token,
                    format!(
                        "{} holds '{}', not '{}'",
                        square_name(step.from),
                        actual.to_char(),
                        piece.to_char()
                    ),
                ))
            }
            None => {
                return Err(bad_move(
                    token,
                    format!("{} is empty", square_name(step.from)),
                ))
            }
        }
        let kind = p
            .classify_step(&state, step)
            .map_err(|why| bad_move(token, why.to_string()))?;
        let (next, captured) = p.apply_step(&state, step, kind);
        state = next;
        pending_capture = captured;
        steps.push(step);
    }
    if steps.is_empty() {
        return Err(bad_move(text, "a move needs at least one step"));
    }
    if state.push.is_some() {
        return Err(bad_move(text, "the move ends in the middle of a push"));
    }
    if p.board == pos.board {
        return Err(bad_move(text, "a move must change the position"));
    }
    let mv = Move::from_steps(&steps).expect("at most 4 steps");
    Ok((mv, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPENING: &str = "g rrrrrrrrdhcemchd................................DHCMECHDRRRRRRRR";

    #[test]
    fn position_lines_round_trip() {
        let (pos, tail) = parse_position_line(OPENING).unwrap();
        assert!(tail.is_none());
        assert_eq!(position_line(&pos), OPENING);
        assert_eq!(pos.piece_at(12).unwrap().to_char(), 'E'); // e2
        assert_eq!(pos.piece_at(51).unwrap().to_char(), 'e'); // d7
        let line = format!("{OPENING} | Ed2n Ed3n");
        let (_, tail) = parse_position_line(&line).unwrap();
        assert_eq!(tail, Some("Ed2n Ed3n"));
    }

    #[test]
    fn bad_boards_name_the_problem() {
        let err = parse_position_line("g rrr").unwrap_err().to_string();
        assert!(err.contains("64 squares"), "{err}");
        let err = parse_position_line(&OPENING.replace("rrrrrrrrd", "rrrrrrrrZ"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("a7") && err.contains("'Z'"), "{err}");
        let err = parse_position_line(&OPENING.replacen('g', "q", 1))
            .unwrap_err()
            .to_string();
        assert!(err.contains("side 'q'"), "{err}");
    }

    #[test]
    fn long_diagram_round_trips() {
        let (pos, _) = parse_position_line(OPENING).unwrap();
        let text = long_diagram(&pos, "2g");
        let lines: Vec<&str> = text.lines().collect();
        let (back, used) = parse_long_diagram(&lines).unwrap();
        assert_eq!(back, pos);
        assert_eq!(used, lines.len());
        assert!(text.contains("3| . . x . . x . . |"));
    }

    #[test]
    fn standard_setups_make_the_opening() {
        let mut pos = Position::empty(Side::First);
        Setup::standard(Side::First).place_on(&mut pos).unwrap();
        Setup::standard(Side::Second).place_on(&mut pos).unwrap();
        assert_eq!(position_line(&pos), OPENING);
        let text = Setup::standard(Side::First).to_notation();
        assert_eq!(
            Setup::parse(Side::First, &text).unwrap(),
            Setup::standard(Side::First)
        );
    }

    #[test]
    fn bad_setups_are_refused_with_reasons() {
        let good = Setup::standard(Side::First).to_notation();
        let err = Setup::parse(Side::First, &good.replace("Ra1", "Ra3")).unwrap_err();
        assert!(err.to_string().contains("a3 is outside"), "{err}");
        let err = Setup::parse(Side::First, &good.replace("Ra1", "Ca1")).unwrap_err();
        assert!(err.to_string().contains("found 7R 3C"), "{err}");
        let err = Setup::parse(Side::Second, &good).unwrap_err();
        assert!(err.to_string().contains("own pieces"), "{err}");
        let err = Setup::parse(Side::First, &good.replace("Ra1", "Rb1")).unwrap_err();
        assert!(err.to_string().contains("two pieces on b1"), "{err}");
    }

    #[test]
    fn turn_labels() {
        assert_eq!(parse_turn_label("12g").unwrap(), (12, Side::First));
        assert_eq!(parse_turn_label("3b").unwrap(), (3, Side::Second));
        assert_eq!(parse_turn_label("1w").unwrap(), (1, Side::First));
        assert!(parse_turn_label("12q").is_err());
        assert!(parse_turn_label("g").is_err());
        assert_eq!(turn_label(7, Side::Second), "7s");
    }

    #[test]
    fn moves_parse_and_print_with_captures() {
        // Gold dog c3 on a trap supported only by the cat on c2.
        let line = "g ................................................................";
        let (mut pos, _) = parse_position_line(line).unwrap();
        pos.place(18, Piece::from_char('D').unwrap()); // c3
        pos.place(10, Piece::from_char('C').unwrap()); // c2
        pos.place(0, Piece::from_char('R').unwrap());
        pos.place(63, Piece::from_char('r').unwrap());
        let (mv, after) = parse_move(&pos, "Cc2e Dc3x").unwrap();
        assert_eq!(move_to_string(&pos, mv), "Cc2e Dc3x");
        assert!(after.piece_at(18).is_none());
        let err = parse_move(&pos, "Cc2e Cc3x").unwrap_err().to_string();
        assert!(err.contains("no such capture"), "{err}");
        let err = parse_move(&pos, "Ed2n").unwrap_err().to_string();
        assert!(err.contains("d2 is empty"), "{err}");
        let err = parse_move(&pos, "Ra1s").unwrap_err().to_string();
        assert!(err.contains("leaves the board"), "{err}");
        let err = parse_move(&pos, "Ra1e Rb1w").unwrap_err().to_string();
        assert!(err.contains("change the position"), "{err}");
        let err = parse_move(&pos, "Ra1q").unwrap_err().to_string();
        assert!(err.contains("direction 'q'"), "{err}");
    }
}
