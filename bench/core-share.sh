#!/usr/bin/env bash
# The machine's own cost of several processes sharing one core (issue 21 item 5's three instances):
# the reference harness's bare Node passthrough (anchors/node-proxy.mjs) as one process on CPU 0,
# then as N processes all on CPU 0, each driven by its own wrk (CPU 1, 64 connections split among
# them) against the harness's mock (CPU 1). Prints both throughputs and N's share of one, the
# figure to read bench/pg-throughput.sh's "x N instances" ratios against: no gateway can keep
# more of a core split N ways than a bare passthrough does.
#   bench/core-share.sh                       # 3 processes, 6 s per phase, 2 rounds
#   bench/core-share.sh --instances 3 --seconds 8 --rounds 3
#   bench/core-share.sh --smoke               # a second per phase (CI): that it runs
#   BENCH_PORT=18400 UPSTREAM_PORT=18000 ...  # the first passthrough's port, the mock's (defaults)
# Fails when wrk reports an error or a non-2xx answer.
set -euo pipefail
cd "$(dirname "$0")/.."
INSTANCES=3 SECONDS_MEASURED=6 ROUNDS=2 CONNECTIONS=64
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) SECONDS_MEASURED=1 ROUNDS=1 ;;
    --instances) INSTANCES=$2; shift ;;
    --seconds) SECONDS_MEASURED=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
command -v wrk >/dev/null || { echo "core-share needs Debian's wrk (apt-get install -y wrk)" >&2; exit 1; }
HARNESS=$(bench/harness.sh)
BENCH_PORT=${BENCH_PORT:-18400} UPSTREAM_PORT=${UPSTREAM_PORT:-18000}
WORK=$(mktemp -d /tmp/tollgate-core-share.XXXXXX)
PROXIES=() MOCK=""
stop_proxies() { # (a bare `wait` would wait for the mock too)
  [ ${#PROXIES[@]} -gt 0 ] || return 0
  kill "${PROXIES[@]}" 2>/dev/null || true
  wait "${PROXIES[@]}" 2>/dev/null || true
  PROXIES=()
}
trap 'stop_proxies; kill $MOCK 2>/dev/null || true; rm -rf "$WORK"' EXIT
UPSTREAM_PORT=$UPSTREAM_PORT taskset -c 1 node "$HARNESS/mock-upstream.mjs" > "$WORK/mock.log" 2>&1 &
MOCK=$!

wait_for() { # port
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing answers on port $1" >&2
  exit 1
}

# Starts $1 passthroughs on CPU 0, loads them together for the measured seconds (after one second
# of warm-up each), prints the summed requests per second.
measure() {
  local count=$1 index port
  for index in $(seq 0 $((count - 1))); do
    port=$((BENCH_PORT + index))
    PROXY_PORT=$port UPSTREAM_URL=http://127.0.0.1:$UPSTREAM_PORT PROXY_MODE=passthrough \
      taskset -c 0 node "$HARNESS/anchors/node-proxy.mjs" > "$WORK/proxy-$index.log" 2>&1 &
    PROXIES+=($!)
  done
  wait_for "$UPSTREAM_PORT"
  for index in $(seq 0 $((count - 1))); do wait_for $((BENCH_PORT + index)); done
  local phase seconds loads
  for phase in warmup measured; do
    seconds=$SECONDS_MEASURED loads=()
    [ "$phase" = warmup ] && seconds=1
    for index in $(seq 0 $((count - 1))); do
      taskset -c 1 wrk -t1 -c$((CONNECTIONS / count)) -d"${seconds}s" --timeout 10s \
        -s "$HARNESS/wrk/openai.lua" "http://127.0.0.1:$((BENCH_PORT + index))/v1/chat/completions" \
        > "$WORK/wrk-$phase-$index.txt" 2>&1 &
      loads+=($!)
    done
    wait "${loads[@]}"
  done
  stop_proxies
  local total=0 file rate
  for file in "$WORK"/wrk-measured-*.txt; do
    if grep -Eq 'Non-2xx|Socket errors' "$file"; then
      echo "wrk saw errors:" >&2; cat "$file" >&2; exit 1
    fi
    rate=$(awk '/^Requests\/sec:/ { print $2 }' "$file")
    [ -n "$rate" ] || { echo "wrk printed no rate:" >&2; cat "$file" >&2; exit 1; }
    total=$(awk -v a="$total" -v b="$rate" 'BEGIN { printf "%.1f", a + b }')
  done
  rm -f "$WORK"/wrk-*.txt
  echo "$total"
}

echo "| round | 1 passthrough on CPU 0 (req/s) | $INSTANCES passthroughs on CPU 0 (req/s) | share of one |"
echo "|---|---:|---:|---:|"
for round in $(seq 1 "$ROUNDS"); do
  one=$(measure 1)
  many=$(measure "$INSTANCES")
  echo "| $round | $one | $many | $(awk -v a="$many" -v b="$one" 'BEGIN { printf "%.0f%%", 100 * a / b }') |"
done
