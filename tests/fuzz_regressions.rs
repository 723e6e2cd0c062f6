//! Replays the fuzz targets' seeds (`fuzz/seeds/TARGET/`) and every input a fuzzer found
//! a crash with (`tests/fixtures/fuzz/TARGET/`, kept as regression tests, issue 13.1)
//! through the same functions and invariants as the targets (fuzz/src/lib.rs), on the
//! normal test build: none may panic.

#[path = "../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod graft_fuzz;

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for dir in [
        root.join("fuzz/seeds").join(target),
        root.join("tests/fixtures/fuzz").join(target),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        for f in files {
            let data = std::fs::read(&f).unwrap();
            eprintln!("{target}: {}", f.display());
            run(&data);
            n += 1;
        }
    }
    n
}

#[test]
fn openapi_import_inputs() {
    assert!(replay("openapi_import", graft_fuzz::openapi_import) >= 2);
}

#[test]
fn schema_acquire_inputs() {
    assert!(replay("schema_acquire", graft_fuzz::schema_acquire) >= 3);
}

#[test]
fn request_build_inputs() {
    assert!(replay("request_build", graft_fuzz::request_build) >= 3);
}

#[test]
fn http_endpoint_inputs() {
    assert!(replay("http_endpoint", graft_fuzz::http_endpoint) >= 5);
}

#[test]
fn search_query_inputs() {
    assert!(replay("search_query", graft_fuzz::search_query) >= 5);
}

#[test]
fn vendor_answer_inputs() {
    assert!(replay("vendor_answer", graft_fuzz::vendor_answer) >= 3);
}
