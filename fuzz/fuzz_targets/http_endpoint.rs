//! See [`graft_fuzz::http_endpoint`].
#![no_main]

// the world (a database, an imported vendor, a signed-in person) is built before the
// first input: built lazily, it counted against the first input's timeout, which a
// debug build on a loaded machine overran
libfuzzer_sys::fuzz_target!(
    init: {
        graft_fuzz::world();
    },
    |data: &[u8]| graft_fuzz::http_endpoint(data)
);
