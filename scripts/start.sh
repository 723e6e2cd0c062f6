#!/usr/bin/env bash
# Sets up and starts Graft on its embedded SQLite default (data in ./data):
# fetches the embedding model for semantic search (scripts/get-model.sh; once, cached;
# GRAFT_NO_MODEL=1 skips it and Graft searches by words only), builds the console
# bundle and the server, then runs `graft serve`.
# Extra arguments go to `graft serve` (e.g. --addr 127.0.0.1:3100).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${GRAFT_NO_MODEL:-}" != 1 ] && [ -z "${GRAFT_EMBEDDING_MODEL:-}" ]; then
  scripts/get-model.sh >/dev/null
fi
scripts/build-site.sh
cargo build --bin graft
export LEPTOS_SITE_ROOT="$PWD/target/site"
exec "${CARGO_TARGET_DIR:-target}/debug/graft" serve "$@"
