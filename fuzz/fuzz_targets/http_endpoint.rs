//! See [`graft_fuzz::http_endpoint`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| graft_fuzz::http_endpoint(data));
