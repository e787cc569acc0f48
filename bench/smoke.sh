#!/usr/bin/env bash
# Every benchmark under bench/ in its smoke mode (a second or so per phase), one after another.
# Not a timing check: it fails when a benchmark no longer runs, answers anything but 2xx, or leaves
# a dirty ledger, so that no benchmark can silently stop working. .ci/run runs it after the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# One build for all of them (each script builds when run alone); none when the caller has just built
# this tree and says so (TOLLGATE_BENCH_BUILT=1: .ci/run, after npm test's build).
[ -n "${TOLLGATE_BENCH_BUILT:-}" ] || npm run build --silent
export TOLLGATE_BENCH_BUILT=1
for bench in run goals idle-latency assets many-accounts pg-throughput tasks profile tail; do
  printf '\n=== bench/%s.sh --smoke ===\n' "$bench"
  started=$(date +%s)
  bash "bench/$bench.sh" --smoke
  echo "bench/$bench.sh --smoke passed in $(($(date +%s) - started)) s"
done
printf '\n=== bench/profile.sh --smoke --heap ===\n'
bash bench/profile.sh --smoke --heap
printf '\n=== bench/store-path.mjs --smoke ===\n'
node bench/store-path.mjs --smoke
