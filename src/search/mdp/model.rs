//! The bucketed MDP of one seat and the two-seat model file.
//!
//! A seat's states are the buckets of the boards it moves to (its
//! afterstates). Its transition model counts, over self-play, which
//! afterstate bucket followed which (the game's end is a move to bucket 0
//! or 1, the winner's); on top of the counts lies a uniform prior of
//! `prior` transitions spread over all buckets, so an unseen bucket leads
//! anywhere alike. The reward is `+reward` in the seat's own win bucket and
//! `-reward` in the other, paid there once: those two buckets end the
//! chain. Values solve `V(s) = R(s) + gamma * sum_s' P(s' | s) V(s')` by
//! value iteration to a tolerance.

use super::MdpError;
use crate::game::Side;
use crate::util::write_atomic;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The `format` field of a model file.
pub const MDP_FORMAT: &str = "plies-mdp";
pub const MDP_VERSION: u32 = 1;

/// The learner's settings, stored with its model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MdpSettings {
    pub buckets: usize,
    pub gamma: f64,
    pub tolerance: f64,
    pub reward: f64,
    /// Transitions of the uniform prior, per bucket.
    pub prior: f64,
}

impl Default for MdpSettings {
    /// The paper's best settings: 1,500 buckets, gamma 0.9, tolerance
    /// 0.001, reward +-10 (and one prior transition per bucket).
    fn default() -> Self {
        MdpSettings {
            buckets: 1500,
            gamma: 0.9,
            tolerance: 0.001,
            reward: 10.0,
            prior: 1.0,
        }
    }
}

/// One seat's transition counts and bucket values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeatModel {
    /// `(next bucket, count)` for each bucket, in order of first sight.
    pub transitions: Vec<Vec<(u32, u32)>>,
    pub values: Vec<f64>,
}

impl SeatModel {
    pub fn new(buckets: usize) -> Self {
        SeatModel {
            transitions: vec![Vec::new(); buckets],
            values: vec![0.0; buckets],
        }
    }

    /// Counts one transition `from -> to`.
    pub fn count(&mut self, from: usize, to: usize) {
        let row = &mut self.transitions[from];
        match row.iter_mut().find(|(next, _)| *next as usize == to) {
            Some((_, c)) => *c += 1,
            None => row.push((to as u32, 1)),
        }
    }

    /// The reward of each bucket for `seat`.
    pub fn rewards(buckets: usize, seat: Side, reward: f64) -> Vec<f64> {
        let mut r = vec![0.0; buckets];
        r[super::win_bucket(seat)] = reward;
        r[super::win_bucket(seat.other())] = -reward;
        r
    }

    /// Value iteration from the current values until no value moves by
    /// `tolerance` or more; returns the sweeps made.
    pub fn solve(&mut self, rewards: &[f64], s: &MdpSettings) -> usize {
        value_iteration(
            &self.transitions,
            rewards,
            s.gamma,
            s.prior,
            s.tolerance,
            &mut self.values,
        )
    }
}

/// Jacobi value iteration of `V(s) = R(s) + gamma * E[V(s')]` over counted
/// transitions with a uniform prior of `prior` transitions per state;
/// states 0 and 1 are terminal (`V = R`). Stops when a sweep moves no value
/// by `tolerance` or more (or after 100,000 sweeps); returns the sweeps.
pub fn value_iteration(
    transitions: &[Vec<(u32, u32)>],
    rewards: &[f64],
    gamma: f64,
    prior: f64,
    tolerance: f64,
    values: &mut [f64],
) -> usize {
    let n = values.len();
    let mut next = vec![0.0; n];
    for sweep in 1..=100_000 {
        let mean = values.iter().sum::<f64>() / n as f64;
        let mut moved = 0.0f64;
        for (s, row) in transitions.iter().enumerate() {
            next[s] = if s < 2 {
                rewards[s]
            } else {
                let total: u64 = row.iter().map(|&(_, c)| c as u64).sum();
                let counted: f64 = row
                    .iter()
                    .map(|&(t, c)| c as f64 * values[t as usize])
                    .sum();
                let expected = (counted + prior * mean) / (total as f64 + prior);
                rewards[s] + gamma * expected
            };
            moved = moved.max((next[s] - values[s]).abs());
        }
        values.copy_from_slice(&next);
        if moved < tolerance {
            return sweep;
        }
    }
    100_000
}

/// A trained model: one seat model per side, with its settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MdpModel {
    pub format: String,
    pub version: u32,
    pub game: String,
    pub settings: MdpSettings,
    /// Self-play games learned from.
    pub games: u64,
    /// How the model was made, for people.
    #[serde(default)]
    pub training: serde_json::Value,
    /// The first player's model, then the second's.
    pub seats: [SeatModel; 2],
}

impl MdpModel {
    pub fn new(game: &str, settings: MdpSettings) -> Self {
        MdpModel {
            format: MDP_FORMAT.into(),
            version: MDP_VERSION,
            game: game.into(),
            settings,
            games: 0,
            training: serde_json::Value::Null,
            seats: [
                SeatModel::new(settings.buckets),
                SeatModel::new(settings.buckets),
            ],
        }
    }

    pub fn seat(&self, side: Side) -> &SeatModel {
        &self.seats[side.index()]
    }

    /// Writes the model atomically.
    pub fn save(&self, path: &Path) -> Result<(), MdpError> {
        let text = serde_json::to_string(self).map_err(|e| MdpError::Encode {
            path: path.to_path_buf(),
            why: e.to_string(),
        })?;
        Ok(write_atomic(path, text.as_bytes())?)
    }

