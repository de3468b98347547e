//! The arimaa.com game archive: tab-separated text, a header row naming the
//! columns, one game per line. Every game is replayed through the rules
//! engine ([`Arimaa`]) with its full legality checks and becomes a
//! [`GameRecord`]; a game that does not replay is skipped with a
//! [`SkipReport`] (game id, turn, token, reason) and the file goes on.
//!
//! The columns are found by name: `id`, `wusername`, `busername`, `wrating`,
//! `brating`, `result`, `termination` and `movelist` must be there; `event`,
//! `wtype`, `btype`, `rated` and `startts` are used when present.
//!
//! In `movelist` the turns are separated by the two characters `\` and `n`.
//! A turn is a label (`12w`, `12b`, or `12g`, `12s`) then its steps
//! (`Ed2n`) and capture tokens (`Dc3x`); the first two turns are the setups
//! (`1w Ra1 Rb1 ...`). Each label must be the next one expected. The early
//! archive (2002) also has two pseudo-moves: `takeback` undoes the turn
//! before it (the next label is then the undone turn's again), and `resign`
//! ends the move list. Turns at the very end with a label and no steps, or
//! empty, are skipped.
//!
//! For the terminations decided on the board (goal, elimination,
//! immobilization, repetition) the engine's result after the last move must
//! be the recorded one; for the others (resignation, time, illegal move,
//! ...) the result is the record's, and the board must not show a finished
//! game.
//!
//! ```
//! use plies::record::arimaa_archive::{import_str, ImportOptions};
//! let text = std::fs::read_to_string("data/arimaa/allgames2002.txt").unwrap();
//! let (records, summary) = import_str(&text, "allgames2002.txt", &ImportOptions::default()).unwrap();
//! assert_eq!(summary.games_read, 64);
//! assert_eq!(records.len(), summary.kept);
//! ```

use super::game_record::{GameRecord, PerSide};
use super::RecordError;
use crate::game::arimaa::notation::{parse_turn_label, turn_label};
use crate::game::arimaa::{Arimaa, Setup, SetupError, Termination};
use crate::game::{Game, GameError, Outcome, Side};
use crate::util::text::skip_bom;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io::BufRead;
use std::path::Path;

/// The format's name on the command line.
pub const FORMAT: &str = "arimaa-archive";

/// Reasons a game is skipped (the keys of [`FileSummary::skipped`]).
pub mod reason {
    /// The line does not have as many fields as the header.
    pub const MALFORMED_ROW: &str = "malformed row";
    /// A setup turn is missing, unreadable or breaks the setup rules.
    pub const BAD_SETUP: &str = "bad setup";
    /// A turn label is unreadable or not the one expected next.
    pub const BAD_TURN_LABEL: &str = "bad turn label";
    /// A step or capture token is not `<piece><square><n|s|e|w|x>`.
    pub const UNPARSEABLE_TOKEN: &str = "unparseable token";
    /// A move the rules engine refuses.
    pub const ILLEGAL_MOVE: &str = "illegal move";
    /// The board's result disagrees with the recorded one.
    pub const CONTRADICTS_RULES: &str = "result contradicts the rules";
    /// Kept out by [`super::ImportOptions::min_rating`] (not an error).
    pub const BELOW_MIN_RATING: &str = "filtered: rating below minimum";
    /// Kept out by [`super::ImportOptions::terminations`] (not an error).
    pub const TERMINATION_NOT_KEPT: &str = "filtered: termination not kept";
}

/// What to keep. The default keeps every game that replays.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ImportOptions {
    /// Keep a game only if both players' ratings are known and at least this.
    pub min_rating: Option<i32>,
    /// Keep only games that ended in one of these ways (`None`: all).
    pub terminations: Option<Vec<Termination>>,
    /// Fail on the first game that does not replay instead of skipping it.
    pub stop_on_error: bool,
}

/// Why one game was skipped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkipReport {
    /// `file:line`.
    pub source: String,
    pub game_id: String,
    /// The turn label where it went wrong (`12g`), if at a turn.
    pub turn: Option<String>,
    /// The offending token or step (`Ed2q`), or the whole move.
    pub token: Option<String>,
    /// One of the [`reason`] constants.
    pub reason: String,
    /// What exactly is wrong.
    pub detail: String,
}

