#!/usr/bin/env python3
"""find_tool's quality as an agent meets it (issue 24.4): a query set run through a real
MCP client (the Python SDK) against `graft serve`, on the toolbox the quality bench
imported (`benches/search_quality.rs` keeps it under ~/.cache/graft/bench/).

For each query of the set (the bench's format: `queries[].query`, `kind`, `expected[]`
of `{vendor, operationId}` or `{vendor, method, path}`), calls find_tool with limit 10
and reports recall@1, recall@5 and MRR@10 overall and per kind, how many answers were
refusals (isError) and the p50/p90 time of a find_tool call, client to client.

Usage: scripts/search-quality-mcp.py --db BENCH.db --set benches/search_heldout.json
         [--bin target/release/graft] [--model DIR]
The database is copied first (an agent is added to the copy), so the bench's cache is
left as it was. Without --model, GRAFT_EMBEDDING_MODEL or the default model directory is
used when present; `--model none` runs words only.
"""
import argparse
import json
import os
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def resolve(db, vendor, e):
    """`vendor__name` of an expected operation, or None when it is not a tool."""
    op = e.get("operationId") or f"{e['method'].upper()} {e['path']}"
    row = db.execute(
        "SELECT t.name FROM tools t JOIN vendors v ON v.id = t.vendor_id "
        "WHERE v.slug = ? AND t.operation_id = ?",
        (vendor, op),
    ).fetchone()
    return f"{vendor}__{row[0]}" if row else None


async def run(url, token, queries):
    out = []
    headers = {"Authorization": f"Bearer {token}"}
    timeout = httpx2.Timeout(60.0, read=300.0)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http, \
            streamable_http_client(url, http_client=http) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            for q in queries:
                started = time.perf_counter()
                res = await s.call_tool("find_tool", {"query": q["query"], "limit": 10})
                ms = (time.perf_counter() - started) * 1000
                sc = res.structured_content or {}
                names = [f"{h['vendor']}__{h['name']}" for h in sc.get("hits", [])]
                out.append((q, names, bool(res.is_error), ms))
    return out


def report(results):
    rows = []
    for kind in ["all", "natural", "keyword"]:
        rs = [r for r in results if kind == "all" or r[0]["kind"] == kind]
        if not rs:
            continue
        r1 = r5 = mrr = 0.0
        for q, names, _, _ in rs:
            ranks = [i for i, n in enumerate(names[:10]) if n in q["want"]]
            if ranks:
                r1 += ranks[0] == 0
                r5 += ranks[0] < 5
                mrr += 1 / (ranks[0] + 1)
        n = len(rs)
        rows.append(f"mcp       {kind:<8} {n:>5} {r1 / n:>7.3f} {r5 / n:>7.3f} {mrr / n:>7.3f}")
    ms = sorted(r[3] for r in results)
    refused = sum(r[2] for r in results)
    print("ranker    kind         n     R@1     R@5  MRR@10")
    print("\n".join(rows))
    print(f"find_tool through MCP: p50 {statistics.median(ms):.1f} ms, "
          f"p90 {ms[int(len(ms) * 0.9)]:.1f} ms; refused (isError): {refused} of {len(results)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--set", required=True)
    ap.add_argument("--bin", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", "target"), "release", "graft"))
    ap.add_argument("--model", default=os.environ.get(
        "GRAFT_EMBEDDING_MODEL", os.path.expanduser("~/.cache/graft/models/minilm-static-256")))
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="graft-mcp-quality-")
    try:
        db_path = os.path.join(work, "graft.db")
        shutil.copy(a.db, db_path)
        env = dict(os.environ, DATABASE_URL=f"sqlite://{db_path}", RUST_LOG="warn",
                   GRAFT_DATA_DIR=work)
        env.pop("GRAFT_EMBEDDING_MODEL", None)
        if a.model != "none" and os.path.isdir(a.model):
            env["GRAFT_EMBEDDING_MODEL"] = a.model
        added = subprocess.run([a.bin, "agent", "add", "mcp-quality"], env=env,
                               capture_output=True, text=True, check=True).stdout
        token = next(w for w in added.split() if w.startswith("graft_"))
        db = sqlite3.connect(db_path)
        data = json.load(open(a.set))
        slugs = {v for (v,) in db.execute("SELECT slug FROM vendors")}
        queries, unresolved = [], 0
        for q in data["queries"]:
            if any(e["vendor"] not in slugs for e in q["expected"]):
                continue
            want = {resolve(db, e["vendor"], e) for e in q["expected"]}
            unresolved += None in want
            want.discard(None)
            if want:
                queries.append(dict(q, want=want))
        db.close()
        port = free_port()
        server = subprocess.Popen([a.bin, "serve", "--addr", f"127.0.0.1:{port}"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(600):
                try:
                    if httpx2.get(f"{base}/healthz", timeout=1).status_code == 200:
                        break
                except httpx2.HTTPError:
                    pass
                time.sleep(0.1)
            print(f"{len(queries)} queries of {a.set} ({unresolved} with an answer that is "
                  f"not a tool); model: {env.get('GRAFT_EMBEDDING_MODEL', 'none')}")
            report(anyio.run(run, f"{base}/mcp", token, queries))
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
