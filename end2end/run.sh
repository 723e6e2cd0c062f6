#!/usr/bin/env bash
# The console's browser tests (Playwright in Debian Chromium, two projects: hydrated and
# JavaScript disabled) against a real Graft, with a real vendor (vendor.mjs) and real MCP
# clients (the TypeScript SDK) in the same tests.
#
#   (cd end2end && npm ci)          # once
#   scripts/build-site.sh           # the console bundle in target/site
#   GRAFT_BIN=target/debug/graft bash end2end/run.sh [playwright args]
#
# Sets up a temporary data dir: vendor `widgets` (imported from an OpenAPI document that
# points at vendor.mjs) with a bearer connection, the person `admin`, then serves Graft on
# a free port. Screenshots go to end2end/test-results/screenshots/<project>/.
# Environment: GRAFT_BIN, CHROMIUM (default /usr/bin/chromium), E2E_NODE (a Node >= 20;
# default `node`), E2E_KEEP=1 keeps the temp dir (graft.log, data).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
GRAFT_BIN=${GRAFT_BIN:-$REPO/target/debug/graft}
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
NODE=${E2E_NODE:-node}
WORK=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${E2E_KEEP:-}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

[ -f "$REPO/target/site/pkg/graft_bg.wasm" ] || { echo "no console bundle: run scripts/build-site.sh" >&2; exit 1; }

export VENDOR_SECRET="vendor-secret-$RANDOM$RANDOM"
"$NODE" "$HERE/vendor.mjs" > "$WORK/vendor.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q listening "$WORK/vendor.log" && break; sleep 0.1; done
VENDOR_PORT=$(awk '/listening/ {print $2}' "$WORK/vendor.log")
[ -n "$VENDOR_PORT" ] || { echo "vendor did not start" >&2; cat "$WORK/vendor.log"; exit 1; }

# an OpenAPI document of the vendor, imported by the CLI (widgets) and uploaded in the
# tests through the console (gadgets-<project>)
cat > "$WORK/widgets.yaml" <<YAML
openapi: 3.0.3
info: {title: Widgets, version: "1"}
servers: [{url: "http://127.0.0.1:$VENDOR_PORT"}]
components:
  securitySchemes: {bearer: {type: http, scheme: bearer}}
security: [{bearer: []}]
paths:
  /catalog:
    get:
      operationId: getCatalog
      summary: Get the whole widget catalog
      responses: {"200": {description: the catalog}}
  /widgets:
    get:
      operationId: listWidgets
      summary: List widgets
      responses: {"200": {description: the widgets}}
    post:
      operationId: createWidget
      summary: Create a widget
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, properties: {name: {type: string}}, required: [name]}
      responses: {"201": {description: the new widget}}
YAML
export E2E_SPEC="$WORK/widgets.yaml"
export E2E_VENDOR_URL="http://127.0.0.1:$VENDOR_PORT"
export E2E_SPECS_DIR=${GRAFT_SPECS_DIR:-$REPO/../shared/specs}

DATA="$WORK/data"
g() { "$GRAFT_BIN" --data-dir "$DATA" "$@"; }
g import-openapi "$WORK/widgets.yaml" --vendor widgets > /dev/null
g connection add widgets --label prod --kind bearer --secret-env VENDOR_SECRET > /dev/null
export GRAFT_ADMIN_PASSWORD="admin-password-$RANDOM$RANDOM"
echo "$GRAFT_ADMIN_PASSWORD" | g user add admin --password-stdin > /dev/null

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export GRAFT_URL="http://127.0.0.1:$PORT"
LEPTOS_SITE_ROOT="$REPO/target/site" GRAFT_ADDR="127.0.0.1:$PORT" RUST_LOG=${RUST_LOG:-info} GRAFT_VENDOR_LOOPBACK=allow \
  "$GRAFT_BIN" --data-dir "$DATA" serve > "$WORK/graft.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -fs "$GRAFT_URL/healthz" > /dev/null && break; sleep 0.1; done
curl -fs "$GRAFT_URL/healthz" > /dev/null || { echo "graft did not start" >&2; cat "$WORK/graft.log"; exit 1; }

cd "$HERE"
rm -rf test-results
status=0
"$NODE" node_modules/@playwright/test/cli.js test "$@" || status=$?
if [ $status -ne 0 ]; then
  echo "---- graft.log (last 60 lines)"; tail -n 60 "$WORK/graft.log"
fi
# no secret reaches the log
if grep -q "$VENDOR_SECRET" "$WORK/graft.log"; then echo "the vendor secret is in graft.log" >&2; status=1; fi
exit $status
