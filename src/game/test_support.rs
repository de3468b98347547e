//! What the rules engines' unit tests share.

use super::Game;

/// Plays `moves` in order; each must be legal.
pub fn play_all<G: Game>(g: &mut G, moves: &[&str]) {
    for m in moves {
        g.play_str(m).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
}

/// The legal moves of `g`.
pub fn legal<G: Game>(g: &G) -> Vec<G::Move> {
    let mut v = Vec::new();
    g.legal_moves(&mut v);
    v
}

/// Checks that each of `moves` reads back from its notation.
pub fn assert_notation_round_trips<G: Game>(g: &G, moves: impl IntoIterator<Item = G::Move>) {
    for mv in moves {
        assert_eq!(g.parse_move(&g.move_to_string(mv)).unwrap(), mv);
    }
}

/// Checks that each `(token, why)` is refused here with an error that
/// quotes the token and contains `why`.
pub fn assert_refused<G: Game>(g: &G, cases: &[(&str, &str)]) {
    for &(tok, why) in cases {
        let e = g.parse_move(tok).unwrap_err().to_string();
        assert!(e.contains(why) && e.contains(&format!("'{tok}'")), "{e}");
    }
}

/// The next number of a xorshift64 stream: the tests' fixed random boards.
pub fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// A subtraction game in which each turn is two plies by the same player:
/// each ply takes 1 or 2 from the counter, and whoever brings it to 0
/// wins at once. A search that backed values up by alternation would
/// credit the mover's second ply to the opponent.
#[derive(Clone, Copy, Debug)]
pub struct DoubleTurns {
    pub left: u32,
    pub mover: crate::game::Side,
    /// Plies still to play in this turn (2, then 1).
    pub plies_left: u8,
    pub ply: u32,
}

impl Game for DoubleTurns {
    type Move = u32;
    const NAME: &'static str = "double-turns";
    const DEFAULT_SIZE: usize = 1;

    fn new() -> Self {
        DoubleTurns {
            left: 9,
            mover: crate::game::Side::First,
            plies_left: 2,
            ply: 0,
        }
    }
    fn side_to_move(&self) -> crate::game::Side {
        self.mover
    }
    fn ply(&self) -> u32 {
        self.ply
    }
    fn legal_moves(&self, out: &mut Vec<u32>) {
        out.clear();
        if self.left > 0 {
            out.extend((1..=2).filter(|&k| k <= self.left));
        }
    }
    fn play(&mut self, take: u32) {
        self.left -= take;
        self.ply += 1;
        self.plies_left -= 1;
        if self.left > 0 && self.plies_left == 0 {
            self.mover = self.mover.other();
            self.plies_left = 2;
        }
    }
    fn outcome(&self) -> Option<crate::game::Outcome> {
        (self.left == 0).then_some(crate::game::Outcome::Win(self.mover))
    }
    fn move_to_string(&self, take: u32) -> String {
        take.to_string()
    }
    fn parse_move(&self, text: &str) -> Result<u32, crate::game::GameError> {
        text.parse().map_err(|_| crate::game::GameError::BadMove {
            token: text.into(),
            why: "not 1 or 2".into(),
        })
    }
    fn to_text(&self) -> String {
        format!("{self:?}")
    }
    fn from_text(text: &str) -> Result<Self, crate::game::GameError> {
        Err(crate::game::GameError::BadPosition {
            text: text.into(),
            why: "not read".into(),
        })
    }
    fn render(&self) -> String {
        self.to_text()
    }
    fn hash_key(&self) -> u64 {
        crate::game::hash_of(&(self.left, self.mover.index(), self.plies_left))
    }
}

impl crate::games::GameSupport for DoubleTurns {
    const KIND: crate::games::GameKind = crate::games::GameKind::TicTacToe;
    const ENCODERS: &'static [&'static str] = &[];
    fn encoder(
        name: &str,
        _size: usize,
    ) -> Result<Box<dyn crate::encode::Encoder<Self>>, crate::encode::EncodeError> {
        Err(crate::encode::EncodeError::Unknown {
            game: Self::NAME.into(),
            name: name.into(),
            known: Vec::new(),
        })
    }
}

/// Whether the side to move of `g` wins with perfect play.
pub fn double_turns_won(g: &DoubleTurns) -> bool {
    if let Some(crate::game::Outcome::Win(w)) = g.outcome() {
        return w == g.side_to_move();
    }
    let mut moves = Vec::new();
    g.legal_moves(&mut moves);
    moves.into_iter().any(|m| {
        let mut next = *g;
        next.play(m);
        match next.outcome() {
            Some(_) => true,
            None if next.side_to_move() == g.side_to_move() => double_turns_won(&next),
            None => !double_turns_won(&next),
        }
    })
}
