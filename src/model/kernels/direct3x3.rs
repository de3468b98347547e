//! Direct 3x3 convolution on bordered channels-last activations
//! ([`super::bordered`]): outputs summed straight from each point's
//! neighbourhood, with no im2col copy.
//!
//! im2col wrote nine values per input value before every product (in the
//! forward pass, the input gradient and the weight gradient): a sixth of a
//! residual net's training step went to those copies. Here a register tile
//! of `NP` output points by `NV` vectors of filters loads, for each tap and
//! input channel, the filters' weights once and broadcasts each point's
//! input value against them. The input gradient is the same product with
//! the weights flipped; the weight gradient tiles `NR` rows of
//! `(tap, channel)` by `NV` vectors of filters and sums over a block's
//! points.
//!
//! Every output is summed in one fixed order (taps, then channels; for the
//! weight gradient, the block's points in order), whatever the tile, batch
//! or thread: a position gets the same bits alone as in any batch.
//!
//! AVX-512 runs filter counts that are multiples of 16, AVX2 + FMA
//! multiples of 8; anything else (or another CPU) takes the im2col path.

use super::bordered::Board;
use super::simd::Simd;

/// The vector set for a direct convolution with `f` outputs per point, if
/// one fits.
pub(super) fn simd_for(f: usize) -> Option<Simd> {
    simd_for_on(Simd::best(), f)
}

fn simd_for_on(best: Simd, f: usize) -> Option<Simd> {
    match best {
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 if f.is_multiple_of(16) => Some(Simd::Avx512),
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 | Simd::Avx2 if f.is_multiple_of(8) => Some(Simd::Avx2),
        _ => None,
    }
}

/// `w [F, C, 3, 3]` -> `[9C, F]`: row `t * C + c` holds tap `t`'s weights
/// for input channel `c`, one per filter.
pub(super) fn taps_by_filter(w: &[f32], f: usize, c: usize) -> Vec<f32> {
    // A blocked transpose: each block of filters' weights (contiguous in
    // `w`) stays in L1 while every row of the result gets its piece. This
    // runs on every inference call; value by value it took as long as a
    // batch-1 forward pass.
    const FB: usize = 16;
    let k = 9 * c;
    let mut m = vec![0f32; k * f];
    for f0 in (0..f).step_by(FB) {
        let fb = FB.min(f - f0);
        let block = &w[f0 * k..(f0 + fb) * k];
        for (r, row) in m.chunks_exact_mut(f).enumerate() {
            let (t, ci) = (r / c, r % c);
            for (j, d) in row[f0..f0 + fb].iter_mut().enumerate() {
                *d = block[j * k + ci * 9 + t];
            }
        }
    }
    m
}

/// The input gradient's weights `[9F, C]`: row `t * F + fo` holds
/// `w[fo, c, 8 - t]` for each `c` (flipped in space, channels swapped).
pub(super) fn flipped_taps(w: &[f32], f: usize, c: usize) -> Vec<f32> {
    let mut m = vec![0f32; 9 * f * c];
    for (r, row) in m.chunks_exact_mut(c).enumerate() {
        let (t, fo) = (r / f, r % f);
        let col = w[fo * c * 9..].iter().skip(8 - t).step_by(9);
        for (d, &v) in row.iter_mut().zip(col) {
            *d = v;
        }
    }
    m
}

/// The shape of one block's convolution: `n` samples of a bordered board,
/// `c` channels in, `f` out.
#[derive(Clone, Copy, Debug)]
pub(super) struct Geom {
    pub n: usize,
    pub h: usize,
    pub w: usize,
    pub c: usize,
    pub f: usize,
}

impl Geom {
    pub fn new(bd: &Board, n: usize, c: usize, f: usize) -> Self {
        Geom {
            n,
            h: bd.h,
            w: bd.w,
            c,
            f,
        }
    }

    fn wp(&self) -> usize {
        self.w + 2
    }

    fn plane(&self) -> usize {
        (self.h + 2) * (self.w + 2)
    }

    fn points(&self) -> usize {
        self.n * self.h * self.w
    }

    /// Offset (in points) of tap `t`'s neighbour from a window's top-left.
    fn tap(&self, t: usize) -> usize {
        t / 3 * self.wp() + t % 3
    }
}

/// Walks interior points in order, giving the bordered offset (in points)
/// of each one's 3x3 window's top-left corner; its centre is `wp + 1`
/// further.
struct Cursor {
    wp: usize,
    plane: usize,
    h: usize,
    w: usize,
    s: usize,
    y: usize,
    x: usize,
}

