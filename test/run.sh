#!/usr/bin/env bash
# `npm test`: every test, in two phases.
#
#   1. test/unit: no network and no broker, so its files run in parallel (TEST_CONCURRENCY, default 4:
#      the files wait on timers and loopback sockets as much as they compute). The files that took
#      longest in the last run start first (times kept in node_modules/.cache), so a long property
#      or fuzz file that sorts late does not run alone at the end; new files start before them all.
#   2. test/integration and test/e2e: they share the real brokers on loopback and spawn gateway
#      processes, but every file makes its own queues, topics and ports, so their files run
#      BROKER_TEST_CONCURRENCY at a time (default 2: the machine's broker and process load allows
#      no more). The files listed in SERIAL_FILES below cannot share the machine and are left out.
#   3. The serial files, then test/conformance, one file at a time: the conformance suite restarts
#      the shared brokers, so it must run alone, and last.
#
# Both phases run even when the first fails, so one run shows every failure. The last lines give
# the totals and how long each phase took; the exit code is non-zero if any test failed.
# Arguments are passed to both runs of node's test runner (e.g. --test-name-pattern).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT
times_dir=node_modules/.cache/jms-gateway
mkdir -p "$times_dir"

# A reporter writing how long each file's top-level tests took, `<ms>\t<file>` a line. It is
# plain JavaScript made here, as node loads reporters without the TypeScript loader.
cat >"$log_dir/file-times.mjs" <<'JS'
export default async function* fileTimes(source) {
  const totals = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (nesting !== 0 || file === undefined) continue;
    totals.set(file, (totals.get(file) ?? 0) + details.duration_ms);
  }
  for (const [file, ms] of totals) yield `${Math.round(ms)}\t${file}\n`;
}
JS

# The test files under the given folders, longest in the last run of the phase first; files not
# timed yet come before them (their time is unknown), in name order.
ordered_files() {
  local times="$1"
  shift
  find "$@" -name '*.test.ts' 2>/dev/null | sort | awk -v times="$times" -v cwd="$PWD/" '
    BEGIN { while ((getline line < times) > 0) { split(line, f, "\t"); sub("^" cwd, "", f[2]); ms[f[2]] = f[1] } }
    { print ($0 in ms ? ms[$0] : "inf") "\t" NR "\t" $0 }' |
    sort -t $'\t' -k1,1gr -k2,2n | cut -f3
}

