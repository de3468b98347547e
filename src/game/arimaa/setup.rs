//! Setups: where a side's 16 pieces start. Parsing and checking, the
//! standard setup, uniformly random setups, and a sampler over setups seen
//! in game records (self-play starts from those, so that its openings look
//! like human and bot play rather than like random placements).

use super::bitboard::square_name;
use super::notation::{bad_move, piece_letter, square_at, token_chars};
use super::piece::{Piece, PieceType};
use super::position::Position;
use crate::game::{GameError, Side};
use crate::util::SeededRng;
use rand::seq::SliceRandom;
use rand::RngExt;

/// Why pieces do not form a setup, or setups cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("{} is outside the home ranks", square_name(*.square))]
    OutsideHome { square: u8 },
    #[error("two pieces on {}", square_name(*.square))]
    TwoPieces { square: u8 },
    /// The pieces per type, `8R 2C ...` in [`PieceType::ALL`] order.
    #[error("a setup places 8R 2C 2D 2H 1M 1E, found {found}")]
    Counts { found: String },
    #[error("{} is already occupied", square_name(*.square))]
    Occupied { square: u8 },
    #[error("the first setup is gold's, the second silver's")]
    Sides,
    #[error("no setups to sample from")]
    NoSetups,
    #[error("expected (gold, silver) setup pairs")]
    NotPairs,
}

/// A side's setup: where each of its 16 pieces starts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Setup {
    pub side: Side,
    /// (square, piece type) for all 16 pieces, sorted by square.
    pub placements: Vec<(u8, PieceType)>,
}

impl Setup {
    /// Checks the pieces: `side`'s own, on its two home ranks, one per
    /// square, exactly 8 R, 2 C, 2 D, 2 H, 1 M, 1 E.
    pub fn new(side: Side, mut placements: Vec<(u8, PieceType)>) -> Result<Setup, SetupError> {
        let home = |sq: u8| match side {
            Side::First => sq < 16,
            Side::Second => sq >= 48,
        };
        let mut counts = [0u8; 6];
        let mut used = 0u64;
        for &(sq, kind) in &placements {
            if !home(sq) {
                return Err(SetupError::OutsideHome { square: sq });
            }
            if used >> sq & 1 == 1 {
                return Err(SetupError::TwoPieces { square: sq });
            }
            used |= 1 << sq;
            counts[kind as usize] += 1;
        }
        if counts != PieceType::COUNTS {
            let list: Vec<String> = PieceType::ALL
                .iter()
                .map(|k| format!("{}{}", counts[*k as usize], k.letter()))
                .collect();
            return Err(SetupError::Counts {
                found: list.join(" "),
            });
        }
        placements.sort();
        Ok(Setup { side, placements })
    }

    /// Parses `Ra1 Rb1 ... Ee2` (silver in lower case).
    pub fn parse(side: Side, text: &str) -> Result<Setup, GameError> {
        let mut placements = Vec::with_capacity(16);
        for token in text.split_whitespace() {
            let chars = token_chars(
                token,
                3,
                "a setup token is a piece letter and a square (e.g. Ra1)",
            )?;
            let piece = piece_letter(token, chars[0])?;
            if piece.side != side {
                return Err(bad_move(
                    token,
                    "a setup places only the mover's own pieces",
                ));
            }
            let sq = square_at(token, &chars[1..])?;
            placements.push((sq, piece.kind));
        }
        Setup::new(side, placements).map_err(|e| bad_move(text, e.to_string()))
    }

    /// The setup of `side`'s pieces in `pos`, if they form one.
    pub fn from_position(pos: &Position, side: Side) -> Result<Setup, SetupError> {
        let placements = pos
            .pieces()
            .filter(|(_, p)| p.side == side)
            .map(|(sq, p)| (sq, p.kind))
            .collect();
        Setup::new(side, placements)
    }

