//! See [`graft_fuzz::search_query`].
#![no_main]

// the world is built before the first input, so its setup does not count against that
// input's timeout (see http_endpoint.rs)
libfuzzer_sys::fuzz_target!(
    init: {
        graft_fuzz::world();
    },
    |data: &[u8]| graft_fuzz::search_query(data)
);
