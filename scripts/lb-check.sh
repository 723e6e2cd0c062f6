#!/usr/bin/env bash
# Checks deploy/haproxy.cfg (issue 11.5) against two real `graft serve` instances on one
# throwaway PostgreSQL cluster (scripts/pg-cluster.sh), with HAProxy from Debian
# (installed when missing):
#   - a legacy (2025-11-25) session initialized through HAProxy lives on one instance
#     (the other answers 404 for its id) and every request with its Mcp-Session-Id
#     reaches that instance through HAProxy;
#   - 2026-07-28 requests, which carry no session, are served through HAProxy;
#   - the session's instance killed (SIGKILL): the next request gets 404 and the client
#     initializes again through HAProxy, on the other instance.
# GRAFT_BIN picks the binary (default: target/debug/graft, or $CARGO_TARGET_DIR's);
# LB_CONFIG another HAProxy configuration (a copy without the stick lines fails).
set -euo pipefail
cd "$(dirname "$0")/.."
GRAFT=${GRAFT_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/debug/graft}
SPECS=${GRAFT_SPECS_DIR:-$PWD/../shared/specs}
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v haproxy > /dev/null; then
  as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq haproxy > /dev/null
fi
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  scripts/pg-cluster.sh stop "$work/pg" > /dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "lb-check: FAILED: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() {
  for _ in $(seq 150); do curl -fs "$1/healthz" > /dev/null 2>&1 && return 0; sleep 0.1; done
  fail "$1 did not come up"
}

export DATABASE_URL GRAFT_SECRET_KEY RUST_LOG=warn
DATABASE_URL=$(scripts/pg-cluster.sh start "$work/pg")
GRAFT_SECRET_KEY=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
"$GRAFT" --data-dir "$work/data" import-openapi "$SPECS/petstore_openapi.yaml" --vendor petstore > /dev/null
token=$("$GRAFT" --data-dir "$work/data" agent add alpha | tail -1)
[[ $token == graft_* ]] || fail "no token from graft agent add: $token"

pa=$(free_port); pb=$(free_port); pl=$(free_port)
GRAFT_VENDOR_LOOPBACK=allow "$GRAFT" --data-dir "$work/data" serve --addr "127.0.0.1:$pa" 2> "$work/a.log" & pids+=($!); pid_a=$!; disown
GRAFT_VENDOR_LOOPBACK=allow "$GRAFT" --data-dir "$work/data" serve --addr "127.0.0.1:$pb" 2> "$work/b.log" & pids+=($!); pid_b=$!; disown
wait_up "http://127.0.0.1:$pa"; wait_up "http://127.0.0.1:$pb"
LB_BIND="127.0.0.1:$pl" GRAFT_A="127.0.0.1:$pa" GRAFT_B="127.0.0.1:$pb" \
  haproxy -db -f "${LB_CONFIG:-deploy/haproxy.cfg}" > "$work/lb.log" 2>&1 & pids+=($!); disown
lb="http://127.0.0.1:$pl"
wait_up "$lb"

mcp() { # URL [session] BODY [protocol version] -> prints "STATUS SESSION-ID-OR-EMPTY"
  local url=$1 session=$2 body=$3 version=${4:-2025-11-25}
  local args=(-s -o "$work/body" -D "$work/headers" -w '%{http_code}' -X POST "$url/mcp"
    -H "authorization: Bearer $token" -H 'content-type: application/json'
    -H 'accept: application/json, text/event-stream' -H "mcp-protocol-version: $version")
  [ -n "$session" ] && args+=(-H "mcp-session-id: $session")
  [ "$version" = 2026-07-28 ] && args+=(-H 'mcp-method: tools/list')
  local status
  status=$(curl "${args[@]}" --data "$body")
  echo "$status $(grep -i '^mcp-session-id:' "$work/headers" | cut -d' ' -f2 | tr -d '\r')"
}
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lb-check","version":"0"}}}'
list='{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}'
modern='{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"lb-check","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}'

read -r status session < <(mcp "$lb" "" "$init")
[ "$status" = 200 ] && [ -n "$session" ] || fail "initialize through HAProxy: $status"
read -r on_a _ < <(mcp "http://127.0.0.1:$pa" "$session" "$list")
read -r on_b _ < <(mcp "http://127.0.0.1:$pb" "$session" "$list")
case "$on_a/$on_b" in
  200/404) owner=a; owner_pid=$pid_a ;;
  404/200) owner=b; owner_pid=$pid_b ;;
  *) fail "the session should live on one instance: A $on_a, B $on_b" ;;
esac
for i in $(seq 20); do
  read -r status _ < <(mcp "$lb" "$session" "$list")
  [ "$status" = 200 ] || fail "request $i with the session through HAProxy: $status (not sticky)"
done
echo "lb-check: the session lives on instance $owner; 20 requests through HAProxy reached it"
for i in $(seq 10); do
  read -r status _ < <(mcp "$lb" "" "$modern" 2026-07-28)
  [ "$status" = 200 ] && grep -q '"tools"' "$work/body" || fail "2026-07-28 request $i: $status"
done
echo "lb-check: 10 requests of 2026-07-28 through HAProxy answered"

kill -9 "$owner_pid"
# the request below is for a dead instance, not a dying one: a connection the dying
# process still accepted would be reset (502), which is not what this checks
owner_port=$([ "$owner" = a ] && echo "$pa" || echo "$pb")
for _ in $(seq 100); do (exec 3<> "/dev/tcp/127.0.0.1/$owner_port") 2>/dev/null || break; sleep 0.05; done
read -r status _ < <(mcp "$lb" "$session" "$list")
[ "$status" = 404 ] || fail "after instance $owner died, its session should get 404, got $status"
read -r status session2 < <(mcp "$lb" "" "$init")
[ "$status" = 200 ] && [ -n "$session2" ] || fail "initialize again: $status"
read -r status _ < <(mcp "$lb" "$session2" "$list")
[ "$status" = 200 ] || fail "the new session: $status"
echo "lb-check: instance $owner killed: its session got 404, the client initialized again on the other"
echo "lb-check: ok"
