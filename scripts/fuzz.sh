#!/usr/bin/env bash
# Runs one fuzz target (or `all`, one after the other) for SECONDS (default 60) with
# cargo fuzz on the stable toolchain (fuzz/README.md). Installs cargo-fuzz when missing.
# The working corpus starts from fuzz/seeds/TARGET plus the shared vendor documents and
# the tests' fixtures; it and any crash live under $GRAFT_CACHE/fuzz (default
# ~/.cache/graft/fuzz). Exits non-zero when a target finds a crash, naming the input.
#
#   scripts/fuzz.sh TARGET|all [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=${GRAFT_CACHE:-$HOME/.cache/graft}
TARGETS=(openapi_import schema_acquire request_build http_endpoint search_query vendor_answer)
target=${1:?usage: scripts/fuzz.sh TARGET|all [SECONDS]  (targets: ${TARGETS[*]})}
seconds=${2:-60}
# every build of graft from another checkout or with other flags leaves another copy of
# its artifacts in the fuzz build cache (54 GB after some weeks on one machine; the five
# smoke-run targets of one checkout take about 8): build without incremental state, and start
# the cache afresh before a run once it passes 16 GiB (a rebuild takes minutes)
if [ -z "${FUZZ_CACHE_CHECKED:-}" ] && [ -d "$CACHE/fuzz-target" ] &&
  [ "$(du -sk "$CACHE/fuzz-target" | cut -f1)" -gt $((16 * 1024 * 1024)) ]; then
  echo "==> the fuzz build cache passed 16 GiB: starting it afresh"
  rm -rf "$CACHE/fuzz-target"
fi
export FUZZ_CACHE_CHECKED=1
if [ "$target" = all ]; then
  for t in "${TARGETS[@]}"; do "$0" "$t" "$seconds"; done
  exit 0
fi
[[ " ${TARGETS[*]} " == *" $target "* ]] || { echo "unknown target $target (${TARGETS[*]})" >&2; exit 2; }
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --quiet
SPECS=${GRAFT_SPECS_DIR:-$ROOT/../shared/specs}
export GRAFT_SPECS_DIR=$SPECS
work="$CACHE/fuzz/$target"
# campaigns grow a corpus of thousands of inputs; the quick runs of .ci/run (dev build)
# keep their own, so that replaying a campaign's corpus never eats their minute
if [ "${FUZZ_PROFILE:-release}" = dev ]; then
  corpus="$work/smoke-corpus"
else
  corpus="$work/corpus"
fi
artifacts="$work/artifacts/"
mkdir -p "$corpus" "$artifacts"
cp -n fuzz/seeds/"$target"/* "$corpus"/ 2>/dev/null || true
if [ "$target" = openapi_import ]; then
  # real documents, the small ones whole (libFuzzer's -max_len keeps inputs small)
  for f in "$SPECS"/petstore_openapi.yaml "$SPECS"/httpbin_0.10.2_local_spec.json tests/fixtures/*.yaml; do
    [ -f "$f" ] && cp -n "$f" "$corpus"/ || true
  done
fi
# FUZZ_PROFILE=dev builds without optimization (quicker to build, slower to run: the
# smoke runs of .ci/run); the default is release with debug assertions (campaigns)
if [ "${FUZZ_PROFILE:-release}" = dev ]; then
  # line tables only: crash backtraces keep file and line, and each target's binary is
  # a fraction of its size with full debug info (about 3 GB)
  export CARGO_PROFILE_DEV_DEBUG=line-tables-only
  flags=(--dev -s none --target-dir "$CACHE/fuzz-target")
else
  flags=(-O -s none --codegen-units 16 --target-dir "$CACHE/fuzz-target")
fi
export CARGO_INCREMENTAL=0
cd fuzz
cargo fuzz build "${flags[@]}" "$target"
echo "==> fuzzing $target for ${seconds}s (corpus $corpus)"
set +e
# FUZZ_KEEP_GOING=1 (campaigns): a crash is saved and the run goes on (libFuzzer's fork
# mode), so one campaign collects every crash it meets
keep=()
if [ "${FUZZ_KEEP_GOING:-0}" = 1 ]; then
  keep=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
# only inputs saved by this run count (an earlier run's finding, already reported, stays
# in $artifacts until someone turns it into a regression test and deletes it)
stamp="$work/run-started"
touch "$stamp"
sleep 1
cargo fuzz run "${flags[@]}" "$target" "$corpus" -- "${keep[@]}" \
  -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -max_len=65536 \
  -dict="$ROOT/fuzz/dict/$target.dict" -artifact_prefix="$artifacts" -print_final_stats=1 \
  2>&1 | tee "$work/last.log" | grep -E "^#[0-9]+ *(DONE|INITED)|stat::|ERROR|panicked|SUMMARY|Test unit written|==[0-9]+==|^INFO: fuzzed for|crashes:"
status=${PIPESTATUS[0]}
set -e
found() { find "$artifacts" -type f -newer "$stamp" | grep -q .; }
if [ "$status" -eq 0 ] && found; then
  echo "$target saved crash inputs in $artifacts (the trace is in $work/last.log)" >&2
  status=1
fi
if [ "$status" -ne 0 ]; then
  if found; then
    echo "$target found a crash (exit $status): the input is in $artifacts, the trace in $work/last.log" >&2
  else
    echo "$target did not run (exit $status): see $work/last.log" >&2
  fi
  exit "$status"
fi