impl fmt::Display for SkipReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: game {}", self.source, self.game_id)?;
        if let Some(t) = &self.turn {
            write!(f, ", turn {t}")?;
        }
        if let Some(t) = &self.token {
            write!(f, ", '{t}'")?;
        }
        write!(f, ": {}: {}", self.reason, self.detail)
    }
}

/// The counts for one archive file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileSummary {
    pub file: String,
    /// Data lines (games) read.
    pub games_read: usize,
    /// Games that replayed and passed the filters.
    pub kept: usize,
    /// Kept games by termination name (`goal`, `resignation`, ...).
    pub kept_by_termination: BTreeMap<String, usize>,
    /// Games not kept, by reason (errors and filters).
    pub skipped: BTreeMap<String, usize>,
    /// One report per game skipped for an error (not for a filter).
    pub reports: Vec<SkipReport>,
}

impl FileSummary {
    /// All games not kept.
    pub fn skipped_total(&self) -> usize {
        self.skipped.values().sum()
    }
}

/// Column positions, found by name in the header.
#[derive(Clone, Debug)]
struct Columns {
    count: usize,
    id: usize,
    wusername: usize,
    busername: usize,
    wrating: usize,
    brating: usize,
    result: usize,
    termination: usize,
    movelist: usize,
    event: Option<usize>,
    wtype: Option<usize>,
    btype: Option<usize>,
    rated: Option<usize>,
    startts: Option<usize>,
    corrupt: Option<usize>,
}

/// The columns an archive file must have.
pub const REQUIRED_COLUMNS: [&str; 8] = [
    "id",
    "wusername",
    "busername",
    "wrating",
    "brating",
    "result",
    "termination",
    "movelist",
];

impl Columns {
    fn from_header(header: &str) -> Result<Columns, ArchiveError> {
        let names: Vec<&str> = header.split('\t').map(str::trim).collect();
        let find = |name: &str| names.iter().position(|n| *n == name);
        let missing: Vec<&'static str> = REQUIRED_COLUMNS
            .iter()
            .copied()
            .filter(|n| find(n).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(ArchiveError::MissingColumns { missing });
        }
        let req = |name: &str| find(name).expect("checked above");
        Ok(Columns {
            count: names.len(),
            id: req("id"),
            wusername: req("wusername"),
            busername: req("busername"),
            wrating: req("wrating"),
            brating: req("brating"),
            result: req("result"),
            termination: req("termination"),
            movelist: req("movelist"),
            event: find("event"),
            wtype: find("wtype"),
            btype: find("btype"),
            rated: find("rated"),
            startts: find("startts"),
            corrupt: find("corrupt"),
        })
    }
}

/// A failure while replaying one game's move list.
#[derive(Debug)]
struct Fail {
    reason: &'static str,
    turn: Option<String>,
    token: Option<String>,
    detail: String,
}

impl Fail {
    fn new(reason: &'static str, turn: Option<&str>, token: Option<&str>, detail: String) -> Fail {
        Fail {
            reason,
            turn: turn.map(str::to_string),
            token: token.map(str::to_string),
            detail,
        }
    }

    fn from_game_error(reason: &'static str, turn: &str, e: GameError) -> Fail {
        match e {
            GameError::BadMove { token, why } => Fail::new(reason, Some(turn), Some(&token), why),
            other => Fail::new(reason, Some(turn), None, other.to_string()),
        }
    }
}

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

/// `<piece><file><rank><n|s|e|w|x>`.
fn is_step_or_capture_token(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 4
        && b"RCDHMErcdhme".contains(&b[0])
        && (b'a'..=b'h').contains(&b[1])
        && (b'1'..=b'8').contains(&b[2])
        && b"nsewx".contains(&b[3])
}

/// A game being replayed: the setups, then the moves.
struct Replay {
    gold: Option<Setup>,
    silver: Option<Setup>,
    game: Option<Arimaa>,
    /// Canonical move strings (engine notation with capture tokens).
    moves: Vec<String>,
}

impl Replay {
    fn new() -> Replay {
        Replay {
            gold: None,
            silver: None,
            game: None,
            moves: Vec::new(),
        }
    }

    /// The turn expected next: `(1, First)` and `(1, Second)` for the setups.
    fn expected(&self) -> (u32, Side) {
        match (&self.gold, &self.silver, &self.game) {
            (None, _, _) => (1, Side::First),
            (Some(_), None, _) => (1, Side::Second),
            (_, _, Some(g)) => (g.turn_number(), g.side_to_move()),
            _ => unreachable!("the game starts with the second setup"),
        }
    }

