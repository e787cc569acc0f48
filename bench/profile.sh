#!/usr/bin/env bash
# Where an accounted request's CPU goes: runs the gateway under `node --cpu-prof` against the
# reference harness's mock upstream, drives a closed loop of accounted chat requests through it
# (the harness's load client, a fresh Idempotency-Key per request), then summarises the profile's
# samples inside the measured window by component (bench/profile-summary.mjs). RESULTS.md quotes it.
#
#   bench/profile.sh [--seconds 10] [--connections 32]   # SQLite
#   bench/profile.sh --smoke                              # one second: proves the script still runs
#   bench/profile.sh --dist packages/server/dist-before   # profile an earlier build (a copy of dist)
#   bench/profile.sh --top 40 --outside-store             # more top functions, the store's left out
#   bench/profile.sh --no-build                           # the builds are fresh (interleaved pairs)
#   bench/profile.sh --event-log                          # with accounting.event_log on (docs/event-log.md)
#   bench/profile.sh --heap                               # allocation per request by function instead
#                                                         # (bench/heap-sampler.mjs, heap-summary.mjs)
#   TOLLGATE_DATABASE_URL=postgres://... bench/profile.sh
#   BENCH_PORT=18395 UPSTREAM_PORT=18100 bench/profile.sh  # other ports (defaults 18295, 18000)
# A port already taken (another engineer's benchmark on a shared machine) stops the run: the
# load would otherwise be measured against someone else's mock or gateway.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_MEASURED=10 CONNECTIONS=32 DIST=packages/server/dist SUMMARY_FLAGS=() BUILD=1 ACCOUNTING='' HEAP=0 TOP=30
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) SECONDS_MEASURED=1 CONNECTIONS=8 ;;
    --seconds) SECONDS_MEASURED=$2; shift ;;
    --connections) CONNECTIONS=$2; shift ;;
    --dist) DIST=$2; shift ;;
    --top) SUMMARY_FLAGS+=(--top "$2"); TOP=$2; shift ;;
    --heap) HEAP=1 ;;
    --no-build) BUILD=0 ;;
    --event-log) ACCOUNTING='"accounting": { "event_log": true },' ;;
    --outside-store) SUMMARY_FLAGS+=(--outside 'claim and finish transactions (store, ledger, records)') ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
BENCH_PORT=${BENCH_PORT:-18295} UPSTREAM_PORT=${UPSTREAM_PORT:-18000}
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in "$BENCH_PORT" "$UPSTREAM_PORT"; do
  # A run just before this one may still be closing its processes: a few seconds' grace.
  for attempt in $(seq 1 25); do port_taken "$port" || break; sleep 0.2; done
  if port_taken "$port"; then
    echo "port $port is taken: set BENCH_PORT / UPSTREAM_PORT to free ones" >&2
    exit 1
  fi
done
export UPSTREAM_PORT
HARNESS=$(bench/harness.sh)
WORK=$(mktemp -d /tmp/tollgate-profile.XXXXXX)
GATEWAY="" MOCK=""
trap 'kill $GATEWAY $MOCK 2>/dev/null || true' EXIT
. bench/lib.sh
if [ "$BUILD" = 1 ]; then build_unless_built; fi
cat > "$WORK/config.json" <<JSON
{ "upstreams": { "mock": { "kind": "openai", "base_url": "http://127.0.0.1:$UPSTREAM_PORT/v1", "connections": 256,
                        "connections_per_account": 256 } },
  "models": [ { "id": "gpt-4o-mini", "upstream": "mock", "families": ["chat"], "combinations": [["streaming"]],
    "prices": { "input_per_million_tokens": 1000000, "output_per_million_tokens": 4000000 } } ],
  $ACCOUNTING
  "limits": { "requests_per_minute": 100000000, "concurrent_requests": 100000,
              "concurrent_requests_per_account": 100000 } }
