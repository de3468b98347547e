//! With the `cuda` feature, compiles each CUDA kernel of `kernels/` to PTX
//! in OUT_DIR (the custom ops of `src/model/device_kernels/` embed it).
//! Without the feature it does nothing: the default build needs no CUDA
//! toolkit.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    println!("cargo:rerun-if-changed=kernels");
    println!("cargo:rerun-if-env-changed=CUDA_HOME");
    println!("cargo:rerun-if-env-changed=CUDA_COMPUTE_CAP");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let nvcc = std::env::var_os("CUDA_HOME")
        .map(|home| Path::new(&home).join("bin").join("nvcc"))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("nvcc"));
    // PTX for the oldest architecture the kernels need: the driver compiles
    // it for the GPU at hand (sm_80 and later).
    let cap = std::env::var("CUDA_COMPUTE_CAP").unwrap_or_else(|_| "80".into());
    let mut kernels: Vec<PathBuf> = std::fs::read_dir("kernels")
        .expect("the kernels/ folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    kernels.sort();
    for cu in kernels {
        let stem = cu
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a kernel file name");
        let ptx = out.join(format!("{stem}.ptx"));
        let status = Command::new(&nvcc)
            .args(["--ptx", "-O3", "-std=c++17"])
            .arg(format!("-arch=compute_{cap}"))
            .arg("-o")
            .arg(&ptx)
            .arg(&cu)
            .status()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run {} for {}: {e}; set CUDA_HOME (scripts/cuda_toolkit.sh) or build without --features cuda",
                    nvcc.display(),
                    cu.display()
                )
            });
        assert!(status.success(), "nvcc failed on {}", cu.display());
    }
}
