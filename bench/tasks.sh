#!/usr/bin/env bash
# Image/video task benchmark: quote throughput against a bare Node passthrough (same client, same
# run), then N video tasks through create -> worker -> settle -> content (bench/tasks.mjs).
#
#   bench/tasks.sh                       # SQLite, 1,000 tasks
#   TOLLGATE_DATABASE_URL=postgres://postgres@127.0.0.1:5432/tollgate_bench bench/tasks.sh
#   bench/tasks.sh --smoke               # 10 tasks, 1 s quote phases (CI)
#
# Needs ../shared/bench (the reference harness: its mock upstream and Node passthrough).
# Any failed answer or a dirty ledger fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--smoke" ]; then shift; set -- --tasks 10 --seconds 1 --concurrency 4 "$@"; fi
TOLLGATE_BENCH_HARNESS=$(bench/harness.sh)
export TOLLGATE_BENCH_HARNESS
. bench/lib.sh
build_unless_built
node bench/tasks.mjs "$@"
