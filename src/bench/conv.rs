//! The direct 3x3 convolution kernel of the residual nets against im2col
//! plus gemm on the same data, in one run: GFLOP/s of the forward pass and
//! the weight gradient, and the ratio.

use std::fmt;
use std::time::Instant;

use rand::RngExt;
use serde::Serialize;

use super::report::num;
use super::{BenchError, Result};
use crate::model::kernels::{conv3x3_pass, Conv3x3Impl};
use crate::util::seeded_rng;

pub struct ConvOptions {
    /// Channels (in = out), one row pair each.
    pub channels: Vec<usize>,
    /// Board side (square boards).
    pub board: usize,
    pub batch: usize,
    /// Timed repetitions; the fastest counts.
    pub rounds: usize,
}

#[derive(Serialize)]
pub struct ConvRow {
    pub channels: usize,
    pub pass: &'static str,
    /// `None` where the direct kernel cannot run (no AVX2, or channels
    /// that are not a multiple of 8).
    pub direct_gflops: Option<f64>,
    pub im2col_gflops: f64,
    pub ratio: Option<f64>,
    /// Largest relative difference between the two results' sums.
    pub checksum_rel_diff: Option<f64>,
}

pub struct ConvReport {
    pub batch: usize,
    pub board: usize,
    pub rounds: usize,
    pub threads: usize,
    pub rows: Vec<ConvRow>,
}

/// Fastest of `rounds` calls after a warm-up, seconds, and the sum of the
/// last call's result (summed outside the clock).
fn fastest(rounds: usize, mut f: impl FnMut() -> Option<Vec<f32>>) -> Option<(f64, f64)> {
    let mut best = f64::MAX;
    // One untimed call first: the thread pool and the allocator warm up.
    let mut out = f()?;
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        out = f()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Some((best, out.iter().map(|&x| x as f64).sum()))
}

pub fn run(opts: &ConvOptions) -> Result<ConvReport> {
    let (b, n) = (opts.batch, opts.board);
    if b == 0 || n == 0 {
        return Err(BenchError::bad_option(
            "--batch and --board",
            "must be positive",
        ));
    }
    let plane = (n + 2) * (n + 2);
    let mut rng = seeded_rng(1, 0);
    let mut draw =
        |len: usize| -> Vec<f32> { (0..len).map(|_| rng.random::<f32>() - 0.5).collect() };
    let mut rows = Vec::new();
    for &c in &opts.channels {
        if c == 0 {
            return Err(BenchError::bad_option("--channels", "0 channels"));
        }
        // Bordered activations with a zero border.
        let mut bordered = |k: usize| {
            let mut v = draw(b * plane * k);
            for (i, x) in v.iter_mut().enumerate() {
                let p = i / k % plane;
                let (y, xx) = (p / (n + 2), p % (n + 2));
                if y == 0 || xx == 0 || y == n + 1 || xx == n + 1 {
                    *x = 0.0;
                }
            }
            v
        };
        let x = bordered(c);
        let gy = bordered(c);
        let w = draw(c * c * 9);
        let flops = (2 * b * n * n * c * c * 9) as f64;
        for (pass, grad) in [
            ("forward / input gradient", false),
            ("weight gradient", true),
        ] {
            let run = |imp| {
                fastest(opts.rounds, || {
                    conv3x3_pass(imp, grad, b, n, n, c, c, &x, &w, &gy)
                })
            };
            let (t_im, s_im) =
                run(Conv3x3Impl::Im2col).ok_or(BenchError::KernelMissing("im2col"))?;
            let direct = run(Conv3x3Impl::Direct);
            let gf = |t: f64| flops / t / 1e9;
            rows.push(ConvRow {
                channels: c,
                pass,
                direct_gflops: direct.map(|(t, _)| gf(t)),
                im2col_gflops: gf(t_im),
                ratio: direct.map(|(t, _)| t_im / t),
                checksum_rel_diff: direct.map(|(_, s)| (s - s_im).abs() / s_im.abs().max(1.0)),
            });
        }
    }
    Ok(ConvReport {
        batch: b,
        board: n,
        rounds: opts.rounds,
        threads: rayon::current_num_threads(),
        rows,
    })
}

impl fmt::Display for ConvReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (b, n) = (self.batch, self.board);
        writeln!(
            f,
            "3x3 convolution, {b} x {n}x{n} bordered channels-last, C -> C, {} threads, GFLOP/s (fastest of {})",
            self.threads, self.rounds
        )?;
        writeln!(
            f,
            "{:>8}  {:<26} {:>10} {:>14} {:>8}",
            "channels", "pass", "direct", "im2col+gemm", "ratio"
        )?;
        for r in &self.rows {
            writeln!(
                f,
                "{:>8}  {:<26} {:>10} {:>14.1} {:>8}",
                r.channels,
                r.pass,
                num(r.direct_gflops, 1),
                r.im2col_gflops,
                r.ratio.map_or("-".to_string(), |v| format!("{v:.2}x"))
            )?;
        }
        if self.rows.iter().any(|r| r.direct_gflops.is_none()) {
            writeln!(
                f,
                "(-: the direct kernel needs AVX2 and channels that are a multiple of 8)"
            )?;
        }
        Ok(())
    }
}

impl super::report::Report for ConvReport {
    /// The rows, pretty-printed.
    fn json(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(&self.rows)
    }
}
