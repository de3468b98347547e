//! The one switch that puts plies' own kernels aside for candle's ops:
//! `PLIES_KERNELS=candle` for the whole process, or [`with_candle_ops`] on
//! one thread. The fused CPU kernels (`model::kernels`), the device ops
//! (`model::device_kernels`) and the fused optimizer steps (`optim`) all
//! consult it, so the candle path can be run and compared anywhere.

use std::cell::Cell;
use std::sync::OnceLock;

thread_local! {
    static CANDLE_OPS_HERE: Cell<bool> = const { Cell::new(false) };
}

/// Whether candle's own ops are forced here: `PLIES_KERNELS=candle` (the
/// whole process) or [`with_candle_ops`] (this thread). Device kernels
/// (`crate::model::device_kernels`) step aside too.
pub fn candle_ops_forced() -> bool {
    static FORCED: OnceLock<bool> = OnceLock::new();
    *FORCED.get_or_init(|| std::env::var("PLIES_KERNELS").is_ok_and(|v| v == "candle"))
        || CANDLE_OPS_HERE.with(Cell::get)
}

/// Runs `f` with plies' kernels off on this thread: models take candle's
/// ops, as before any kernel of their own.
pub fn with_candle_ops<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            CANDLE_OPS_HERE.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CANDLE_OPS_HERE.with(|c| c.replace(true)));
    f()
}
