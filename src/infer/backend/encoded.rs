//! A batch of positions as every backend reads them.

use crate::encode::Encoder;
use crate::game::Game;

/// Encoded positions: int8 planes `[rows, C, H, W]` and f32 globals
/// `[rows, G]`, row by row.
#[derive(Clone, Debug, PartialEq)]
pub struct Encoded {
    pub rows: usize,
    /// `[C, H, W]`.
    pub shape: [usize; 3],
    pub globals_len: usize,
    pub planes: Vec<i8>,
    pub globals: Vec<f32>,
}

impl Encoded {
    /// `states` through `encoder`.
    pub fn new<G: Game>(encoder: &dyn Encoder<G>, states: &[G]) -> Self {
        let (plane_len, globals_len) = (encoder.plane_len(), encoder.globals_len());
        let mut planes = vec![0i8; states.len() * plane_len];
        let mut globals = vec![0f32; states.len() * globals_len];
        for (i, s) in states.iter().enumerate() {
            encoder.encode(
                s,
                &mut planes[i * plane_len..(i + 1) * plane_len],
                &mut globals[i * globals_len..(i + 1) * globals_len],
            );
        }
        Encoded {
            rows: states.len(),
            shape: encoder.shape(),
            globals_len,
            planes,
            globals,
        }
    }

    /// Values per row's planes.
    pub fn plane_len(&self) -> usize {
        self.shape.iter().product()
    }

    /// All planes as f32, `[rows, C, H, W]`.
    pub fn planes_f32(&self) -> Vec<f32> {
        self.planes.iter().map(|&v| f32::from(v)).collect()
    }

    /// Row `i` as one f32 input vector: its planes, then its globals (the
    /// input order of the plain-Rust networks).
    pub fn row_f32(&self, i: usize, out: &mut Vec<f32>) {
        let (p, g) = (self.plane_len(), self.globals_len);
        out.clear();
        out.extend(
            self.planes[i * p..(i + 1) * p]
                .iter()
                .map(|&v| f32::from(v)),
        );
        out.extend_from_slice(&self.globals[i * g..(i + 1) * g]);
    }
}
