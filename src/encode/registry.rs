//! Encoders by name for the games whose encoders depend on the board size.

use super::{
    by_name, AmazonsEncoder, AmazonsRepr, AmazonsTerritoryEncoder, EncodeError, Encoder, StoneGrid,
    Stones2,
};
use crate::game::Amazons;

/// The Amazons encoders by name (`amazons-units`, `amazons-mobility`,
/// `amazons-bits`, `amazons-territory`) for boards of `size`.
pub fn amazons_encoder(name: &str, size: usize) -> Result<Box<dyn Encoder<Amazons>>, EncodeError> {
    let all = [AmazonsRepr::Units, AmazonsRepr::Mobility, AmazonsRepr::Bits];
    let mut encoders: Vec<Box<dyn Encoder<Amazons>>> = all
        .map(|r| Box::new(AmazonsEncoder::new(r, size)) as Box<dyn Encoder<Amazons>>)
        .into();
    encoders.push(Box::new(AmazonsTerritoryEncoder::new(size)));
    by_name(name, encoders)
}

/// The stone-grid encoders (`stones-2`) for Tic-tac-toe, Pentago, Gomoku
/// and Atari-Go boards of `size`.
pub fn stones_encoder<G: StoneGrid>(
    name: &str,
    size: usize,
) -> Result<Box<dyn Encoder<G>>, EncodeError> {
    by_name(name, vec![Box::new(Stones2::new(size))])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Gomoku;

    #[test]
    fn names_resolve_and_unknown_names_list_the_known_ones() {
        for name in [
            "amazons-units",
            "amazons-mobility",
            "amazons-bits",
            "amazons-territory",
        ] {
            assert_eq!(amazons_encoder(name, 6).unwrap().spec().name, name);
        }
        let e = amazons_encoder("amazons-x", 6).err().unwrap().to_string();
        assert!(e.contains("amazons-bits"), "{e}");
        assert_eq!(
            stones_encoder::<Gomoku>("stones-2", 9)
                .unwrap()
                .spec()
                .shape,
            [2, 9, 9]
        );
        assert!(stones_encoder::<Gomoku>("stones-3", 9).is_err());
    }
}
