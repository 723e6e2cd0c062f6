//! See [`graft_fuzz::search_query`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| graft_fuzz::search_query(data));
