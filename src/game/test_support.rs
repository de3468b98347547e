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
