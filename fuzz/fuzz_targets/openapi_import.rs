//! See [`graft_fuzz::openapi_import`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| graft_fuzz::openapi_import(data));
