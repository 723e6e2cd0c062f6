//! See [`graft_fuzz::schema_acquire`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| graft_fuzz::schema_acquire(data));