# Runs one phase: node's test runner over the files found in the given folders, output shown and
# kept, and each file's time kept for the next run's order.
# A phase whose name ends in `-serial` is given its files in the order to run them (the
# conformance suite, which restarts the brokers, last); the others are given folders.
phase() {
  local name="$1" concurrency="$2"
  shift 2
  local times="$times_dir/$name-times.tsv"
  local files
  if [[ "$name" == *-serial ]]; then
    files=("$@")
  elif ((concurrency > 1)); then
    mapfile -t files < <(without_serial $(ordered_files "$times" "$@"))
  else
    mapfile -t files < <(without_serial $(find "$@" -name '*.test.ts' 2>/dev/null | sort))
  fi
  if ((${#files[@]} == 0)); then
    echo "no test files in $*" >&2
    return 1
  fi
  node --import tsx --test --test-concurrency="$concurrency" --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter="$log_dir/file-times.mjs" --test-reporter-destination="$log_dir/$name-times.tsv" \
    "${extra[@]}" "${files[@]}" 2>&1 | tee "$log_dir/$name.log"
  local status=${PIPESTATUS[0]}
  # Only a whole run's times: a run narrowed by --test-name-pattern would give most files none.
  if ((${#extra[@]} == 0)) && [[ -s "$log_dir/$name-times.tsv" ]]; then cp "$log_dir/$name-times.tsv" "$times"; fi
  return "$status"
}

# The integration and e2e files that run alone, each for a reason that sharing the machine breaks:
SERIAL_FILES=(
  # bounds how much slower /health answers under load than on the idle gateway (100 ms): another
  # file's gateway or broker traffic would be counted against it
  test/e2e/gateway-hostile-reload.test.ts
  test/e2e/route-too-large.test.ts
  test/e2e/xpath-hostile-bodies.test.ts
  # kills and restarts its gateway at random moments while publishing at a fixed rate, and waits
  # on the Kafka transaction timeout: the longest and heaviest file, and timing-bound
  test/e2e/crash-recovery.test.ts
  # restarts the machine's PostgreSQL under a high-availability group
  test/e2e/ha-database-restart.test.ts
)
# Not here: test/e2e/first-day.test.ts (a fresh clone, `npm install`, two builds). Its install
# takes better-sqlite3 prebuilt instead of compiling SQLite on both cores, so what is left is one
# process's work (npm, tsc) with no time bound but its own: it takes one of the phase's slots, and
# as the longest file of the phase it starts first, beside the others instead of after them all.

# Prints the given files that are not in SERIAL_FILES, one a line.
without_serial() {
  local file serial
  for file in "$@"; do
    for serial in "${SERIAL_FILES[@]}"; do [[ "$file" == "$serial" ]] && continue 2; done
    echo "$file"
  done
}

# Reads a count ("pass", "fail", ...) from the summary node's spec reporter prints last.
count() { grep -E "^ℹ $2 [0-9]+$" "$log_dir/$1.log" | tail -n 1 | awk '{print $3}'; }

extra=("$@")
started=$SECONDS
phase unit "${TEST_CONCURRENCY:-4}" test/unit
unit_status=$?
unit_seconds=$((SECONDS - started))

# Two at a time by default; BROKER_TEST_CONCURRENCY=1 runs them one by one. A fresh Kafka answers
# topic creations with UNKNOWN_TOPIC_OR_PARTITION for a few seconds, more often when two files make
# topics at once; the connector and the tests (test/helpers/kafka-topics.ts) ask again with
# backoff then. Files that end gateways, clients and schemas they depend on register their
# cleanups with test/helpers/teardown.ts, last made first: node runs after-hooks in the order they
# were registered and skips the rest once one throws, which under two files' load once left an HA
# test dropping its schema under a running gateway (a deadlock) and its gateways running.
brokers_concurrency=${BROKER_TEST_CONCURRENCY:-2}
started=$SECONDS
phase brokers "$brokers_concurrency" test/integration test/e2e
brokers_status=$?
brokers_seconds=$((SECONDS - started))

started=$SECONDS
mapfile -t conformance < <(find test/conformance -name '*.test.ts' | sort)
phase brokers-serial 1 "${SERIAL_FILES[@]}" "${conformance[@]}"
serial_status=$?
serial_seconds=$((SECONDS - started))

phases=(unit brokers brokers-serial)
total() {
  local sum=0 phase
  for phase in "${phases[@]}"; do sum=$((sum + $(count "$phase" "$1" || echo 0))); done
  echo "$sum"
}
# Each phase's own list of failures scrolls away under the next phases' output: repeated here,
# where the end of a CI log shows them all.
for phase in "${phases[@]}"; do
  if [[ "$(count "$phase" fail)" =~ ^[1-9] ]]; then
    echo
    echo "---- failures in the $phase phase ----"
    sed -n '/^✖ failing tests:/,$p' "$log_dir/$phase.log" | head -n 80
  fi
done
echo
echo "npm test took $((unit_seconds + brokers_seconds + serial_seconds)) s: unit ${unit_seconds} s (parallel)," \
  "integration and e2e ${brokers_seconds} s (${brokers_concurrency} at a time)," \
  "files that run alone and conformance ${serial_seconds} s (serial)"
echo "tests: $(total pass) passed, $(total fail) failed, $(total skipped) skipped"
((unit_status == 0 && brokers_status == 0 && serial_status == 0))
