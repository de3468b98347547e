//! `plies bench conv --json`: a row per channel count and pass, the two
//! implementations agreeing on the results (no timing assertions).

use std::process::Command;

#[test]
fn conv_bench_reports_both_passes_and_agreeing_results() {
    let o = Command::new(env!("CARGO_BIN_EXE_plies"))
        .args([
            "bench",
            "conv",
            "--channels",
            "16,6",
            "--board",
            "5",
            "--batch",
            "4",
            "--rounds",
            "1",
            "--json",
        ])
        .output()
        .expect("run plies");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).expect("JSON rows");
    assert_eq!(rows.len(), 4, "{rows:?}");
    for r in &rows {
        assert!(r["im2col_gflops"].as_f64().is_some_and(|g| g > 0.0), "{r}");
        match r["channels"].as_u64() {
            // 6 channels never fit the direct kernel's vectors.
            Some(6) => assert!(r["direct_gflops"].is_null(), "{r}"),
            Some(16) => {
                if let Some(d) = r["checksum_rel_diff"].as_f64() {
                    assert!(d < 1e-5, "{r}");
                    assert!(r["ratio"].as_f64().is_some_and(|x| x > 0.0), "{r}");
                }
            }
            _ => panic!("unexpected row {r}"),
        }
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_plies"))
        .args(["bench", "conv", "--channels", "0"])
        .output()
        .expect("run plies");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--channels"));
}