    fn start_game(&mut self) -> Result<(), ArchiveError> {
        let (Some(gold), Some(silver)) = (&self.gold, &self.silver) else {
            return Err(ArchiveError::SetupMissing);
        };
        let mut g = Arimaa::from_setups(gold, silver)?;
        for m in &self.moves {
            let mv = g.parse_move(m).map_err(|error| ArchiveError::Takeback {
                mv: m.clone(),
                error,
            })?;
            g.play(mv);
        }
        self.game = Some(g);
        Ok(())
    }

    /// Undoes the last turn (a move or a setup); returns its label.
    fn take_back(&mut self) -> Option<(u32, Side)> {
        if self.game.is_some() {
            if self.moves.pop().is_none() {
                self.game = None;
                self.silver = None;
                return Some((1, Side::Second));
            }
            self.start_game().expect("moves that were legal replay");
            return Some(self.expected());
        }
        if self.silver.take().is_some() {
            return Some((1, Side::Second));
        }
        self.gold.take().map(|_| (1, Side::First))
    }

    /// Plays one turn (label already checked) given as its tokens after the label.
    fn play_turn(&mut self, label: &str, steps: &[&str]) -> Result<(), Fail> {
        let text = steps.join(" ");
        if self.gold.is_none() || self.silver.is_none() {
            let side = if self.gold.is_none() {
                Side::First
            } else {
                Side::Second
            };
            let setup = Setup::parse(side, &text).map_err(|e| {
                let mut f = Fail::from_game_error(reason::BAD_SETUP, label, e);
                // Name the piece whose square the complaint is about.
                if f.token.as_deref() == Some(text.as_str()) {
                    if let Some(t) = steps.iter().find(|t| {
                        t.len() == 3 && t.is_char_boundary(1) && f.detail.contains(&t[1..])
                    }) {
                        f.token = Some(t.to_string());
                    }
                }
                f
            })?;
            if side == Side::First {
                self.gold = Some(setup);
            } else {
                self.silver = Some(setup);
                self.start_game()
                    .map_err(|e| Fail::new(reason::BAD_SETUP, Some(label), None, e.to_string()))?;
            }
            return Ok(());
        }
        if let Some(bad) = steps.iter().find(|t| !is_step_or_capture_token(t)) {
            return Err(Fail::new(
                reason::UNPARSEABLE_TOKEN,
                Some(label),
                Some(*bad),
                "a step is a piece letter, a square and n/s/e/w (e.g. Ed2n); a capture is the piece, the trap and x (e.g. Dc3x)".into(),
            ));
        }
        let g = self.game.as_mut().expect("both setups played");
        if let Some((outcome, term)) = g.result() {
            return Err(Fail::new(
                reason::CONTRADICTS_RULES,
                Some(label),
                Some(&text),
                format!(
                    "the game was already over ({} by {}) but the record goes on",
                    outcome_words(Some(outcome)),
                    term.name()
                ),
            ));
        }
        let mv = g
            .parse_move(&text)
            .map_err(|e| Fail::from_game_error(reason::ILLEGAL_MOVE, label, e))?;
        self.moves.push(g.move_to_string(mv));
        g.play(mv);
        Ok(())
    }
}

fn outcome_words(o: Option<Outcome>) -> &'static str {
    match o {
        Some(Outcome::Win(Side::First)) => "gold wins",
        Some(Outcome::Win(Side::Second)) => "silver wins",
        Some(Outcome::Draw) => "draw",
        None => "no winner",
    }
}

/// Replays a `movelist` field. Returns the finished replay (both setups
/// played) or the first failure.
fn replay_movelist(movelist: &str) -> Result<Replay, Fail> {
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

fn field<'a>(fields: &[&'a str], i: usize) -> &'a str {
    fields.get(i).map_or("", |f| f.trim())
}

fn parse_rating(s: &str) -> Option<i32> {
    s.parse::<i32>()
        .ok()
        .or_else(|| s.parse::<f64>().ok().map(|r| r.round() as i32))
        .filter(|&r| r > 0)
}

/// The recorded winner: `w`/`g` gold (first), `b`/`s` silver (second).
fn parse_winner(s: &str) -> Option<Side> {
    match s {
        "w" | "g" => Some(Side::First),
        "b" | "s" => Some(Side::Second),
        _ => None,
    }
}