JSON
export TOLLGATE_CONFIG=$WORK/config.json TOLLGATE_DATA_DIR=$WORK/data
tollgate() { node packages/server/bin/tollgate.mjs "$@"; }
json_field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[process.argv[1]]))' "$1"; }
ACCOUNT=$(tollgate accounts create --email "profile-$(date +%s)@example.test" | json_field id)
tollgate topup "$ACCOUNT" --amount 10000000000000 --reference profile >/dev/null
KEY=$(tollgate keys create "$ACCOUNT" --kind service --name profile | json_field key)
taskset -c 1 node "$HARNESS/mock-upstream.mjs" > "$WORK/mock.log" 2>&1 &
MOCK=$!
# The CPU profiler, or with --heap the heap sampler (it starts and stops on SIGUSR2, below).
if [ "$HEAP" = 1 ]; then
  PROFILER=(--import "$(pwd)/bench/heap-sampler.mjs")
  export TOLLGATE_HEAP_PROFILE=$WORK/allocations.heapprofile
else
  PROFILER=(--cpu-prof --cpu-prof-dir="$WORK/profile")
fi
PORT=$BENCH_PORT LOG_LEVEL=warn NODE_ENV=production taskset -c 0 \
  node "${PROFILER[@]}" "$DIST/main.js" > "$WORK/gateway.log" 2>&1 &
GATEWAY=$!
for attempt in $(seq 1 300); do
  curl -sf -o /dev/null http://127.0.0.1:$BENCH_PORT/readyz && break
  [ "$attempt" = 300 ] && { echo "the gateway did not become ready" >&2; exit 1; }
  sleep 0.2
done
kill -0 "$MOCK" 2>/dev/null || { echo "the mock upstream did not start: $(cat "$WORK/mock.log")" >&2; exit 1; }
load() {
  taskset -c 1 node "$HARNESS/loadgen.mjs" --url "http://127.0.0.1:$BENCH_PORT/v1/chat/completions" --mode max \
    --connections "$CONNECTIONS" --warmup 0 --duration "$1" \
    --header "authorization: Bearer $KEY" --header 'idempotency-key: {{uuid}}'
}
load 3 > "$WORK/warmup.json" # compiled and pooled before anything is counted
[ "$HEAP" = 0 ] || kill -USR2 "$GATEWAY" # the sampler starts
node bench/thread-cpu.mjs snapshot --pid "$GATEWAY" > "$WORK/threads-before.json"
START=$(node -e 'console.log(String(process.hrtime.bigint() / 1000n))')
load "$SECONDS_MEASURED" > "$WORK/load.json"
END=$(node -e 'console.log(String(process.hrtime.bigint() / 1000n))')
node bench/thread-cpu.mjs snapshot --pid "$GATEWAY" > "$WORK/threads-after.json"
if [ "$HEAP" = 1 ]; then
  kill -USR2 "$GATEWAY" # the sampler writes what it counted
  for attempt in $(seq 1 100); do [ -s "$TOLLGATE_HEAP_PROFILE" ] && break; sleep 0.1; done
  [ -s "$TOLLGATE_HEAP_PROFILE" ] || { echo "the heap sampler wrote no profile" >&2; exit 1; }
fi
kill -TERM "$GATEWAY"
wait "$GATEWAY" || true
GATEWAY=""
# The window is kept with the profile: profile-summary.mjs can be run on it again.
echo "--from $START --to $END" > "$WORK/window.txt"
if [ "$HEAP" = 1 ]; then
  node bench/heap-summary.mjs --profile "$TOLLGATE_HEAP_PROFILE" --top "$TOP" \
    --requests "$(json_field ok < "$WORK/load.json")"
else
  node bench/profile-summary.mjs --profile-dir "$WORK/profile" --load "$WORK/load.json" \
    --from "$START" --to "$END" "${SUMMARY_FLAGS[@]}"
fi
# The profile's worker line is wall time (it samples the checkpointer inside its fsyncs too).
node bench/thread-cpu.mjs report --before "$WORK/threads-before.json" --after "$WORK/threads-after.json" \
  --requests "$(json_field ok < "$WORK/load.json")"
tollgate ledger check >/dev/null || { echo "ledger check failed after the profile run" >&2; exit 1; }
echo "profile and logs: $WORK"