impl Cursor {
    fn new(g: &Geom) -> Self {
        Cursor {
            wp: g.wp(),
            plane: g.plane(),
            h: g.h,
            w: g.w,
            s: 0,
            y: 0,
            x: 0,
        }
    }

    #[inline(always)]
    fn next(&mut self) -> usize {
        let at = self.s * self.plane + self.y * self.wp + self.x;
        self.x += 1;
        if self.x == self.w {
            self.x = 0;
            self.y += 1;
            if self.y == self.h {
                self.y = 0;
                self.s += 1;
            }
        }
        at
    }

    /// The next `valid` windows, the last repeated to fill `N`.
    #[inline(always)]
    fn take<const N: usize>(&mut self, valid: usize) -> [usize; N] {
        let mut out = [0usize; N];
        for i in 0..N {
            out[i] = if i < valid { self.next() } else { out[i - 1] };
        }
        out
    }
}

/// What the forward pass adds after the product: a bias per filter, a
/// residual (bordered like the output) and relu.
#[derive(Clone, Copy)]
pub(super) struct Epilogue<'a> {
    pub bias: Option<&'a [f32]>,
    pub res: Option<&'a [f32]>,
    pub relu: bool,
}

fn check(g: &Geom, x: &[f32], wt: &[f32], out_len: usize) {
    let plane = g.plane();
    assert!(x.len() >= g.n * plane * g.c, "direct3x3: input too short");
    assert!(wt.len() >= 9 * g.c * g.f, "direct3x3: weights too short");
    assert!(out_len >= g.n * plane * g.f, "direct3x3: output too short");
}

/// The interior of bordered `out [n, H+2, W+2, f]` = epilogue of the
/// convolution of bordered `x [n, H+2, W+2, c]` (border zero) with
/// `wt [9c, f]` ([`taps_by_filter`]); the border of `out` is left as it
/// is. `simd` must come from [`simd_for`]`(f)`.
pub(super) fn conv(simd: Simd, g: &Geom, x: &[f32], wt: &[f32], ep: Epilogue, out: &mut [f32]) {
    check(g, x, wt, out.len());
    if let Some(b) = ep.bias {
        assert!(b.len() >= g.f, "direct3x3: bias too short");
    }
    if let Some(r) = ep.res {
        assert!(
            r.len() >= g.n * g.plane() * g.f,
            "direct3x3: residual too short"
        );
    }
    match simd {
        // SAFETY: `simd_for` saw the CPU's features; the asserts above
        // bound every offset the tiles reach.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { avx512::conv(g, x, wt, ep, out) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { avx2::conv(g, x, wt, ep, out) },
        _ => panic!("direct3x3: no vector path for {simd:?}"),
    }
}

/// `dwt [9, f, c] += sum over interior points p of gy[p, f] * x[p's tap t, c]`
/// for bordered `x [n, H+2, W+2, c]` (border zero) and `gy
/// [n, H+2, W+2, f]`. `simd` must come from [`simd_for`]`(c)`: the
/// vectors run over input channels.
pub(super) fn weight_grad(simd: Simd, g: &Geom, x: &[f32], gy: &[f32], dwt: &mut [f32]) {
    check(g, x, dwt, gy.len());
    match simd {
        // SAFETY: as in `conv`.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { avx512::weight_grad(g, x, gy, dwt) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { avx2::weight_grad(g, x, gy, dwt) },
        _ => panic!("direct3x3: no vector path for {simd:?}"),
    }
}