enum RowResult {
    Kept(Box<GameRecord>),
    Filtered(&'static str),
    Skipped(SkipReport),
}

fn process_row(fields: &[&str], cols: &Columns, source: &str, opts: &ImportOptions) -> RowResult {
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

/// Reads one archive from `reader`. `path` names it in errors and its file
/// name goes into each record's `source`. Each kept record goes to
/// `on_record`; `on_game` is called after every game line (for progress).
/// Fails on I/O errors, a missing header or column, an error from
/// `on_record`, or (with `stop_on_error`) the first game that does not replay.
pub fn import_archive<R: BufRead>(
    mut reader: R,
    path: &Path,
    opts: &ImportOptions,
    mut on_record: impl FnMut(GameRecord) -> Result<(), RecordError>,
    mut on_game: impl FnMut(),
) -> Result<FileSummary, RecordError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let io = RecordError::io(path);
    skip_bom(&mut reader).map_err(io)?;
    let mut buf = Vec::new();
    let mut read_line = |buf: &mut Vec<u8>| -> Result<Option<String>, RecordError> {
        buf.clear();
        if reader.read_until(b'\n', buf).map_err(io)? == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(buf);
        Ok(Some(text.trim_end_matches(['\n', '\r']).to_string()))
    };
    let header = read_line(&mut buf)?.ok_or_else(|| RecordError::Parse {
        path: path.to_path_buf(),
        line: 1,
        why: "empty file: expected a header row naming the columns".into(),
    })?;
    let cols = Columns::from_header(&header).map_err(|e| RecordError::Parse {
        path: path.to_path_buf(),
        line: 1,
        why: e.to_string(),
    })?;
    let mut summary = FileSummary {
        file: name.clone(),
        ..FileSummary::default()
    };
    let mut line_no = 1;
    while let Some(line) = read_line(&mut buf)? {
        line_no += 1;
        if line.trim().is_empty() {
            continue;
        }
        summary.games_read += 1;
        let fields: Vec<&str> = line.split('\t').collect();
        let source = format!("{name}:{line_no}");
        match process_row(&fields, &cols, &source, opts) {
            RowResult::Kept(rec) => {
                summary.kept += 1;
                *summary
                    .kept_by_termination
                    .entry(rec.termination.clone())
                    .or_default() += 1;
                on_record(*rec)?;
            }
            RowResult::Filtered(why) => {
                *summary.skipped.entry(why.to_string()).or_default() += 1;
            }
            RowResult::Skipped(report) => {
                if opts.stop_on_error {
                    return Err(RecordError::Parse {
                        path: path.to_path_buf(),
                        line: line_no,
                        why: report.to_string(),
                    });
                }
                *summary.skipped.entry(report.reason.clone()).or_default() += 1;
                summary.reports.push(report);
            }
        }
        on_game();
    }
    Ok(summary)
}

/// Reads an archive file whole: the kept records and the counts.
pub fn import_file(
    path: impl AsRef<Path>,
    opts: &ImportOptions,
) -> Result<(Vec<GameRecord>, FileSummary), RecordError> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(RecordError::io(path))?;
    import_all(std::io::BufReader::new(file), path, opts)
}

/// Reads archive text; `name` stands for the file in messages and sources.
pub fn import_str(
    text: &str,
    name: &str,
    opts: &ImportOptions,
) -> Result<(Vec<GameRecord>, FileSummary), RecordError> {
    import_all(text.as_bytes(), Path::new(name), opts)
}

/// [`import_archive`] gathering every kept record.
fn import_all(
    reader: impl BufRead,
    path: &Path,
    opts: &ImportOptions,
) -> Result<(Vec<GameRecord>, FileSummary), RecordError> {
    let mut records = Vec::new();
    let summary = import_archive(
        reader,
        path,
        opts,
        |r| {
            records.push(r);
            Ok(())
        },
        || {},
    )?;
    Ok((records, summary))
}

