#!/usr/bin/env bash
# Sets up and starts Graft on its embedded SQLite default (data in ./data):
# fetches the embedding model for semantic search (scripts/get-model.sh; once, cached;
# GRAFT_NO_MODEL=1 skips it and Graft searches by words only), builds the console
# bundle and the server, then runs `graft serve`.
# `--release` first builds for production: the release server and the console bundle of
# the `wasm-release` profile (a first build takes ~15-20 minutes on 2 cores).
# Extra arguments go to `graft serve` (e.g. --addr 127.0.0.1:3100).
set -euo pipefail
cd "$(dirname "$0")/.."
release=
if [ "${1:-}" = --release ]; then release=1; shift; fi
if [ "${GRAFT_NO_MODEL:-}" != 1 ] && [ -z "${GRAFT_EMBEDDING_MODEL:-}" ]; then
  scripts/get-model.sh >/dev/null
fi
export LEPTOS_SITE_ROOT="$PWD/target/site"
if [ -n "$release" ]; then
  scripts/build-site.sh --release
  cargo build --release --bin graft
  exec "${CARGO_TARGET_DIR:-target}/release/graft" serve "$@"
fi
scripts/build-site.sh
cargo build --bin graft
exec "${CARGO_TARGET_DIR:-target}/debug/graft" serve "$@"
