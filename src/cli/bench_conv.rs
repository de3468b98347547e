//! `plies bench conv`: the direct 3x3 convolution kernel against im2col
//! plus gemm on the same data, in one run.

use clap::Args;
use plies::model::kernels::{conv3x3_pass, Conv3x3Impl};
use plies::util::seeded_rng;
use rand::RngExt;
use serde::Serialize;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct ConvBenchArgs {
    /// Channels (in = out), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "32,64,128")]
    channels: Vec<usize>,
    /// Board side (square boards).
    #[arg(long, default_value_t = 8)]
    board: usize,
    #[arg(long, default_value_t = 256)]
    batch: usize,
    /// Timed repetitions; the fastest counts.
    #[arg(long, default_value_t = 10)]
    rounds: usize,
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Row {
    channels: usize,
    pass: &'static str,
    direct_gflops: Option<f64>,
    im2col_gflops: f64,
    ratio: Option<f64>,
    /// Largest relative difference between the two results' sums.
    checksum_rel_diff: Option<f64>,
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

pub fn run(a: &ConvBenchArgs) -> anyhow::Result<ExitCode> {
    let (b, n) = (a.batch, a.board);
    anyhow::ensure!(b > 0 && n > 0, "--batch and --board must be positive");
    let plane = (n + 2) * (n + 2);
    let mut rng = seeded_rng(1, 0);
    let mut draw =
        |len: usize| -> Vec<f32> { (0..len).map(|_| rng.random::<f32>() - 0.5).collect() };
    let mut rows = Vec::new();
    for &c in &a.channels {
        anyhow::ensure!(c > 0, "--channels: 0 channels");
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
                fastest(a.rounds, || {
                    conv3x3_pass(imp, grad, b, n, n, c, c, &x, &w, &gy)
                })
            };
            let (t_im, s_im) = run(Conv3x3Impl::Im2col).expect("im2col always runs");
            let direct = run(Conv3x3Impl::Direct);
            let gf = |t: f64| flops / t / 1e9;
            rows.push(Row {
                channels: c,
                pass,
                direct_gflops: direct.map(|(t, _)| gf(t)),
                im2col_gflops: gf(t_im),
                ratio: direct.map(|(t, _)| t_im / t),
                checksum_rel_diff: direct.map(|(_, s)| (s - s_im).abs() / s_im.abs().max(1.0)),
            });
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "3x3 convolution, {b} x {n}x{n} bordered channels-last, C -> C, {} threads, GFLOP/s (fastest of {})",
        rayon::current_num_threads(),
        a.rounds
    );
    println!(
        "{:>8}  {:<26} {:>10} {:>14} {:>8}",
        "channels", "pass", "direct", "im2col+gemm", "ratio"
    );
    for r in &rows {
        let opt =
            |v: Option<f64>, unit: &str| v.map_or("-".to_string(), |v| format!("{v:.1}{unit}"));
        println!(
            "{:>8}  {:<26} {:>10} {:>14.1} {:>8}",
            r.channels,
            r.pass,
            opt(r.direct_gflops, ""),
            r.im2col_gflops,
            r.ratio.map_or("-".to_string(), |v| format!("{v:.2}x"))
        );
    }
    if rows.iter().any(|r| r.direct_gflops.is_none()) {
        println!("(-: the direct kernel needs AVX2 and channels that are a multiple of 8)");
    }
    Ok(ExitCode::SUCCESS)
}
