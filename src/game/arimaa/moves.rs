//! A full move: one to four steps, packed into a `u32` so that moves are
//! small `Copy` values that search and move lists can hold by the thousand.

use super::step::Step;

/// One turn of 1 to 4 steps (captures are implied by the steps).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Move {
    packed: u32,
    len: u8,
}

impl Move {
    pub const EMPTY: Move = Move { packed: 0, len: 0 };

    /// A move of the given steps; `None` for more than 4.
    pub fn from_steps(steps: &[Step]) -> Option<Move> {
        if steps.len() > 4 {
            return None;
        }
        let mut m = Move::EMPTY;
        for &s in steps {
            m = m.with(s);
        }
        Some(m)
    }

    /// This move followed by one more step (at most 4 in all).
    #[inline(always)]
    pub fn with(self, step: Step) -> Move {
        debug_assert!(self.len < 4);
        Move {
            packed: self.packed | (step.pack() as u32) << (8 * self.len),
            len: self.len + 1,
        }
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn step(&self, i: usize) -> Step {
        assert!(
            i < self.len as usize,
            "step {i} of a {}-step move",
            self.len
        );
        Step::unpack((self.packed >> (8 * i)) as u8)
    }

    pub fn steps(&self) -> impl Iterator<Item = Step> + '_ {
        (0..self.len as usize).map(|i| self.step(i))
    }
}

impl std::fmt::Debug for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let steps: Vec<String> = self
            .steps()
            .map(|s| {
                format!(
                    "{}{}",
                    super::bitboard::square_name(s.from),
                    s.dir().letter()
                )
            })
            .collect();
        write!(f, "Move({})", steps.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_pack_and_unpack() {
        let steps = [
            Step::new(12, 20),
            Step::new(20, 21),
            Step::new(63, 55),
            Step::new(9, 8),
        ];
        let m = Move::from_steps(&steps).unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!(m.steps().collect::<Vec<_>>(), steps);
        assert!(Move::from_steps(&[steps[0]; 5]).is_none());
        assert_ne!(Move::from_steps(&steps[..2]), Move::from_steps(&steps[..3]));
    }
}
