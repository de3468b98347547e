//! `--threads`: how many worker threads a command's parallel work runs on.
//! Every command's results are the same on any number.

use anyhow::Context;

/// Runs `work` in a pool of `threads` workers, or in rayon's default pool
/// when `threads` is 0.
pub fn on_threads<T: Send, E: Into<anyhow::Error> + Send>(
    threads: usize,
    work: impl FnOnce() -> Result<T, E> + Send,
) -> anyhow::Result<T> {
    if threads == 0 {
        return work().map_err(Into::into);
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("thread pool")?
        .install(work)
        .map_err(Into::into)
}

/// Sizes rayon's global pool to `threads`, for commands whose work spreads
/// over several library calls; `None` keeps rayon's default.
pub fn set_global_threads(threads: Option<usize>) -> anyhow::Result<()> {
    if let Some(t) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .map_err(|e| anyhow::anyhow!("--threads: {e}"))?;
    }
    Ok(())
}
