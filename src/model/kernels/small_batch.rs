//! `y = x w^T` for a few rows (a search's batch of positions) against a
//! large weight matrix, without packing it.
//!
//! gemm's blocked path first copies the whole of `w` into its own layout on
//! every call; for a 15x15 board's hidden layer that is 10 MB to move for a
//! batch of 24 positions, and its threads split the few rows badly. Here each
//! block of three (AVX2) or six (AVX-512) weight rows is read once, into L2,
//! and multiplied with every row of `x` in register tiles of four rows;
//! blocks of outputs go to different cores. On a 2-core Zen CPU, 24 rows of
//! 6912 inputs and 384 outputs take 389 us against gemm's 2,127.
//!
//! Every `y[r, j]` is summed in the same order whatever the number of rows
//! and wherever the row falls in a tile: a position gets the same bits alone
//! as in any batch, so batched and unbatched evaluation agree exactly.

use super::simd::Simd;
use rayon::prelude::*;

/// Rows of `x` per register tile.
const ROWS: usize = 4;
/// Rows of `w` (outputs) per register tile: three with 16 vector
/// registers, six with AVX-512's 32.
const OUTS: usize = 3;
const OUTS_512: usize = 6;
/// Floats per vector.
const LANES: usize = 8;
/// Below this many multiply-adds one thread does the whole product: the
/// Arimaa cnn3's single position (0.46M, 25 us) costs more to hand to
/// rayon's pool from a search thread than it gains.
const PARALLEL_WORK: usize = 1 << 20;

/// `y[r, j] = sum_k x[r, k] * w[j, k]`: `x` is `rows x inp`, `w` is
/// `out x inp` and `y` is `rows x out`, all dense row-major.
pub(crate) fn matmul_wt(x: &[f32], rows: usize, inp: usize, w: &[f32], out: usize, y: &mut [f32]) {
    matmul_wt_on(Simd::best(), x, rows, inp, w, out, y)
}

#[allow(clippy::too_many_arguments)]
fn matmul_wt_on(
    path: Simd,
    x: &[f32],
    rows: usize,
    inp: usize,
    w: &[f32],
    out: usize,
    y: &mut [f32],
) {
    assert!(x.len() >= rows * inp && w.len() >= out * inp && y.len() >= rows * out);
    if rows == 0 || out == 0 {
        return;
    }
    // Outputs first (`yt` is `out x rows`), so each task owns whole rows of
    // it; then one transpose, which is small next to the product.
    // Every tile writes its outputs: no clearing pass.
    let mut yt = super::bordered::output_vec(out * rows);
    let tasks = if rows * out * inp >= PARALLEL_WORK {
        rayon::current_num_threads() * 4
    } else {
        1
    };
    // Whole tiles of outputs per task.
    let per_task = out.div_ceil(tasks).div_ceil(OUTS_512) * OUTS_512;
    yt.par_chunks_mut(per_task * rows)
        .enumerate()
        .for_each(|(t, chunk)| {
            let j0 = t * per_task;
            let n = chunk.len() / rows;
            block(path, x, rows, inp, &w[j0 * inp..(j0 + n) * inp], n, chunk);
        });
    for (j, col) in yt.chunks_exact(rows).enumerate() {
        for (r, &v) in col.iter().enumerate() {
            y[r * out + j] = v;
        }
    }
}

/// `yt[j, r]` for the `n` weight rows of `w`.
fn block(path: Simd, x: &[f32], rows: usize, inp: usize, w: &[f32], n: usize, yt: &mut [f32]) {
    match path {
        Simd::Portable => portable::block(x, rows, inp, w, n, yt),
        // SAFETY: `Simd::available` saw the CPU's features.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { avx2::block(x, rows, inp, w, n, yt) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { avx512::block(x, rows, inp, w, n, yt) },
    }
}

/// Wider lanes folded in half, in a fixed order, down to [`finish`]'s eight.
#[inline(always)]
#[allow(dead_code)] // unused off x86_64
fn fold_lanes<const N: usize>(lanes: [f32; N]) -> [f32; LANES] {
    let mut v = lanes;
    let mut n = N;
    while n > LANES {
        n /= 2;
        for l in 0..n {
            v[l] += v[l + n];
        }
    }
    std::array::from_fn(|l| v[l])
}

/// The lanes' partial sums in a fixed order, then the tail.
#[inline(always)]
fn finish(lanes: [f32; LANES], x_tail: &[f32], w_tail: &[f32]) -> f32 {
    let pairs = [
        lanes[0] + lanes[4],
        lanes[1] + lanes[5],
        lanes[2] + lanes[6],
        lanes[3] + lanes[7],
    ];
    let mut s = (pairs[0] + pairs[2]) + (pairs[1] + pairs[3]);
    for (a, b) in x_tail.iter().zip(w_tail) {
        s += a * b;
    }
    s
}

