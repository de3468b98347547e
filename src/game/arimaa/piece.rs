//! Piece types and colours.

use crate::game::Side;

/// Piece types, weakest first, so `a > b` means `a` is stronger.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PieceType {
    Rabbit,
    Cat,
    Dog,
    Horse,
    Camel,
    Elephant,
}

impl PieceType {
    pub const ALL: [PieceType; 6] = [
        PieceType::Rabbit,
        PieceType::Cat,
        PieceType::Dog,
        PieceType::Horse,
        PieceType::Camel,
        PieceType::Elephant,
    ];
    /// How many of each type a side starts with.
    pub const COUNTS: [u8; 6] = [8, 2, 2, 2, 1, 1];

    pub fn from_index(i: usize) -> PieceType {
        Self::ALL[i]
    }

    /// The gold (upper-case) letter.
    pub fn letter(self) -> char {
        b"RCDHME"[self as usize] as char
    }
}

/// A coloured piece: gold (`Side::First`, upper case) or silver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub side: Side,
    pub kind: PieceType,
}

impl Piece {
    pub fn new(side: Side, kind: PieceType) -> Piece {
        Piece { side, kind }
    }

    /// `R`..`E` for gold, `r`..`e` for silver.
    pub fn to_char(self) -> char {
        let c = self.kind.letter();
        match self.side {
            Side::First => c,
            Side::Second => c.to_ascii_lowercase(),
        }
    }

    pub fn from_char(c: char) -> Option<Piece> {
        let kind = PieceType::ALL
            .into_iter()
            .find(|k| k.letter() == c.to_ascii_uppercase())?;
        let side = if c.is_ascii_uppercase() {
            Side::First
        } else {
            Side::Second
        };
        Some(Piece { side, kind })
    }

    /// Dense code 1..=12 (0 = empty) used by the mailbox and Zobrist keys.
    #[inline(always)]
    pub fn code(self) -> u8 {
        1 + self.side.index() as u8 * 6 + self.kind as u8
    }

    #[inline(always)]
    pub fn from_code(code: u8) -> Option<Piece> {
        if code == 0 || code > 12 {
            return None;
        }
        let c = code - 1;
        Some(Piece {
            side: if c < 6 { Side::First } else { Side::Second },
            kind: PieceType::from_index((c % 6) as usize),
        })
    }
}

/// "gold" / "silver".
pub fn side_name(side: Side) -> &'static str {
    match side {
        Side::First => "gold",
        Side::Second => "silver",
    }
}

/// `g` / `s`.
pub fn side_letter(side: Side) -> char {
    match side {
        Side::First => 'g',
        Side::Second => 's',
    }
}

/// Reads `g`/`s`, the old `w`/`b`, or `gold`/`silver`/`white`/`black`.
pub fn parse_side(s: &str) -> Option<Side> {
    match s.to_ascii_lowercase().as_str() {
        "g" | "w" | "gold" | "white" => Some(Side::First),
        "s" | "b" | "silver" | "black" => Some(Side::Second),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chars_and_codes_round_trip() {
        for c in "RCDHMErcdhme".chars() {
            let p = Piece::from_char(c).unwrap();
            assert_eq!(p.to_char(), c);
            assert_eq!(Piece::from_code(p.code()), Some(p));
        }
        assert_eq!(Piece::from_char('x'), None);
        assert!(PieceType::Elephant > PieceType::Camel);
        assert_eq!(PieceType::COUNTS.iter().sum::<u8>(), 16);
    }
}
