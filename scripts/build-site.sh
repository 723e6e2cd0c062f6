#!/usr/bin/env bash
# Builds the console's browser bundle into target/site: the hydrate build of the crate
# for wasm32, wasm-bindgen (the CLI of exactly the version in Cargo.lock), the CSS and
# public/ files. Installs the wasm32 target and the wasm-bindgen CLI when missing.
#   scripts/build-site.sh            debug bundle (~12 MB wasm, quick to build)
#   scripts/build-site.sh --release  the `wasm-release` profile (opt-level z, LTO): for
#                                    production; several times smaller, slower to build
set -euo pipefail
profile=debug
if [ "${1:-}" = --release ]; then profile=wasm-release; fi
cd "$(dirname "$0")/.."
target_dir="${CARGO_TARGET_DIR:-target}"
rustup target list --installed | grep -q '^wasm32-unknown-unknown$' || rustup target add wasm32-unknown-unknown
version=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
if ! wasm-bindgen --version 2>/dev/null | grep -q " $version\$"; then
  echo "installing wasm-bindgen-cli $version (matches Cargo.lock)"
  cargo install wasm-bindgen-cli --version "$version" --force
fi
if [ "$profile" = debug ]; then
  cargo build --lib --target wasm32-unknown-unknown --no-default-features --features hydrate
else
  cargo build --lib --target wasm32-unknown-unknown --no-default-features --features hydrate --profile "$profile"
fi
mkdir -p target/site/pkg
wasm-bindgen --target web --out-dir target/site/pkg --out-name graft \
  "$target_dir/wasm32-unknown-unknown/$profile/graft.wasm"
cp style/main.css target/site/pkg/graft.css
cp -r public/. target/site/
# precompressed neighbours, which the server sends to a browser that accepts them
# (leptos_axum's file handler: br first, then gzip) instead of gzipping megabytes of wasm
# on each load; brotli (Debian's `brotli`) when installed. A quick level for the debug
# bundle, the best for production.
if [ "$profile" = debug ]; then gz=-6 br="-q 5"; else gz=-9 br="-q 11"; fi
for f in target/site/pkg/graft_bg.wasm target/site/pkg/graft.js target/site/pkg/graft.css; do
  rm -f "$f.gz" "$f.br"
  gzip -n -k -f $gz "$f"
  if command -v brotli >/dev/null; then brotli -f -k $br -o "$f.br" "$f"; fi
done
echo "console bundle ($profile) in target/site: $(du -h target/site/pkg/graft_bg.wasm | cut -f1) of wasm," \
  "$(du -h target/site/pkg/graft_bg.wasm.gz | cut -f1) gzipped$(command -v brotli >/dev/null && echo ", $(du -h target/site/pkg/graft_bg.wasm.br | cut -f1) with brotli")"
