#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| plies_fuzz::settings_file(data));