/// Walks the output in tiles of up to `ROWS` rows of `x` by `outs` rows of
/// `w`, in the order every path takes them: `tile(r0, j0, r, j)` for rows
/// `r0..r0 + r` of `x` and `j0..j0 + j` of `w`.
#[inline(always)]
fn for_tiles(rows: usize, n: usize, outs: usize, mut tile: impl FnMut(usize, usize, usize, usize)) {
    let mut j0 = 0;
    while j0 < n {
        let j = (n - j0).min(outs);
        let mut r0 = 0;
        while r0 < rows {
            let r = (rows - r0).min(ROWS);
            tile(r0, j0, r, j);
            r0 += r;
        }
        j0 += j;
    }
}

/// One vector path, the same code over a vector type: `block` walks tiles
/// of `ROWS` rows of `x` by `$outs` rows of `w`, each lane summing its
/// products in input order.
macro_rules! vector_path {
    (
        $name:ident, $feature:literal, $vec:ident, $lanes:literal, $outs:literal,
        $zero:ident, $load:ident, $store:ident, $fma:ident, $arms:tt
    ) => {
        #[cfg(target_arch = "x86_64")]
        mod $name {
    use super::{finish, fold_lanes, for_tiles};
    const LANES: usize = $lanes;
    const OUTS: usize = $outs;
    use std::arch::x86_64::*;

    #[target_feature(enable = $feature)]
    pub(super) fn block(x: &[f32], rows: usize, inp: usize, w: &[f32], n: usize, yt: &mut [f32]) {
        let whole = inp / LANES * LANES;
        for_tiles(rows, n, OUTS, |r0, j0, r, j| {
            dispatch_tile(x, rows, inp, whole, w, yt, r0, j0, r, j)
        });
    }

    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = $feature)]
    fn dispatch_tile(
        x: &[f32],
        rows: usize,
        inp: usize,
        whole: usize,
        w: &[f32],
        yt: &mut [f32],
        r0: usize,
        j0: usize,
        r: usize,
        j: usize,
    ) {
        macro_rules! go {
            ($r:literal, $j:literal) => {
                tile::<$r, $j>(x, rows, inp, whole, w, yt, r0, j0)
            };
        }
        vector_path!(@arms go, r, j, $arms)
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    #[target_feature(enable = $feature)]
    fn tile<const R: usize, const J: usize>(
        x: &[f32],
        rows: usize,
        inp: usize,
        whole: usize,
        w: &[f32],
        yt: &mut [f32],
        r0: usize,
        j0: usize,
    ) {
        let xs: [&[f32]; R] = std::array::from_fn(|i| &x[(r0 + i) * inp..(r0 + i + 1) * inp]);
        let ws: [&[f32]; J] = std::array::from_fn(|i| &w[(j0 + i) * inp..(j0 + i + 1) * inp]);
        let mut acc = [[$zero(); J]; R];
        let mut k = 0;
        while k < whole {
            // SAFETY: k + LANES <= whole <= inp, the length of every row.
            unsafe {
                let wv: [$vec; J] =
                    std::array::from_fn(|i| $load(ws[i].as_ptr().add(k)));
                for (acc_r, xr) in acc.iter_mut().zip(&xs) {
                    let xv = $load(xr.as_ptr().add(k));
                    for (a, &wv) in acc_r.iter_mut().zip(&wv) {
                        *a = $fma(xv, wv, *a);
                    }
                }
            }
            k += LANES;
        }
        for (i, acc_r) in acc.iter().enumerate() {
            for (jj, a) in acc_r.iter().enumerate() {
                let mut lanes = [0f32; LANES];
                // SAFETY: lanes holds LANES floats.
                unsafe { $store(lanes.as_mut_ptr(), *a) };
                let eight = fold_lanes(lanes);
                yt[(j0 + jj) * rows + r0 + i] = finish(eight, &xs[i][whole..], &ws[jj][whole..]);
            }
        }
    }
}
    };
    (@arms $go:ident, $r:ident, $j:ident, [$(($rr:literal, $jj:literal)),*]) => {
        match ($r, $j) {
            $(($rr, $jj) => $go!($rr, $jj),)*
            _ => $go!(1, 1),
        }
    };
}

vector_path!(
    avx2,
    "avx2,fma",
    __m256,
    8,
    3,
    _mm256_setzero_ps,
    _mm256_loadu_ps,
    _mm256_storeu_ps,
    _mm256_fmadd_ps,
    [
        (4, 3),
        (4, 2),
        (4, 1),
        (3, 3),
        (3, 2),
        (3, 1),
        (2, 3),
        (2, 2),
        (2, 1),
        (1, 3),
        (1, 2)
    ]
);

