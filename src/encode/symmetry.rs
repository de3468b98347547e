//! Board symmetries an encoding is invariant under: mapping every plane of
//! an encoded position by one of them gives the encoding of an equally
//! good position with the same globals and the same result. Training
//! draws one at random per example (`plies train --augment`), which
//! multiplies a small database's positions without playing more games.

use serde::{Deserialize, Serialize};

/// The symmetry group of an encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Symmetries {
    /// None declared: positions are served as stored.
    #[default]
    None,
    /// The 8 rotations and reflections of a square board (the dihedral
    /// group): games whose rules and encoding treat every direction alike,
    /// with globals that are counts over the board.
    Dihedral,
}

impl Symmetries {
    /// How many maps the group has (the identity included).
    pub fn count(self) -> usize {
        match self {
            Symmetries::None => 1,
            Symmetries::Dihedral => 8,
        }
    }

    /// Whether the group maps a `[C, H, W]` encoding onto itself.
    pub fn fits(self, shape: [usize; 3]) -> bool {
        match self {
            Symmetries::None => true,
            Symmetries::Dihedral => shape[1] == shape[2],
        }
    }

    /// Appends `planes` (`[C, H, W]`, row-major) mapped by element `k` (in
    /// `0..count()`, 0 the identity) to `out`, converting each value by
    /// `convert`.
    pub fn map_into<T>(
        self,
        k: usize,
        planes: &[i8],
        shape: [usize; 3],
        out: &mut Vec<T>,
        convert: impl Fn(i8) -> T,
    ) {
        let [c, h, w] = shape;
        debug_assert_eq!(planes.len(), c * h * w);
        debug_assert!(k < self.count() && self.fits(shape));
        if k == 0 {
            out.extend(planes.iter().map(|&v| convert(v)));
            return;
        }
        // Element k: transpose if bit 2, then flip the rows if bit 0 and
        // the columns if bit 1; each target square reads its source.
        let n = h;
        for plane in planes.chunks_exact(h * w) {
            for r in 0..n {
                for col in 0..n {
                    let (mut sr, mut sc) = if k & 4 != 0 { (col, r) } else { (r, col) };
                    if k & 1 != 0 {
                        sr = n - 1 - sr;
                    }
                    if k & 2 != 0 {
                        sc = n - 1 - sc;
                    }
                    out.push(convert(plane[sr * n + sc]));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped(k: usize, planes: &[i8], shape: [usize; 3]) -> Vec<i8> {
        let mut out = Vec::new();
        Symmetries::Dihedral.map_into(k, planes, shape, &mut out, |v| v);
        out
    }

    #[test]
    fn the_eight_maps_are_distinct_permutations_of_every_plane() {
        // Two 3x3 planes of distinct values: each map permutes each plane.
        let shape = [2, 3, 3];
        let planes: Vec<i8> = (0..18).collect();
        let images: Vec<Vec<i8>> = (0..8).map(|k| mapped(k, &planes, shape)).collect();
        for img in &images {
            for p in 0..2 {
                let mut sorted = img[p * 9..(p + 1) * 9].to_vec();
                sorted.sort_unstable();
                assert_eq!(sorted, planes[p * 9..(p + 1) * 9]);
            }
        }
        for a in 0..8 {
            for b in a + 1..8 {
                assert_ne!(images[a], images[b], "maps {a} and {b} agree");
            }
        }
        assert_eq!(images[0], planes);
    }

    #[test]
    fn a_quarter_turn_and_the_reflections_move_the_corner_as_expected() {
        // The top-left corner marked on a 3x3 board.
        let mut board = vec![0i8; 9];
        board[0] = 1;
        let corner = |k| mapped(k, &board, [1, 3, 3]).iter().position(|&v| v == 1);
        assert_eq!(corner(1), Some(6)); // rows flipped: bottom-left
        assert_eq!(corner(2), Some(2)); // columns flipped: top-right
        assert_eq!(corner(3), Some(8)); // both: bottom-right
        assert_eq!(corner(4), Some(0)); // the transpose keeps the diagonal
                                        // Every map of the group is closed: mapping twice stays within it.
        let all: Vec<Vec<i8>> = (0..8)
            .map(|k| mapped(k, &(0..9).collect::<Vec<i8>>(), [1, 3, 3]))
            .collect();
        for a in 0..8 {
            for b in 0..8 {
                let twice = mapped(b, &all[a], [1, 3, 3]);
                assert!(all.contains(&twice), "{a} then {b} left the group");
            }
        }
    }

    #[test]
    fn only_square_boards_fit_the_dihedral_group() {
        assert!(Symmetries::Dihedral.fits([4, 10, 10]));
        assert!(!Symmetries::Dihedral.fits([2, 6, 7]));
        assert!(Symmetries::None.fits([2, 6, 7]));
    }
}
