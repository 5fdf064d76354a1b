//! The relay's input scanner and payload check, and the reader on what the relay would write.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hookline_fuzz::relay_input(data));
