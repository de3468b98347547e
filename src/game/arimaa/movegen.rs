//! Full-turn generation: every distinct position reachable in 1 to 4 steps
//! (not stopping in the middle of a push), minus the unchanged board, each
//! with one shortest step sequence. This is what pyrimaa's `get_moves`
//! returns, computed by a depth-first search over steps that
//!
//! * merges transpositions of partial turns in a table keyed by the board
//!   and the turn state (steps left, a pending push, a usable pull), where a
//!   pull option no enemy piece can use is dropped so more states merge;
//! * does not build positions for the last step of a turn: the resulting
//!   board's hash is the current hash xor the step's keys (and a capture's),
//!   and only that hash goes into the table of results;
//! * skips a last step that commutes with the plain step before it when the
//!   two are out of a fixed order (the other order reaches the same board).
//!
//! Results are told apart by their 64-bit Zobrist hash; two different boards
//! would have to collide in 64 bits to merge.

use super::bitboard::{neighbors, trap_next_to, TRAP_NEIGHBORS};
use super::moves::Move;
use super::position::Position;
use super::step::{Step, StepKind, TurnState, MAX_STEPS};
use super::zobrist;

/// Reusable buffers for move generation; keep one per thread.
pub struct MoveGen {
    results: ResultTable,
    seen: KeySet,
    /// Steps generated since the last `reset_counters` (the benchmark's "step nodes").
    pub steps_generated: u64,
}

impl Default for MoveGen {
    fn default() -> Self {
        Self::new()
    }
}

impl MoveGen {
    pub fn new() -> MoveGen {
        MoveGen {
            results: ResultTable::with_capacity_pow2(15),
            seen: KeySet::with_capacity_pow2(14),
            steps_generated: 0,
        }
    }

    pub fn reset_counters(&mut self) {
        self.steps_generated = 0;
    }

    /// Appends the distinct moves of `pos` (the side to move's turn, from
    /// its start) to `out`, which is cleared first.
    pub fn generate(&mut self, pos: &Position, out: &mut Vec<Move>) {
        self.search(pos);
        out.clear();
        out.extend(self.results.moves());
    }

    /// Like [`MoveGen::generate`], with each move's resulting board hash
    /// ([`Position::board_hash`]).
    pub fn generate_with_hashes(&mut self, pos: &Position, out: &mut Vec<(Move, u64)>) {
        self.search(pos);
        out.clear();
        out.extend(self.results.entries());
    }

    /// The number of distinct moves of `pos`.
    pub fn count(&mut self, pos: &Position) -> usize {
        self.search(pos);
        self.results.len
    }

    fn search(&mut self, pos: &Position) {
        self.results.clear();
        self.seen.clear();
        let root = pos.hash;
        self.expand(pos, TurnState::START, Move::EMPTY, None, root);
    }

    /// `prev` is the step that led here when it was a plain step of our own
    /// piece (on the first path to reach this state).
    fn expand(
        &mut self,
        pos: &Position,
        state: TurnState,
        mv: Move,
        prev: Option<Step>,
        root: u64,
    ) {
        if state.steps_left == 1 {
            // Two plain steps far apart commute, so a last step `s` smaller
            // than the plain step `t` that led here is skipped: the state
            // before `t` was expanded, `s` is legal there, and from the state
            // it reaches `t` is a last step giving the same board. That leaf
            // is skipped in turn only for a first-path step larger than `t`,
            // so along such a chain the steps grow and one leaf is kept.
            let (near, prev_code) = match prev {
                Some(p) => (ZONE3[p.from as usize] | ZONE3[p.to as usize], p.pack()),
                None => (!0, 0),
            };
            let results = &mut self.results;
            let mut n = 0u64;
            pos.for_each_step(&state, |step, kind| {
                n += 1;
                if kind == StepKind::Step
                    && ((1u64 << step.from) | (1u64 << step.to)) & near == 0
                    && step.pack() < prev_code
                {
                    return;
                }
                let hash = hash_after_step(pos, step);
                if hash != root {
                    results.insert(hash, mv.with(step));
                }
            });
            self.steps_generated += n;
            return;
        }
        // Gathered in place (not `Position::step_list`'s returned copy):
        // this loop is the generator's hot path.
        let mut steps = [(Step::new(0, 0), StepKind::Step); MAX_STEPS];
        let mut n = 0;
        pos.for_each_step(&state, |s, k| {
            steps[n] = (s, k);
            n += 1;
        });
        self.steps_generated += n as u64;
        for &(step, kind) in &steps[..n] {
            let mut child = *pos;
            let (next, _) = child.apply_step(&state, step, kind);
            let next_mv = mv.with(step);
            if next.can_end() && child.hash != root {
                self.results.insert(child.hash, next_mv);
            }
            let next = next.normalized(&child);
            if self.seen.insert(child.hash ^ next.key()) {
                let prev = (kind == StepKind::Step).then_some(step);
                self.expand(&child, next, next_mv, prev, root);
            }
        }
    }
}

/// Squares within Manhattan distance 3 of each square: two plain steps whose
/// squares are all farther apart than this cannot affect each other (through
/// occupancy, freezing, or the support of a trap).
static ZONE3: [u64; 64] = {
    let mut z = [0u64; 64];
    let mut a = 0;
    while a < 64 {
        let mut b = 0;
        while b < 64 {
            let (fa, ra, fb, rb): (usize, usize, usize, usize) = (a % 8, a / 8, b % 8, b / 8);
            if fa.abs_diff(fb) + ra.abs_diff(rb) <= 3 {
                z[a] |= 1u64 << b;
            }
            b += 1;
        }
        a += 1;
    }
    z
};

