//! A player wrapper that adds up the time spent choosing moves, for
//! reports of thinking time per move (matches at equal time).

use super::{Budget, GameSession, Player};
use crate::game::Game;
use crate::search::Chosen;
use crate::util::SeededRng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub struct TimedPlayer<G: Game> {
    inner: Arc<dyn Player<G>>,
    nanos: AtomicU64,
    moves: AtomicU64,
}

impl<G: Game> TimedPlayer<G> {
    pub fn new(inner: Arc<dyn Player<G>>) -> Self {
        TimedPlayer {
            inner,
            nanos: AtomicU64::new(0),
            moves: AtomicU64::new(0),
        }
    }

    /// Moves chosen so far.
    pub fn moves(&self) -> u64 {
        self.moves.load(Ordering::Relaxed)
    }

    /// Mean seconds per move chosen (0 before the first).
    pub fn seconds_per_move(&self) -> f64 {
        let n = self.moves();
        if n == 0 {
            0.0
        } else {
            self.nanos.load(Ordering::Relaxed) as f64 / 1e9 / n as f64
        }
    }

    fn add(&self, since: Instant) {
        self.nanos
            .fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
        self.moves.fetch_add(1, Ordering::Relaxed);
    }
}

impl<G: Game> Player<G> for TimedPlayer<G> {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn choose_within(&self, state: &G, budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        let t = Instant::now();
        let mv = self.inner.choose_within(state, budget, rng);
        self.add(t);
        mv
    }

    fn session(&self) -> Box<dyn GameSession<G> + '_> {
        Box::new(TimedSession {
            owner: self,
            inner: self.inner.session(),
        })
    }
}

struct TimedSession<'a, G: Game> {
    owner: &'a TimedPlayer<G>,
    inner: Box<dyn GameSession<G> + 'a>,
}

impl<G: Game> GameSession<G> for TimedSession<'_, G> {
    fn choose_within(&mut self, state: &G, budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        let t = Instant::now();
        let mv = self.inner.choose_within(state, budget, rng);
        self.owner.add(t);
        mv
    }

    fn observe(&mut self, before: &G, mv: G::Move) {
        self.inner.observe(before, mv);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;
    use crate::search::RandomPlayer;

    #[test]
    fn counts_moves_through_sessions_and_direct_calls() {
        let p = TimedPlayer::new(Arc::new(RandomPlayer));
        let mut rng = crate::util::seeded_rng(1, 0);
        let g = TicTacToe::new();
        p.choose(&g, &mut rng).unwrap();
        let mut s = p.session();
        s.choose(&g, &mut rng).unwrap();
        assert_eq!(p.moves(), 2);
        assert!(p.seconds_per_move() >= 0.0);
        assert_eq!(p.name(), "random");
    }
}
