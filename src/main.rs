//! The `plies` command line: parses arguments, then calls one library
//! function per subcommand.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    // Output piped into `head` and the like: end quietly when the reader
    // goes away, as other command-line tools do, instead of panicking on
    // the failed write.
    #[cfg(unix)]
    // SAFETY: restoring the default action of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // candle asks the OS for the core count on every matrix product unless
    // this is set; fix it once, before any thread pool starts.
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let n = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        std::env::set_var("RAYON_NUM_THREADS", n.to_string());
    }
    // candle's element-wise ops run on a second pool of spinning worker
    // threads: they take cores from the matrix products (rayon's pool), and
    // the caller spins until a descheduled worker finishes (30-40% of a
    // cnn3 training profile on 2 busy cores). Element-wise work is memory
    // bound: run it on the calling thread unless asked otherwise.
    if std::env::var_os("CANDLE_NUM_THREADS").is_none() {
        std::env::set_var("CANDLE_NUM_THREADS", "1");
    }
    plies::model::kernels::keep_freed_memory();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PLIES_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    // A kernel set that cannot be honoured is the user's error, not a
    // silent fall back to the best one.
    if let Err(e) = plies::util::simd::Simd::cap_from_env() {
        eprintln!("error: {e}");
        return std::process::ExitCode::FAILURE;
    }
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", plies::util::error_line(e.as_ref()));
            std::process::ExitCode::FAILURE
        }
    }
}
