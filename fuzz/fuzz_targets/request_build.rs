//! See [`graft_fuzz::request_build`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| graft_fuzz::request_build(data));
