#!/usr/bin/env bash
# What the latency tail at a fixed rate is made of: one gateway (SQLite, or PostgreSQL with
# TOLLGATE_DATABASE_URL) with bench/stall-probe.mjs preloaded, pinned to CPU 0; the reference
# harness's mock upstream and bench/tail.mjs's open-loop client on CPU 1. Prints the latencies,
# the event loop's late runs and garbage collections, and the slow requests' clusters beside them.
#   bench/tail.sh [--rate 500] [--seconds 60]     # flags go to bench/tail.mjs
#   bench/tail.sh --smoke                         # 2 s at 100/s: that it runs (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
FLAGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) FLAGS+=(--rate 100 --seconds 2 --warmup 1) ;;
    *) FLAGS+=("$1") ;;
  esac
  shift
done
HARNESS=$(bench/harness.sh)
WORK=$(mktemp -d /tmp/tollgate-tail.XXXXXX)
PIDS=()
. bench/lib.sh
cleanup() {
  kill ${PIDS[@]+"${PIDS[@]}"} 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
build_unless_built
write_bench_config "$WORK/config.json" >/dev/null
export TOLLGATE_CONFIG=$WORK/config.json TOLLGATE_DATA_DIR=$WORK/data
export TOLLGATE_DATABASE_URL=${TOLLGATE_DATABASE_URL:-sqlite:$WORK/data/tollgate.sqlite}
BENCH_PORT=${BENCH_PORT:-18495} UPSTREAM_PORT=${UPSTREAM_PORT:-18000}
UPSTREAM_PORT=$UPSTREAM_PORT taskset -c 1 node "$HARNESS/mock-upstream.mjs" > "$WORK/mock.log" 2>&1 &
PIDS+=($!)
wait_ready "http://127.0.0.1:$UPSTREAM_PORT/v1/models"
KEY=$(create_funded_key)
NODE_ENV=production PORT=$BENCH_PORT TOLLGATE_STALL_PROBE=$WORK/probe.jsonl \
  taskset -c 0 node --import ./bench/stall-probe.mjs packages/server/dist/main.js > "$WORK/gateway.log" 2>&1 &
PIDS+=($!)
wait_ready "http://127.0.0.1:$BENCH_PORT/readyz"
taskset -c 1 node bench/tail.mjs --url "http://127.0.0.1:$BENCH_PORT" --key "$KEY" \
  --probe "$WORK/probe.jsonl" ${FLAGS[@]+"${FLAGS[@]}"}
node bench/tollgate-of.mjs ledger check > "$WORK/ledger.json" || { cat "$WORK/ledger.json"; exit 1; }
echo "ledger clean"