/// One vector path: the same code over a vector type. `conv` maps vectors
/// of filters per tile to points per tile (`wide`: the tile for every wider
/// chunk), `grad` vectors of channels to filter rows per tile; each keeps
/// its accumulators, operands and broadcast within the register file (16
/// vector registers for AVX2: a wider tile spilled and ran at half speed).
macro_rules! direct_path {
    (
        $name:ident, $feature:literal, $vec:ident, $lanes:literal,
        $zero:ident, $load:ident, $store:ident, $fma:ident, $set1:ident, $add:ident, $max:ident,
        conv: [$(($nv:literal, $np:literal)),*], wide: ($wv:literal, $wp:literal),
        grad: [$(($gv:literal, $gr:literal)),*], grad_wide: ($gwv:literal, $gwr:literal)
    ) => {
        #[cfg(target_arch = "x86_64")]
        mod $name {
            use super::{Cursor, Epilogue, Geom};
            use std::arch::x86_64::*;
            const LANES: usize = $lanes;

            #[target_feature(enable = $feature)]
            pub(super) unsafe fn conv(g: &Geom, x: &[f32], wt: &[f32], ep: Epilogue, out: &mut [f32]) {
                let mut f0 = 0;
                while f0 < g.f {
                    let nv = (g.f - f0) / LANES;
                    let used = match nv {
                        $($nv => { conv_chunk::<$nv, $np>(g, x, wt, ep, out, f0); $nv })*
                        _ => { conv_chunk::<$wv, $wp>(g, x, wt, ep, out, f0); $wv }
                    };
                    f0 += used * LANES;
                }
            }

            #[inline]
            #[target_feature(enable = $feature)]
            unsafe fn conv_chunk<const NV: usize, const NP: usize>(
                g: &Geom, x: &[f32], wt: &[f32], ep: Epilogue, out: &mut [f32], f0: usize,
            ) {
                let total = g.points();
                let mut cur = Cursor::new(g);
                let mut q = 0;
                while q < total {
                    let valid = (total - q).min(NP);
                    let tl = cur.take::<NP>(valid);
                    conv_tile::<NV, NP>(g, x, wt, ep, out, f0, &tl, valid);
                    q += valid;
                }
            }

            #[allow(clippy::too_many_arguments)]
            #[inline]
            #[target_feature(enable = $feature)]
            unsafe fn conv_tile<const NV: usize, const NP: usize>(
                g: &Geom, x: &[f32], wt: &[f32], ep: Epilogue, out: &mut [f32], f0: usize,
                tl: &[usize; NP], valid: usize,
            ) {
                let (c, f) = (g.c, g.f);
                let mut acc = [[$zero(); NV]; NP];
                for t in 0..9 {
                    let tap = g.tap(t) * c;
                    let xp: [*const f32; NP] =
                        std::array::from_fn(|i| x.as_ptr().add(tl[i] * c + tap));
                    let wrow = wt.as_ptr().add(t * c * f + f0);
                    for ci in 0..c {
                        let wv: [$vec; NV] =
                            std::array::from_fn(|v| $load(wrow.add(ci * f + v * LANES)));
                        for i in 0..NP {
                            let xb = $set1(*xp[i].add(ci));
                            for v in 0..NV {
                                acc[i][v] = $fma(xb, wv[v], acc[i][v]);
                            }
                        }
                    }
                }
                let centre = g.wp() + 1;
                // Constant indices only (`i < valid` inside), so that the
                // accumulators stay in registers.
                for i in 0..NP {
                    if i >= valid {
                        break;
                    }
                    let o = (tl[i] + centre) * f + f0;
                    for v in 0..NV {
                        let mut a = acc[i][v];
                        if let Some(b) = ep.bias {
                            a = $add(a, $load(b.as_ptr().add(f0 + v * LANES)));
                        }
                        if let Some(r) = ep.res {
                            a = $add(a, $load(r.as_ptr().add(o + v * LANES)));
                        }
                        if ep.relu {
                            a = $max(a, $zero());
                        }
                        $store(out.as_mut_ptr().add(o + v * LANES), a);
                    }
                }
            }

            #[target_feature(enable = $feature)]
            pub(super) unsafe fn weight_grad(g: &Geom, x: &[f32], gy: &[f32], dwt: &mut [f32]) {
                let mut c0 = 0;
                while c0 < g.c {
                    let nv = (g.c - c0) / LANES;
                    let used = match nv {
                        $($gv => { grad_chunk::<$gv, $gr>(g, x, gy, dwt, c0); $gv })*
                        _ => { grad_chunk::<$gwv, $gwr>(g, x, gy, dwt, c0); $gwv }
                    };
                    c0 += used * LANES;
                }
            }

            #[inline]
            #[target_feature(enable = $feature)]
            unsafe fn grad_chunk<const NV: usize, const NR: usize>(
                g: &Geom, x: &[f32], gy: &[f32], dwt: &mut [f32], c0: usize,
            ) {
                for t in 0..9 {
                    let mut f0 = 0;
                    while f0 < g.f {
                        let valid = (g.f - f0).min(NR);
                        grad_tile::<NV, NR>(g, x, gy, dwt, t, f0, c0, valid);
                        f0 += valid;
                    }
                }
            }

            /// Rows `t * F + f0 ..+ valid` of `dwt`, channels `c0 ..+ NV * LANES`.
            #[allow(clippy::too_many_arguments)]
            #[inline]
            #[target_feature(enable = $feature)]
            unsafe fn grad_tile<const NV: usize, const NR: usize>(
                g: &Geom, x: &[f32], gy: &[f32], dwt: &mut [f32], t: usize, f0: usize,
                c0: usize, valid: usize,
            ) {
                let (c, f) = (g.c, g.f);
                let at = |j: usize| (t * f + f0 + j) * c + c0;
                // Rows past `valid` sum gradients of the next filters (or
                // of the border past the last point, which is in bounds)
                // and are not stored.
                let mut acc: [[$vec; NV]; NR] = std::array::from_fn(|j| {
                    std::array::from_fn(|v| {
                        if j < valid {
                            $load(dwt.as_ptr().add(at(j) + v * LANES))
                        } else {
                            $zero()
                        }
                    })
                });
                let (wp, plane, tap) = (g.wp(), g.plane(), g.tap(t));
                for s in 0..g.n {
                    for y in 0..g.h {
                        // One row of points: windows `tl..tl + w`.
                        let tl = s * plane + y * wp;
                        let mut gp = gy.as_ptr().add((tl + wp + 1) * f + f0);
                        let mut xp = x.as_ptr().add((tl + tap) * c + c0);
                        for _ in 0..g.w {
                            let xv: [$vec; NV] =
                                std::array::from_fn(|v| $load(xp.add(v * LANES)));
                            for j in 0..NR {
                                let gb = $set1(*gp.add(j));
                                for v in 0..NV {
                                    acc[j][v] = $fma(gb, xv[v], acc[j][v]);
                                }
                            }
                            gp = gp.add(f);
                            xp = xp.add(c);
                        }
                    }
                }
                for j in 0..NR {
                    if j >= valid {
                        break;
                    }
                    for v in 0..NV {
                        $store(dwt.as_mut_ptr().add(at(j) + v * LANES), acc[j][v]);
                    }
                }
            }
        }
    };
}

