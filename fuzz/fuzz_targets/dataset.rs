#![no_main]

use std::sync::Once;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // The dataset reader turns a panic of the Arrow decoder into an error
    // naming the shard; libFuzzer's panic hook would abort on it before it
    // is caught. An uncaught panic still aborts: `fuzz_target!` checks.
    static DEFAULT_HOOK: Once = Once::new();
    DEFAULT_HOOK.call_once(|| drop(std::panic::take_hook()));
    plies_fuzz::dataset(data)
});
