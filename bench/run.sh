#!/usr/bin/env bash
# Benchmarks Tollgate with full accounting (a real key, a fresh Idempotency-Key per request, a
# hold and a capture on every request) against the shared reference harness's mock upstream,
# side by side with the direct baseline and a bare Node passthrough proxy. Results: RESULTS.md.
#
#   bench/run.sh                 # quick run (5 s phases)
#   bench/run.sh --rounds 3      # what RESULTS.md quotes (extra flags go to the harness)
#   bench/run.sh --smoke         # Tollgate alone, a second per phase: proves the benchmark still runs (CI)
#
# Every answer must be a 2xx and the ledger clean afterwards, or the script exits non-zero
# (bench/check-harness-results.mjs): a benchmark that errors is not measuring the accounted path.
# The gateway's limits are raised so that none of them binds (printed below): the benchmark
# measures the path, not the fairness rules.
# Needs ../shared/bench (the reference harness, copied by bench/harness.sh) and, for the max
# phase, Debian's wrk (the harness falls back to its Node client without it).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
SMOKE=0
if [ "${1:-}" = "--smoke" ]; then SMOKE=1; shift; fi
HARNESS=$(bench/harness.sh)
WORK=$(mktemp -d /tmp/tollgate-bench.XXXXXX)
. bench/lib.sh
build_unless_built

write_bench_config "$WORK/config.json"
export TOLLGATE_CONFIG=$WORK/config.json TOLLGATE_DATA_DIR=$WORK/data
STORE_NAME=SQLite
[ -n "${TOLLGATE_DATABASE_URL:-}" ] && STORE_NAME=PostgreSQL
echo "store: $STORE_NAME"
tollgate() { node packages/server/bin/tollgate.mjs "$@"; }
KEY=$(create_funded_key)

cat > "$WORK/target.json" <<JSON
{ "targets": [ {
  "name": "tollgate", "kind": "gateway",
  "description": "Tollgate, full accounting (auth, record, hold, capture), $STORE_NAME",
  "port": 18290, "baseUrl": "http://127.0.0.1:{{PORT}}/v1",
  "headers": { "authorization": "Bearer $KEY", "idempotency-key": "{{uuid}}" },
  "env": { "NODE_ENV": "production", "PORT": "{{PORT}}", "LOG_LEVEL": "warn",
           "TOLLGATE_CONFIG": "$WORK/config.json", "TOLLGATE_DATA_DIR": "$WORK/data"${TOLLGATE_DATABASE_URL:+, \"TOLLGATE_DATABASE_URL\": \"$TOLLGATE_DATABASE_URL\"} },
  "start": "node $REPO/packages/server/dist/main.js", "cwd": "$REPO"
} ] }
JSON
TARGETS=direct,node-passthrough,tollgate
if [ "$SMOKE" = 1 ]; then
  # The smoke judges Tollgate's path only (every answer 2xx, a clean ledger): the anchors (the mock
  # itself, the harness's bare proxy) are the baselines of the comparison a smoke does not make, and
  # the discarded warm-up burst is judged by nothing. The bare proxy still runs below (streams).
  TARGETS=tollgate
  set -- --duration 1 --warmup 0 --target-warmup 0 --rates 100 --stream-rate 20 --connections 16
fi
"$HARNESS/run.sh" --targets "anchors,$WORK/target.json" --only "$TARGETS" --out "$WORK/results" "${@:---quick}"
node bench/check-harness-results.mjs "$WORK/results/results.json"
# ...and it measured Tollgate (a target list that names none would otherwise pass as clean).
node -e 'const { rows } = require(process.argv[1]); if (!rows.some((row) => row.name === "tollgate")) { console.error("no tollgate row in the results"); process.exit(1); }' "$WORK/results/results.json"

# Memory with 1,000 concurrent open streams: a slow mock (100 chunks, 100 ms apart), the gateway
# and the bare Node passthrough each pinned to CPU 0, the load client on CPU 1.
# Both proxies get 1,100 upstream connections, so no stream waits for a free one.
# Every stream comes from the load client's one address: write_bench_config raises the gateway's
# per-address connection cap (server.max_connections_per_address, 256 by default), and the smoke
# opens more streams than that default, so that a cap which binds fails CI rather than the figure.
STREAMS=1000 CHUNKS=100 CHUNK_DELAY_MS=100
[ "$SMOKE" = 1 ] && STREAMS=300 CHUNKS=10 CHUNK_DELAY_MS=20
sed -e 's#127.0.0.1:18000#127.0.0.1:18001#' -e 's#"connections": 256#"connections": 1100#' -e 's#"connections_per_account": 256#"connections_per_account": 1100#' "$WORK/config.json" > "$WORK/config-slow.json"
UPSTREAM_PORT=18001 STREAM_CHUNKS=$CHUNKS STREAM_CHUNK_DELAY_MS=$CHUNK_DELAY_MS taskset -c 1 node "$HARNESS/mock-upstream.mjs" > "$WORK/mock-slow.log" 2>&1 &
MOCK=$!
GATEWAY="" PROXY=""
trap 'kill $MOCK $GATEWAY $PROXY 2>/dev/null || true' EXIT
TOLLGATE_CONFIG=$WORK/config-slow.json PORT=18291 LOG_LEVEL=warn NODE_ENV=production taskset -c 0 node packages/server/dist/main.js > "$WORK/gateway-slow.log" 2>&1 &
GATEWAY=$!
PROXY_PORT=18292 PROXY_CONNECTIONS=1100 UPSTREAM_URL=http://127.0.0.1:18001 PROXY_MODE=passthrough taskset -c 0 node "$HARNESS/anchors/node-proxy.mjs" > "$WORK/proxy-slow.log" 2>&1 &
PROXY=$!
for _ in $(seq 1 100); do
  curl -sf -o /dev/null http://127.0.0.1:18291/healthz && curl -s -o /dev/null http://127.0.0.1:18292/ && break
  sleep 0.2
done
echo "streams memory, tollgate:"
taskset -c 1 node bench/streams-memory.mjs --url http://127.0.0.1:18291/v1 --key "$KEY" --pid "$GATEWAY" --streams "$STREAMS" | tee "$WORK/streams-tollgate.json"
echo "streams memory, node-passthrough:"
taskset -c 1 node bench/streams-memory.mjs --url http://127.0.0.1:18292/v1 --key "$KEY" --pid "$PROXY" --streams "$STREAMS" | tee "$WORK/streams-passthrough.json"
kill $GATEWAY $PROXY 2>/dev/null || true
wait $GATEWAY 2>/dev/null || true

echo "ledger after the run:"; tollgate ledger check | head -5
tollgate ledger check >/dev/null || { echo "ledger check failed after the benchmark" >&2; exit 1; }
echo "results: $WORK/results"