/// Trap next to each square, or 64 for none.
static TRAP_OF: [u8; 64] = {
    let mut t = [64u8; 64];
    let mut sq = 0;
    while sq < 64 {
        if let Some(trap) = trap_next_to(sq as u8) {
            t[sq] = trap;
        }
        sq += 1;
    }
    t
};

/// The board hash after `step`, without playing it.
#[inline(always)]
fn hash_after_step(pos: &Position, step: Step) -> u64 {
    let (from, to) = (step.from as usize, step.to as usize);
    let code = pos.board[from] as usize;
    let keys = &zobrist::PIECE[code];
    let mut hash = pos.hash ^ keys[from] ^ keys[to];
    if TRAP_NEIGHBORS >> from & 1 == 1 {
        let trap = TRAP_OF[from] as usize;
        let side = (code - 1) / 6;
        let own = pos.occ[side] ^ (1u64 << from) ^ (1u64 << to);
        if own >> trap & 1 == 1 && neighbors(1u64 << trap) & own == 0 {
            let victim = if trap == to {
                code
            } else {
                pos.board[trap] as usize
            };
            hash ^= zobrist::PIECE[victim][trap];
        }
    }
    hash
}

/// Open-addressing map from a result board's hash to its shortest move.
/// Keys and moves live apart: most inserts find the key already there and,
/// for a full-length move, need not look at the stored move at all, so a
/// probe touches only the (smaller, better cached) key array.
struct ResultTable {
    keys: Vec<u64>,
    moves: Vec<Move>,
    /// Occupied slots, so clearing costs the entries used, not the capacity.
    used: Vec<u32>,
    mask: usize,
    len: usize,
}

/// Hash 0 marks an empty slot; a real hash of 0 is stored as this instead.
const ZERO_KEY: u64 = 0x8000_0000_0000_0001;

impl ResultTable {
    fn with_capacity_pow2(bits: u32) -> Self {
        let size = 1usize << bits;
        ResultTable {
            keys: vec![0; size],
            moves: vec![Move::EMPTY; size],
            used: Vec::with_capacity(size / 2),
            mask: size - 1,
            len: 0,
        }
    }

    fn clear(&mut self) {
        for &i in &self.used {
            self.keys[i as usize] = 0;
        }
        self.used.clear();
        self.len = 0;
    }

    #[inline(always)]
    fn insert(&mut self, hash: u64, mv: Move) {
        let key = if hash == 0 { ZERO_KEY } else { hash };
        let mut i = (key as usize) & self.mask;
        loop {
            let k = self.keys[i];
            if k == key {
                if mv.len() < 4 && self.moves[i].len() > mv.len() {
                    self.moves[i] = mv;
                }
                return;
            }
            if k == 0 {
                self.keys[i] = key;
                self.moves[i] = mv;
                self.used.push(i as u32);
                self.len += 1;
                if self.len * 2 > self.keys.len() {
                    self.grow();
                }
                return;
            }
            i = (i + 1) & self.mask;
        }
    }

    fn grow(&mut self) {
        let old: Vec<(u64, Move)> = self
            .used
            .iter()
            .map(|&i| (self.keys[i as usize], self.moves[i as usize]))
            .collect();
        let size = self.keys.len() * 2;
        self.keys = vec![0; size];
        self.moves = vec![Move::EMPTY; size];
        self.used.clear();
        self.mask = size - 1;
        self.len = 0;
        for (k, m) in old {
            self.insert(k, m);
        }
    }

    fn moves(&self) -> impl Iterator<Item = Move> + '_ {
        self.entries().map(|(m, _)| m)
    }

    fn entries(&self) -> impl Iterator<Item = (Move, u64)> + '_ {
        self.used.iter().map(|&i| {
            let k = self.keys[i as usize];
            (self.moves[i as usize], if k == ZERO_KEY { 0 } else { k })
        })
    }
}

/// Open-addressing set of 64-bit keys.
struct KeySet {
    keys: Vec<u64>,
    used: Vec<u32>,
    mask: usize,
    len: usize,
}

impl KeySet {
    fn with_capacity_pow2(bits: u32) -> Self {
        let size = 1usize << bits;
        KeySet {
            keys: vec![0; size],
            used: Vec::with_capacity(size / 2),
            mask: size - 1,
            len: 0,
        }
    }

    fn clear(&mut self) {
        for &i in &self.used {
            self.keys[i as usize] = 0;
        }
        self.used.clear();
        self.len = 0;
    }

    /// True when the key was not there before.
    #[inline(always)]
    fn insert(&mut self, key: u64) -> bool {
        let key = if key == 0 { ZERO_KEY } else { key };
        let mut i = (key as usize) & self.mask;
        loop {
            let k = self.keys[i];
            if k == key {
                return false;
            }
            if k == 0 {
                self.keys[i] = key;
                self.used.push(i as u32);
                self.len += 1;
                if self.len * 2 > self.keys.len() {
                    self.grow();
                }
                return true;
            }
            i = (i + 1) & self.mask;
        }
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.keys);
        let size = old.len() * 2;
        self.keys = vec![0; size];
        self.used.clear();
        self.mask = size - 1;
        self.len = 0;
        for k in old {
            if k != 0 {
                self.insert(k);
            }
        }
    }
}
