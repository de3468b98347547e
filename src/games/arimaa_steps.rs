//! The support of Arimaa played one step at a time: its encoder, material,
//! Arimaa's setups and terminations, records that start from two setups
//! and list one step (or `pass`) per move.

use super::{GameKind, GameSupport, OpeningsChoice, SupportError};
use crate::encode::{ArimaaStepPlanes, EncodeError, Encoder};
use crate::game::arimaa::ArimaaSteps;
use crate::game::{Arimaa, Game};
use crate::infer::hand::arimaa_material::{material_balance, CLEAR_ADVANTAGE};
use crate::infer::hand::HandEval;
use crate::record::GameRecord;
use crate::util::SeededRng;

impl GameSupport for ArimaaSteps {
    const KIND: GameKind = GameKind::ArimaaSteps;
    const SIDE_NAMES: [&'static str; 2] = Arimaa::SIDE_NAMES;
    const ENCODERS: &'static [&'static str] = &[ArimaaStepPlanes::NAME];

    fn encoder(name: &str, _size: usize) -> Result<Box<dyn Encoder<Self>>, EncodeError> {
        if name == ArimaaStepPlanes::NAME {
            Ok(Box::new(ArimaaStepPlanes))
        } else {
            Err(EncodeError::Unknown {
                game: Self::NAME.into(),
                name: name.into(),
                known: Self::ENCODERS.to_vec(),
            })
        }
    }

    const HAND_EVALS: &'static [&'static str] = &["material"];

    /// Material of the board now, inside the turn as at its start.
    fn hand_eval(name: &str) -> Option<HandEval<Self>> {
        (name == "material").then(|| {
            HandEval::new(name, CLEAR_ADVANTAGE, |g: &ArimaaSteps| {
                let pos = g.position();
                material_balance(pos, pos.side_to_move())
            })
        })
    }

    fn openings(setups: Option<&str>) -> Result<OpeningsChoice, SupportError> {
        Arimaa::openings(setups)
    }

    fn start(
        size: usize,
        openings: &super::Openings,
        rng: &mut SeededRng,
    ) -> Result<(Self, Vec<String>), SupportError> {
        let (game, setups) = Arimaa::start(size, openings, rng)?;
        Ok((ArimaaSteps::from_game(game), setups))
    }

    fn record_start(rec: &GameRecord) -> Result<Self, SupportError> {
        super::check_record_game::<Self>(rec)?;
        super::arimaa::game_after_setups(rec).map(ArimaaSteps::from_game)
    }

    const TERMINATIONS: Option<&'static [&'static str]> = Arimaa::TERMINATIONS;
    const DEFAULT_TERMINATIONS: Option<&'static [&'static str]> = Arimaa::DEFAULT_TERMINATIONS;

    fn termination_name(&self) -> &'static str {
        self.turn_start().termination_name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Openings;

    #[test]
    fn games_start_from_arimaa_setups_and_records_replay() {
        let mut rng = crate::util::seeded_rng(1, 0);
        let (g, setups) = ArimaaSteps::start(8, &Openings::RandomSetups, &mut rng).unwrap();
        assert_eq!(setups.len(), 2);
        assert_eq!(g.side_to_move(), crate::game::Side::First);
        let mut rec = crate::games::tests::record(ArimaaSteps::NAME, None, setups);
        let back = ArimaaSteps::record_start(&rec).unwrap();
        assert_eq!(back.position(), g.position());
        rec.game = Arimaa::NAME.into();
        let err = ArimaaSteps::record_start(&rec).unwrap_err().to_string();
        assert!(err.contains("arimaa-steps"), "{err}");
        let eval = ArimaaSteps::hand_eval("material").unwrap();
        assert_eq!(crate::infer::Evaluator::name(&eval), "material");
        assert_eq!(g.termination_name(), "unfinished");
    }
}