    /// Reads a model of `game` and checks it in full.
    pub fn load(path: &Path, game: &str) -> Result<Self, MdpError> {
        let text = crate::util::text::read_text(path).map_err(|source| MdpError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let m: MdpModel = serde_json::from_str(&text).map_err(|e| MdpError::Json {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            why: e.to_string(),
        })?;
        m.check(path, game)?;
        Ok(m)
    }

    fn check(&self, path: &Path, game: &str) -> Result<(), MdpError> {
        let field = |field: &str, found: String, expected: String| MdpError::Field {
            path: path.to_path_buf(),
            field: field.into(),
            found,
            expected,
        };
        if self.format != MDP_FORMAT {
            return Err(field(
                "format",
                format!("'{}'", self.format),
                format!("'{MDP_FORMAT}'"),
            ));
        }
        if self.version != MDP_VERSION {
            return Err(field(
                "version",
                self.version.to_string(),
                MDP_VERSION.to_string(),
            ));
        }
        if self.game != game {
            return Err(field(
                "game",
                format!("'{}'", self.game),
                format!("'{game}'"),
            ));
        }
        let n = self.settings.buckets;
        if n < 3 {
            return Err(field(
                "settings.buckets",
                n.to_string(),
                "at least 3".into(),
            ));
        }
        for (i, seat) in self.seats.iter().enumerate() {
            if seat.values.len() != n || seat.transitions.len() != n {
                return Err(field(
                    &format!("seats[{i}]"),
                    format!(
                        "{} values and {} transition rows",
                        seat.values.len(),
                        seat.transitions.len()
                    ),
                    format!("{n} of each (settings.buckets)"),
                ));
            }
            if let Some(b) = seat.values.iter().position(|v| !v.is_finite()) {
                return Err(field(
                    &format!("seats[{i}].values[{b}]"),
                    seat.values[b].to_string(),
                    "a finite number".into(),
                ));
            }
            for (b, row) in seat.transitions.iter().enumerate() {
                if let Some(&(t, _)) = row.iter().find(|(t, _)| *t as usize >= n) {
                    return Err(field(
                        &format!("seats[{i}].transitions[{b}]"),
                        format!("bucket {t}"),
                        format!("a bucket below {n}"),
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_iteration_solves_a_small_chain() {
        // Buckets 0 (win, +10), 1 (loss, -10); 2 goes to the win twice,
        // to the loss once and back to itself once; 3 always goes to 2.
        // V2 = 0.9 * (2 * 10 + 1 * -10 + V2) / 4  =>  V2 = 2.25 / 0.775;
        // V3 = 0.9 * V2. No prior.
        let mut t = vec![Vec::new(); 4];
        t[2] = vec![(0, 2), (1, 1), (2, 1)];
        t[3] = vec![(2, 5)];
        let r = SeatModel::rewards(4, Side::First, 10.0);
        assert_eq!(r, vec![10.0, -10.0, 0.0, 0.0]);
        let mut v = vec![0.0; 4];
        let sweeps = value_iteration(&t, &r, 0.9, 0.0, 1e-9, &mut v);
        let v2 = 2.25 / 0.775;
        assert!((v[2] - v2).abs() < 1e-7, "{v:?}");
        assert!((v[3] - 0.9 * v2).abs() < 1e-7, "{v:?}");
        assert_eq!((v[0], v[1]), (10.0, -10.0));
        assert!(sweeps > 10);
    }

    #[test]
    fn the_prior_spreads_an_unseen_bucket_over_all() {
        // Three buckets, nothing counted, prior 1: V2 = 0.9 * (10 - 10 + V2) / 3
        // => V2 = 0. For the second seat the rewards swap and V2 is still 0;
        // with one count 2 -> 0: V2 = 0.9 * (10 + (10 - 10 + V2) / 3) / 2
        // => V2 (1 - 0.15) = 4.5  =>  V2 = 4.5 / 0.85.
        let mut m = SeatModel::new(3);
        let s = MdpSettings {
            buckets: 3,
            tolerance: 1e-10,
            ..MdpSettings::default()
        };
        let r = SeatModel::rewards(3, Side::First, 10.0);
        m.solve(&r, &s);
        assert!(m.values[2].abs() < 1e-9, "{:?}", m.values);
        m.count(2, 0);
        m.solve(&r, &s);
        assert!((m.values[2] - 4.5 / 0.85).abs() < 1e-8, "{:?}", m.values);
        m.count(2, 0);
        assert_eq!(m.transitions[2], vec![(0, 2)]);
    }

    #[test]
    fn model_files_round_trip_and_bad_ones_are_named() {
        let (_d, path) = crate::util::scratch("m.json");
        let mut m = MdpModel::new(
            "pentago",
            MdpSettings {
                buckets: 5,
                ..MdpSettings::default()
            },
        );
        m.seats[1].count(3, 0);
        m.seats[1].values[3] = 0.1 + 0.2;
        m.save(&path).unwrap();
        assert_eq!(MdpModel::load(&path, "pentago").unwrap(), m);
        let e = MdpModel::load(&path, "connect-four")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'game'") && e.contains("'connect-four'"), "{e}");
        m.seats[0].values.pop();
        m.save(&path).unwrap();
        let e = MdpModel::load(&path, "pentago").unwrap_err().to_string();
        assert!(e.contains("seats[0]") && e.contains("4 values"), "{e}");
        std::fs::write(&path, "{\"format\": 3}").unwrap();
        let e = MdpModel::load(&path, "pentago").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }
}
