#!/usr/bin/env bash
# Runs every test of Graft, installing first whatever this machine lacks:
#   - the wasm32 target (the console's hydrate build must compile),
#   - a Python venv with the real `mcp` SDK (tests/python),
#   - Node 22 and the official MCP conformance suite from npm (tests/conformance),
# then: clippy, the hydrate build, the Python SDK test, the conformance suite, and the
# Rust unit and integration tests (cargo test, last).
# Tools and caches go under $GRAFT_CACHE (default ~/.cache/graft); CARGO_TARGET_DIR is
# honoured.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${GRAFT_CACHE:-$HOME/.cache/graft}
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
mkdir -p "$CACHE"
step() { printf '\n==> %s\n' "$*"; }

step "toolchain"
rustup target list --installed | grep -q '^wasm32-unknown-unknown$' || rustup target add wasm32-unknown-unknown
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy

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
  apt-get update -qq && apt-get install -y -qq nodejs npm
fi
if [ ! -x tests/conformance/node_modules/node/bin/node ] || [ tests/conformance/package-lock.json -nt tests/conformance/node_modules ]; then
  (cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error)
  touch tests/conformance/node_modules
fi

step "build: server, and the console's hydrate bundle for wasm32"
cargo build --bin graft
cargo build --lib --target wasm32-unknown-unknown --no-default-features --features hydrate

step "clippy"
cargo clippy --all-targets -- -D warnings

step "Python SDK end to end (tests/python)"
GRAFT_BIN="$TARGET/debug/graft" GRAFT_SPECS_DIR="${GRAFT_SPECS_DIR:-$PWD/../shared/specs}" \
  "$VENV/bin/pytest" -q -p no:cacheprovider tests/python

step "MCP conformance suite (tests/conformance)"
GRAFT_BIN="$TARGET/debug/graft" bash tests/conformance/run.sh

step "Rust unit and integration tests"
cargo test