/// Replays an Arimaa record (setups, then every move with the full rules)
/// and applies its result: the engine's own for a termination decided on the
/// board, which must agree with the record, else the recorded one. Returns
/// the finished game.
pub fn replay_record(rec: &GameRecord) -> Result<Arimaa, ArchiveError> {
    let id = || rec.id.clone();
    if rec.game != Arimaa::NAME {
        return Err(ArchiveError::NotArimaa {
            id: id(),
            game: rec.game.clone(),
        });
    }
    let [gold, silver] = rec.setups.as_slice() else {
        return Err(ArchiveError::SetupCount {
            id: id(),
            found: rec.setups.len(),
        });
    };
    let setup = |side, text| {
        Setup::parse(side, text).map_err(|error| ArchiveError::BadSetup {
            id: id(),
            side: if side == Side::First {
                "gold"
            } else {
                "silver"
            },
            error,
        })
    };
    let (gold, silver) = (setup(Side::First, gold)?, setup(Side::Second, silver)?);
    let mut g = Arimaa::from_setups(&gold, &silver)
        .map_err(|error| ArchiveError::Start { id: id(), error })?;
    for (k, m) in rec.moves.iter().enumerate() {
        g.play_str(m).map_err(|error| ArchiveError::BadMove {
            id: id(),
            label: move_label(k),
            error,
        })?;
    }
    let term = termination_from_name(&rec.termination).ok_or_else(|| {
        ArchiveError::UnknownTermination {
            id: id(),
            termination: rec.termination.clone(),
        }
    })?;
    let disagree = |engine| ArchiveError::ResultDiffers {
        id: id(),
        result: rec.result,
        termination: rec.termination.clone(),
        on_board: term.is_on_board(),
        engine,
    };
    if term.is_on_board() {
        match g.result() {
            Some((Outcome::Win(w), t)) if t == term && Some(w) == rec.result => {}
            other => return Err(disagree(other)),
        }
    } else if g.result().is_some() {
        return Err(disagree(g.result()));
    } else if let Some(w) = rec.result {
        g.set_result(Outcome::Win(w), term);
    }
    Ok(g)
}