vector_path!(
    avx512,
    "avx512f",
    __m512,
    16,
    6,
    _mm512_setzero_ps,
    _mm512_loadu_ps,
    _mm512_storeu_ps,
    _mm512_fmadd_ps,
    [
        (4, 6),
        (4, 5),
        (4, 4),
        (4, 3),
        (4, 2),
        (4, 1),
        (3, 6),
        (3, 5),
        (3, 4),
        (3, 3),
        (3, 2),
        (3, 1),
        (2, 6),
        (2, 5),
        (2, 4),
        (2, 3),
        (2, 2),
        (2, 1),
        (1, 6),
        (1, 5),
        (1, 4),
        (1, 3),
        (1, 2)
    ]
);

mod portable {
    use super::{finish, for_tiles, LANES, OUTS};

    /// The same sums as the vector path, lane by lane (fused multiply-add
    /// would call libm here, so the lanes use a multiply and an add; the
    /// bits may differ from the vector path's, but not between batches).
    pub(super) fn block(x: &[f32], rows: usize, inp: usize, w: &[f32], n: usize, yt: &mut [f32]) {
        let whole = inp / LANES * LANES;
        for_tiles(rows, n, OUTS, |r0, j0, r, j| {
            for i in 0..r {
                let xr = &x[(r0 + i) * inp..(r0 + i + 1) * inp];
                for jj in 0..j {
                    let wr = &w[(j0 + jj) * inp..(j0 + jj + 1) * inp];
                    let mut lanes = [0f32; LANES];
                    for (xc, wc) in xr[..whole]
                        .chunks_exact(LANES)
                        .zip(wr[..whole].chunks_exact(LANES))
                    {
                        for l in 0..LANES {
                            lanes[l] += xc[l] * wc[l];
                        }
                    }
                    yt[(j0 + jj) * rows + r0 + i] = finish(lanes, &xr[whole..], &wr[whole..]);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_tensors::SeededTensors;
    use candle_core::Device;

    fn draw(rt: &mut SeededTensors, n: usize) -> Vec<f32> {
        rt.randn(0.0, 1.0, n, &Device::Cpu)
            .unwrap()
            .to_vec1()
            .unwrap()
    }

    /// Every shape of tile and tail against a plain f64 sum.
    #[test]
    fn matches_a_plain_sum() {
        let mut rt = SeededTensors::new(1);
        let shapes = [
            (1, 1, 1),
            (5, 7, 4),
            (9, 33, 7),
            (24, 200, 13),
            (64, 96, 384),
        ];
        for path in Simd::available() {
            for &(rows, inp, out) in &shapes {
                let x = draw(&mut rt, rows * inp);
                let w = draw(&mut rt, out * inp);
                let mut y = vec![f32::NAN; rows * out];
                matmul_wt_on(path, &x, rows, inp, &w, out, &mut y);
                for r in 0..rows {
                    for j in 0..out {
                        let s: f64 = (0..inp)
                            .map(|k| x[r * inp + k] as f64 * w[j * inp + k] as f64)
                            .sum();
                        let got = y[r * out + j] as f64;
                        let tol = 1e-5 * (inp as f64).sqrt();
                        assert!(
                            (got - s).abs() <= tol,
                            "{path:?} {rows}x{inp}x{out} at {r},{j}: {got} vs {s}"
                        );
                    }
                }
            }
        }
    }

    /// A row gives the same bits alone, in any batch and at any place in
    /// it, on one thread or many.
    #[test]
    fn a_row_gets_the_same_bits_in_any_batch() {
        let mut rt = SeededTensors::new(2);
        let (inp, out) = (301, 383);
        let w = draw(&mut rt, out * inp);
        let x = draw(&mut rt, 37 * inp);
        for path in Simd::available() {
            let mut alone = vec![0f32; 37 * out];
            for r in 0..37 {
                let row = &x[r * inp..(r + 1) * inp];
                matmul_wt_on(
                    path,
                    row,
                    1,
                    inp,
                    &w,
                    out,
                    &mut alone[r * out..(r + 1) * out],
                );
            }
            for rows in [2, 3, 5, 16, 37] {
                for start in [0, 37 - rows] {
                    let mut y = vec![0f32; rows * out];
                    let xs = &x[start * inp..(start + rows) * inp];
                    matmul_wt_on(path, xs, rows, inp, &w, out, &mut y);
                    let want = &alone[start * out..(start + rows) * out];
                    assert_eq!(y, want, "{path:?}: {rows} rows from {start}");
                }
            }
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(3)
                .build()
                .unwrap();
            let mut y = vec![0f32; 37 * out];
            pool.install(|| matmul_wt_on(path, &x, 37, inp, &w, out, &mut y));
            assert_eq!(y, alone, "{path:?} on 3 threads");
        }
    }
}
