//! The columns of an archive file, found by name in its header row, and
//! the fields of a data row.

use super::ArchiveError;
use crate::game::Side;

/// Column positions, found by name in the header.
#[derive(Clone, Debug)]
pub(super) struct Columns {
    pub(super) count: usize,
    pub(super) id: usize,
    pub(super) wusername: usize,
    pub(super) busername: usize,
    pub(super) wrating: usize,
    pub(super) brating: usize,
    pub(super) result: usize,
    pub(super) termination: usize,
    pub(super) movelist: usize,
    pub(super) event: Option<usize>,
    pub(super) wtype: Option<usize>,
    pub(super) btype: Option<usize>,
    pub(super) rated: Option<usize>,
    pub(super) startts: Option<usize>,
    pub(super) corrupt: Option<usize>,
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
    pub(super) fn from_header(header: &str) -> Result<Columns, ArchiveError> {
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

pub(super) fn field<'a>(fields: &[&'a str], i: usize) -> &'a str {
    fields.get(i).map_or("", |f| f.trim())
}

pub(super) fn parse_rating(s: &str) -> Option<i32> {
    s.parse::<i32>()
        .ok()
        .or_else(|| s.parse::<f64>().ok().map(|r| r.round() as i32))
        .filter(|&r| r > 0)
}

/// The recorded winner: `w`/`g` gold (first), `b`/`s` silver (second).
pub(super) fn parse_winner(s: &str) -> Option<Side> {
    match s {
        "w" | "g" => Some(Side::First),
        "b" | "s" => Some(Side::Second),
        _ => None,
    }
}