/// Why an archive header or an Arimaa record is not usable.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error(
        "the header has no column {} (an arimaa.com archive header names {})",
        quoted(.missing),
        REQUIRED_COLUMNS.join(", ")
    )]
    MissingColumns { missing: Vec<&'static str> },
    #[error("a setup is missing")]
    SetupMissing,
    #[error(transparent)]
    Setups(#[from] SetupError),
    #[error("replaying '{mv}' after a takeback: {error}")]
    Takeback { mv: String, error: GameError },
    #[error("game {id}: not an Arimaa record but '{game}'")]
    NotArimaa { id: String, game: String },
    #[error("game {id}: expected 2 setups, found {found}")]
    SetupCount { id: String, found: usize },
    #[error("game {id}: {side} setup: {error}")]
    BadSetup {
        id: String,
        side: &'static str,
        error: GameError,
    },
    #[error("game {id}: {error}")]
    Start { id: String, error: SetupError },
    #[error("game {id}: move {label}: {error}")]
    BadMove {
        id: String,
        label: String,
        error: GameError,
    },
    #[error("game {id}: unknown termination '{termination}'")]
    UnknownTermination { id: String, termination: String },
    /// The engine's result after the last move contradicts the record: a
    /// different one for a termination decided on the board (`on_board`),
    /// any at all for another termination.
    #[error("game {id}: the record says {}", differs(*.result, .termination, *.on_board, .engine))]
    ResultDiffers {
        id: String,
        result: Option<Side>,
        termination: String,
        on_board: bool,
        engine: Option<(Outcome, Termination)>,
    },
}

/// `'a', 'b'`.
fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|m| format!("'{m}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn differs(
    result: Option<Side>,
    termination: &str,
    on_board: bool,
    engine: &Option<(Outcome, Termination)>,
) -> String {
    if on_board {
        format!("{result:?} by {termination}, the engine {engine:?}")
    } else {
        format!("{termination}, the board shows {engine:?}")
    }
}

/// The termination with this snake_case name (`goal`, `illegal_move`, ...).
pub fn termination_from_name(name: &str) -> Option<Termination> {
    "gempritfo"
        .chars()
        .map(|c| Termination::from_code(&c.to_string()))
        .find(|t| t.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "id\twusername\tbusername\twrating\tbrating\tresult\ttermination\tmovelist";
    const GOLD: &str = "Ra1 Rb1 Rc1 Rd1 Re1 Rf1 Rg1 Rh1 Da2 Hb2 Cc2 Md2 Ee2 Cf2 Hg2 Dh2";
    const SILVER: &str = "ra8 rb8 rc8 rd8 re8 rf8 rg8 rh8 da7 hb7 cc7 ed7 me7 cf7 hg7 dh7";

    fn row(id: &str, result: &str, term: &str, movelist: &str) -> String {
        format!("{id}\tgold\tsilver\t1600\t1500\t{result}\t{term}\t{movelist}")
    }

    fn opening(labels: (&str, &str)) -> String {
        format!("1{} {GOLD}\\n1{} {SILVER}", labels.0, labels.1)
    }

    fn import(rows: &[String]) -> (Vec<GameRecord>, FileSummary) {
        let text = format!("{HEADER}\n{}\n", rows.join("\n"));
        import_str(&text, "t.txt", &ImportOptions::default()).unwrap()
    }

    #[test]
    fn setups_in_both_label_styles_and_a_resigned_game() {
        let gs = "\\n2g Ee2n Ee3n\\n2s ed7s ed6s\\n3g";
        let wb = "\\n2w Ee2n Ee3n\\n2b ed7s ed6s\\n3w";
        let (recs, sum) = import(&[
            row("1", "w", "r", &format!("{}{gs}", opening(("g", "s")))),
            row("2", "b", "t", &format!("{}{wb}", opening(("w", "b")))),
        ]);
        assert_eq!((sum.games_read, sum.kept), (2, 2), "{:?}", sum.reports);
        assert_eq!(recs[0].moves, ["Ee2n Ee3n", "ed7s ed6s"]);
        assert_eq!(recs[0].plies, 2);
        assert_eq!(recs[0].result, Some(Side::First));
        assert_eq!(recs[0].termination, "resignation");
        assert_eq!(recs[1].result, Some(Side::Second));
        assert_eq!(recs[1].termination, "timeout");
        assert_eq!(
            recs[0].setups[0],
            Setup::parse(Side::First, GOLD).unwrap().to_notation()
        );
        assert_eq!(recs[0].source, "t.txt:2");
        assert_eq!(recs[1].ratings, PerSide::new(Some(1600), Some(1500)));
        let g = replay_record(&recs[0]).unwrap();
        assert_eq!(
            g.result(),
            Some((Outcome::Win(Side::First), Termination::Resignation))
        );
    }

    #[test]
    fn takeback_undoes_the_turn_before_and_resign_ends_the_list() {
        let list = format!(
            "{}\\n2w Ee2n\\n2b takeback\\n2w Ee2n Ee3n\\n2b ed7s\\n3w resign\\n3b",
            opening(("w", "b"))
        );
        let (recs, sum) = import(&[row("5", "b", "r", &list)]);
        assert_eq!(sum.kept, 1, "{:?}", sum.reports);
        assert_eq!(recs[0].moves, ["Ee2n Ee3n", "ed7s"]);
        // A setup can be taken back too.
        let list = format!(
            "1w {GOLD}\\n1b takeback\\n{}\\n2w Ee2n",
            opening(("w", "b"))
        );
        let (_, sum) = import(&[row("6", "w", "t", &list)]);
        assert_eq!(sum.kept, 1, "{:?}", sum.reports);
        // Moves after a resignation are refused.
        let list = format!("{}\\n2w resign\\n2b ed7s", opening(("w", "b")));
        let (_, sum) = import(&[row("7", "b", "r", &list)]);
        assert_eq!(sum.reports[0].reason, reason::ILLEGAL_MOVE);
    }

    #[test]
    fn skip_reports_name_the_game_turn_and_token() {
        let o = opening(("g", "s"));
        let (recs, sum) = import(&[
            row("10", "w", "r", &format!("{o}\\n2g Ee2n\\n3g ed7s")),
            row("11", "w", "r", &format!("{o}\\n2g Ee2q")),
            row(
                "12",
                "w",
                "r",
                &format!("{o}\\n2g Ee2n\\n2s ed7s ed6s ed5s ed4s ed3s"),
            ),
            row(
                "13",
                "w",
                "r",
                &format!("{o}\\n2g Ee2n Ee3n Ee4n Ee5n Ee6n"),
            ),
            row(
                "14",
                "w",
                "r",
                &format!("1g {GOLD}\\n1s {}", SILVER.replace("ra8", "Ra8")),
            ),
            row("15", "w", "g", &format!("{o}\\n2g Ee2n")),
            row("16", "w", "r", &format!("{o}\\n2g Ed2n")),
            row("17", "w", "r", "1g Ra1"),
            "18\tonly\tthree".to_string(),
            row("19", "w", "r", &format!("{o}\\nxyz Ee2n")),
        ]);
        assert_eq!(sum.games_read, 10);
        assert_eq!(sum.kept, 0, "{recs:?}");
        let by_id: BTreeMap<&str, &SkipReport> = sum
            .reports
            .iter()
            .map(|r| (r.game_id.as_str(), r))
            .collect();
        let r = by_id["10"];
        assert_eq!(
            (r.reason.as_str(), r.turn.as_deref()),
            (reason::BAD_TURN_LABEL, Some("3g"))
        );
        assert!(r.detail.contains("expected turn 2s"), "{r}");
        let r = by_id["11"];
        assert_eq!(r.reason, reason::UNPARSEABLE_TOKEN);
        assert_eq!(r.token.as_deref(), Some("Ee2q"));
        let r = by_id["12"];
        assert_eq!(r.reason, reason::ILLEGAL_MOVE);
        assert!(r.detail.contains("at most 4 steps"), "{r}");
        assert_eq!(
            (r.turn.as_deref(), r.token.as_deref()),
            (Some("2s"), Some("ed3s"))
        );
        let r = by_id["13"];
        assert_eq!(r.token.as_deref(), Some("Ee6n"));
        let r = by_id["14"];
        assert_eq!(
            (r.reason.as_str(), r.turn.as_deref()),
            (reason::BAD_SETUP, Some("1s"))
        );
        assert!(r.to_string().contains("Ra8"), "{r}");
        let r = by_id["15"];
        assert_eq!(r.reason, reason::CONTRADICTS_RULES);
        assert!(
            r.to_string().contains("result contradicts the rules: "),
            "{r}"
        );
        assert!(r.detail.contains("still in progress"), "{r}");
        let r = by_id["16"];
        assert_eq!(r.reason, reason::ILLEGAL_MOVE);
        assert!(r.detail.contains("holds 'M', not 'E'"), "{r}");
        let r = by_id["17"];
        assert_eq!(r.reason, reason::BAD_SETUP);
        let r = by_id["18"];
        assert_eq!(r.reason, reason::MALFORMED_ROW);
        assert_eq!(r.source, "t.txt:10");
        let r = by_id["19"];
        assert_eq!(
            (r.reason.as_str(), r.token.as_deref()),
            (reason::BAD_TURN_LABEL, Some("xyz"))
        );
        assert_eq!(sum.skipped_total(), 10);
        assert_eq!(sum.skipped[reason::ILLEGAL_MOVE], 3);
    }

    #[test]
    fn missing_columns_and_empty_files_are_errors_naming_the_file() {
        let text = "id\twusername\tbusername\twrating\tresult\ttermination\n1\ta\tb\t1\tw\tr\n";
        let err = import_str(text, "x.txt", &ImportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("x.txt:1") && err.contains("'brating', 'movelist'"),
            "{err}"
        );
        let err = import_str("", "e.txt", &ImportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("e.txt") && err.contains("header"), "{err}");
    }

    #[test]
    fn filters_and_stop_on_error() {
        let o = opening(("g", "s"));
        let rows = [
            row("1", "w", "r", &format!("{o}\\n2g Ee2n")),
            row("2", "w", "t", &format!("{o}\\n2g Ee2q")),
        ];
        let text = format!("{HEADER}\n{}\n", rows.join("\n"));
        let opts = ImportOptions {
            min_rating: Some(1550),
            ..ImportOptions::default()
        };
        let (_, sum) = import_str(&text, "f.txt", &opts).unwrap();
        assert_eq!(sum.skipped[reason::BELOW_MIN_RATING], 2);
        assert!(sum.reports.is_empty());
        let opts = ImportOptions {
            terminations: Some(vec![Termination::Timeout]),
            ..ImportOptions::default()
        };
        let (_, sum) = import_str(&text, "f.txt", &opts).unwrap();
        assert_eq!(sum.skipped[reason::TERMINATION_NOT_KEPT], 1);
        assert_eq!(sum.skipped[reason::UNPARSEABLE_TOKEN], 1);
        let opts = ImportOptions {
            stop_on_error: true,
            ..ImportOptions::default()
        };
        let err = import_str(&text, "f.txt", &opts).unwrap_err().to_string();
        assert!(
            err.contains("f.txt:3") && err.contains("game 2") && err.contains("Ee2q"),
            "{err}"
        );
    }

    #[test]
    fn termination_names_round_trip() {
        for c in "gempritfo".chars() {
            let t = Termination::from_code(&c.to_string());
            assert_eq!(termination_from_name(t.name()), Some(t));
        }
        assert_eq!(termination_from_name("nonsense"), None);
    }
}
