#!/usr/bin/env bash
# `npm test`: every test, in two phases.
#
#   1. test/unit: no network and no broker, so its files run in parallel (TEST_CONCURRENCY, default 4:
#      the files wait on timers and loopback sockets as much as they compute).
#   2. test/integration, test/e2e, test/conformance: they share the real brokers (the conformance
#      suite restarts them) and spawn gateway processes, so their files run one at a time.
#
# Both phases run even when the first fails, so one run shows every failure. The last lines give
# the totals and how long each phase took; the exit code is non-zero if any test failed.
# Arguments are passed to both runs of node's test runner (e.g. --test-name-pattern).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT

# Runs one phase: node's test runner over the files found in the given folders, output shown and kept.
phase() {
  local name="$1" concurrency="$2"
  shift 2
  local files
  mapfile -t files < <(find "$@" -name '*.test.ts' 2>/dev/null | sort)
  if ((${#files[@]} == 0)); then
    echo "no test files in $*" >&2
    return 1
  fi
  node --import tsx --test --test-concurrency="$concurrency" --test-reporter=spec "${extra[@]}" "${files[@]}" \
    2>&1 | tee "$log_dir/$name.log"
}

# Reads a count ("pass", "fail", ...) from the summary node's spec reporter prints last.
count() { grep -E "^ℹ $2 [0-9]+$" "$log_dir/$1.log" | tail -n 1 | awk '{print $3}'; }

extra=("$@")
started=$SECONDS
phase unit "${TEST_CONCURRENCY:-4}" test/unit
unit_status=$?
unit_seconds=$((SECONDS - started))

started=$SECONDS
phase brokers 1 test/integration test/e2e test/conformance
brokers_status=$?
brokers_seconds=$((SECONDS - started))

passed=$(($(count unit pass || echo 0) + $(count brokers pass || echo 0)))
failed=$(($(count unit fail || echo 0) + $(count brokers fail || echo 0)))
skipped=$(($(count unit skipped || echo 0) + $(count brokers skipped || echo 0)))
echo
echo "npm test took $((unit_seconds + brokers_seconds)) s: unit ${unit_seconds} s (parallel), brokers and processes ${brokers_seconds} s (serial)"
echo "tests: ${passed} passed, ${failed} failed, ${skipped} skipped"
((unit_status == 0 && brokers_status == 0))
