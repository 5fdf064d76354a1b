//! The reader's envelope parse and payload decoding, on arbitrary file contents.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hookline_fuzz::reader_envelope(data));