    /// `Ra1 Rb1 ...`, in the archive's order (by square).
    pub fn to_notation(&self) -> String {
        self.placements
            .iter()
            .map(|&(sq, k)| format!("{}{}", Piece::new(self.side, k).to_char(), square_name(sq)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Places the pieces on `pos` (the squares must be empty).
    pub fn place_on(&self, pos: &mut Position) -> Result<(), SetupError> {
        for &(sq, k) in &self.placements {
            if pos.piece_at(sq).is_some() {
                return Err(SetupError::Occupied { square: sq });
            }
            pos.place(sq, Piece::new(self.side, k));
        }
        Ok(())
    }

    /// The usual opening setup: rabbits on the back rank, then D H C M E C H D
    /// for gold; silver mirrors it with elephant d7 and camel e7.
    pub fn standard(side: Side) -> Setup {
        let order = |side| {
            let row = b"DHCMECHD";
            let mut v = Vec::with_capacity(16);
            for f in 0..8u8 {
                let (back, front) = match side {
                    Side::First => (f, 8 + f),
                    Side::Second => (56 + f, 48 + f),
                };
                v.push((back, PieceType::Rabbit));
                let letter = match side {
                    Side::First => row[f as usize],
                    // Silver's elephant and camel swap files (d7 e, e7 m).
                    Side::Second => b"DHCEMCHD"[f as usize],
                };
                let kind = PieceType::ALL
                    .into_iter()
                    .find(|k| k.letter() as u8 == letter)
                    .expect("letter");
                v.push((front, kind));
            }
            v
        };
        Setup::new(side, order(side)).expect("the standard setup is legal")
    }
}

impl Setup {
    /// A uniformly random placement of `side`'s pieces on its home ranks.
    pub fn random(side: Side, rng: &mut SeededRng) -> Setup {
        let base: u8 = match side {
            Side::First => 0,
            Side::Second => 48,
        };
        let mut squares: Vec<u8> = (base..base + 16).collect();
        squares.shuffle(rng);
        let mut kinds = Vec::with_capacity(16);
        for (k, &n) in PieceType::COUNTS.iter().enumerate() {
            kinds.extend(std::iter::repeat_n(PieceType::from_index(k), n as usize));
        }
        Setup::new(side, squares.into_iter().zip(kinds).collect()).expect("a full random setup")
    }
}

/// Draws setups from a collection seen in game records, gold's and silver's
/// independently.
#[derive(Clone, Debug)]
pub struct SetupSampler {
    gold: Vec<Setup>,
    silver: Vec<Setup>,
}

impl SetupSampler {
    /// From (gold, silver) setups; each list needs at least one entry.
    pub fn new(
        pairs: impl IntoIterator<Item = (Setup, Setup)>,
    ) -> Result<SetupSampler, SetupError> {
        let (gold, silver): (Vec<Setup>, Vec<Setup>) = pairs.into_iter().unzip();
        if gold.is_empty() {
            return Err(SetupError::NoSetups);
        }
        if gold.iter().any(|s| s.side != Side::First)
            || silver.iter().any(|s| s.side != Side::Second)
        {
            return Err(SetupError::NotPairs);
        }
        Ok(SetupSampler { gold, silver })
    }

    /// The setups of games given as (gold's, silver's) notation, as game
    /// records store them; pairs that do not read as setups are skipped.
    pub fn from_notations<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<SetupSampler, SetupError> {
        let pairs = pairs.into_iter().filter_map(|(gold, silver)| {
            let g = Setup::parse(Side::First, gold).ok()?;
            let s = Setup::parse(Side::Second, silver).ok()?;
            Some((g, s))
        });
        SetupSampler::new(pairs)
    }

    pub fn len(&self) -> usize {
        self.gold.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gold.is_empty()
    }

    /// A gold and a silver setup, each drawn uniformly.
    pub fn sample(&self, rng: &mut SeededRng) -> (Setup, Setup) {
        let g = rng.random_range(0..self.gold.len());
        let s = rng.random_range(0..self.silver.len());
        (self.gold[g].clone(), self.silver[s].clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::seeded_rng;

    #[test]
    fn random_setups_are_legal_and_seeded() {
        let mut rng = seeded_rng(7, 0);
        let a = Setup::random(Side::Second, &mut rng);
        assert_eq!(a.placements.len(), 16);
        assert!(a.placements.iter().all(|&(sq, _)| sq >= 48));
        assert_eq!(Setup::parse(Side::Second, &a.to_notation()).unwrap(), a);
        let again = Setup::random(Side::Second, &mut seeded_rng(7, 0));
        assert_eq!(a, again);
        let other = Setup::random(Side::Second, &mut seeded_rng(8, 0));
        assert_ne!(a, other);
    }

    #[test]
    fn the_sampler_draws_only_given_setups() {
        let mut rng = seeded_rng(1, 0);
        let pairs: Vec<_> = (0..5)
            .map(|_| {
                (
                    Setup::random(Side::First, &mut rng),
                    Setup::random(Side::Second, &mut rng),
                )
            })
            .collect();
        let sampler = SetupSampler::new(pairs.clone()).unwrap();
        for _ in 0..50 {
            let (g, s) = sampler.sample(&mut rng);
            assert!(pairs.iter().any(|(pg, _)| *pg == g));
            assert!(pairs.iter().any(|(_, ps)| *ps == s));
        }
        assert!(SetupSampler::new(Vec::new()).is_err());
    }

    #[test]
    fn the_sampler_reads_the_setups_of_imported_games() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/arimaa/fake_archive.txt");
        let (records, summary) = crate::record::arimaa_archive::import_file(
            std::path::Path::new(path),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(summary.kept, 12);
        let sampler = SetupSampler::from_notations(
            records
                .iter()
                .map(|r| (r.setups[0].as_str(), r.setups[1].as_str())),
        )
        .unwrap();
        assert_eq!(sampler.len(), 12);
        let (g, s) = sampler.sample(&mut seeded_rng(3, 0));
        assert!(records.iter().any(|r| r.setups[0] == g.to_notation()));
        assert!(records.iter().any(|r| r.setups[1] == s.to_notation()));
    }
}
