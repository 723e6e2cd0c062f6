//! See [`graft_fuzz::vendor_answer`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| graft_fuzz::vendor_answer(data));