direct_path!(
    avx512, "avx512f", __m512, 16,
    _mm512_setzero_ps, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps, _mm512_set1_ps,
    _mm512_add_ps, _mm512_max_ps,
    conv: [(1, 16), (2, 12), (3, 8)], wide: (4, 6),
    grad: [(1, 16), (2, 8), (3, 8)], grad_wide: (4, 6)
);

direct_path!(
    avx2, "avx2,fma", __m256, 8,
    _mm256_setzero_ps, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_fmadd_ps, _mm256_set1_ps,
    _mm256_add_ps, _mm256_max_ps,
    conv: [(1, 12)], wide: (2, 6),
    grad: [(1, 12)], grad_wide: (2, 6)
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::seeded_rng;
    use rand::RngExt;

    /// Vector sets this CPU has that fit `k` channels.
    fn sets_for(k: usize) -> Vec<Simd> {
        Simd::available()
            .into_iter()
            .filter_map(|s| simd_for_on(s, k).filter(|&got| got == s))
            .collect()
    }

    fn random(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = seeded_rng(seed, 0xd1);
        (0..n).map(|_| rng.random::<f32>() * 2.0 - 1.0).collect()
    }

    /// Bordered `[n, h+2, w+2, c]` with random interior, zero border.
    fn bordered(g: &Geom, c: usize, seed: u64) -> Vec<f32> {
        let mut v = random(g.n * g.plane() * c, seed);
        let bd = Board {
            b: g.n,
            h: g.h,
            w: g.w,
        };
        super::super::bordered::zero_border(&bd, c, &mut v);
        v
    }

    /// Interior point `(s, y, x)`'s window value at tap `t`, channel `ci`.
    fn at(g: &Geom, c: usize, s: usize, y: usize, x: usize, t: usize) -> usize {
        (s * g.plane() + (y + t / 3) * g.wp() + x + t % 3) * c
    }

    /// f64 reference of `conv`'s interior with bias, residual and relu.
    fn reference(g: &Geom, x: &[f32], w: &[f32], bias: &[f32], res: &[f32]) -> Vec<f64> {
        let (c, f) = (g.c, g.f);
        let mut out = vec![0f64; g.n * g.plane() * f];
        for s in 0..g.n {
            for y in 0..g.h {
                for xx in 0..g.w {
                    let o = at(g, f, s, y, xx, 4);
                    for fo in 0..f {
                        let mut acc = bias[fo] as f64 + res[o + fo] as f64;
                        for t in 0..9 {
                            let i = at(g, c, s, y, xx, t);
                            for ci in 0..c {
                                acc += x[i + ci] as f64 * w[(fo * c + ci) * 9 + t] as f64;
                            }
                        }
                        out[o + fo] = acc.max(0.0);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn conv_matches_f64_and_keeps_the_border() {
        // Boards from 1x1 up; channels hitting every tile width and a
        // partial last tile of points.
        for (n, h, w, c, f) in [
            (3, 8, 8, 32, 32),
            (2, 5, 3, 6, 16),
            (1, 1, 1, 8, 48),
            (2, 3, 7, 16, 80),
            (4, 2, 2, 5, 8),
            (1, 9, 9, 64, 64),
        ] {
            let g = Geom { n, h, w, c, f };
            let x = bordered(&g, c, 1);
            let wv = random(f * c * 9, 2);
            let bias = random(f, 3);
            let res = bordered(&g, f, 4);
            let want = reference(&g, &x, &wv, &bias, &res);
            for simd in sets_for(f) {
                let mut out = vec![f32::NAN; g.n * g.plane() * f];
                let ep = Epilogue {
                    bias: Some(&bias),
                    res: Some(&res),
                    relu: true,
                };
                conv(simd, &g, &x, &taps_by_filter(&wv, f, c), ep, &mut out);
                for (i, (&got, &want)) in out.iter().zip(&want).enumerate() {
                    let (p, ch) = (i / f, i % f);
                    let (yy, xx) = (p % g.plane() / g.wp(), p % g.wp());
                    let interior = (1..=h).contains(&yy) && (1..=w).contains(&xx);
                    let what = format!("{simd:?} n{n} {h}x{w} c{c} f{f} point {p} filter {ch}");
                    if interior {
                        assert!((got as f64 - want).abs() < 1e-4, "{what}: {got} vs {want}");
                    } else {
                        assert!(got.is_nan(), "{what}: border written");
                    }
                }
            }
        }
    }

    #[test]
    fn weight_grad_matches_f64_and_accumulates() {
        for (n, h, w, c, f) in [
            (3, 8, 8, 32, 32),
            (2, 5, 3, 16, 6),
            (1, 1, 1, 48, 8),
            (2, 3, 7, 80, 13),
            (1, 9, 9, 64, 64),
        ] {
            let g = Geom { n, h, w, c, f };
            let x = bordered(&g, c, 5);
            let gy = bordered(&g, f, 6);
            let start = random(9 * f * c, 7);
            for simd in sets_for(c) {
                let mut dwt = start.clone();
                weight_grad(simd, &g, &x, &gy, &mut dwt);
                for t in 0..9 {
                    for fo in 0..f {
                        for ci in 0..c {
                            let r = (t * f + fo) * c + ci;
                            let mut want = start[r] as f64;
                            for s in 0..n {
                                for y in 0..h {
                                    for xx in 0..w {
                                        let o = at(&g, f, s, y, xx, 4);
                                        let i = at(&g, c, s, y, xx, t);
                                        want += gy[o + fo] as f64 * x[i + ci] as f64;
                                    }
                                }
                            }
                            let got = dwt[r] as f64;
                            assert!(
                                (got - want).abs() < 1e-4,
                                "{simd:?} n{n} {h}x{w} c{c} f{f} tap {t} filter {fo} channel {ci}: {got} vs {want}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_sample_gets_the_same_bits_in_any_batch() {
        let (h, w, c, f) = (6, 7, 16, 32);
        let g = Geom { n: 5, h, w, c, f };
        let x = bordered(&g, c, 8);
        let wt = taps_by_filter(&random(f * c * 9, 9), f, c);
        let ep = Epilogue {
            bias: None,
            res: None,
            relu: false,
        };
        for simd in sets_for(f) {
            let mut all = vec![0f32; g.n * g.plane() * f];
            conv(simd, &g, &x, &wt, ep, &mut all);
            for s in 0..g.n {
                let one = Geom { n: 1, ..g };
                let mut out = vec![0f32; g.plane() * f];
                conv(simd, &one, &x[s * g.plane() * c..], &wt, ep, &mut out);
                let part = &all[s * g.plane() * f..(s + 1) * g.plane() * f];
                assert!(
                    out.iter()
                        .zip(part)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{simd:?}: sample {s} alone differs"
                );
            }
        }
    }

    #[test]
    fn flipped_taps_swap_channels_and_mirror_the_window() {
        let (f, c) = (3, 2);
        let w = random(f * c * 9, 10);
        let m = flipped_taps(&w, f, c);
        assert_eq!(m[(2 * f + 1) * c + 1], w[(c + 1) * 9 + 6]);
        assert_eq!(simd_for_on(Simd::Portable, 16), None);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // The tests above ran at least one vector set here.
            assert!(sets_for(32).contains(&Simd::Avx2));
        }
    }
}
