#!/usr/bin/env bash
# Image/video task benchmark: quote throughput against a bare Node passthrough (same client, same
# run), then N video tasks through create -> worker -> settle -> content (bench/tasks.mjs).
#
#   bench/tasks.sh                       # SQLite, 1,000 tasks
#   TOLLGATE_DATABASE_URL=postgres://postgres@127.0.0.1:5432/tollgate_bench bench/tasks.sh
#
# Needs ../shared/bench (the reference harness: its mock upstream and Node passthrough).
set -euo pipefail
cd "$(dirname "$0")/.."
HARNESS=${TOLLGATE_BENCH_HARNESS:-$(pwd)/../shared/bench}
npm run build --silent
if [ ! -d "$HARNESS/node_modules/undici" ]; then
  (cd "$HARNESS" && npm ci --no-audit --no-fund >&2)
fi
node bench/tasks.mjs "$@"
