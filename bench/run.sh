#!/usr/bin/env bash
# Benchmarks Tollgate with full accounting (a real key, a fresh Idempotency-Key per request, a
# hold and a capture on every request) against the shared reference harness's mock upstream,
# side by side with the direct baseline and a bare Node passthrough proxy. Results: RESULTS.md.
#
#   bench/run.sh                 # quick run (5 s phases)
#   bench/run.sh --rounds 3      # what RESULTS.md quotes (extra flags go to the harness)
#
# Needs ../shared/bench (the reference harness) and, for the max phase, Debian's wrk.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
HARNESS=${TOLLGATE_BENCH_HARNESS:-$REPO/../shared/bench}
WORK=$(mktemp -d /tmp/tollgate-bench.XXXXXX)
npm run build --silent

cat > "$WORK/config.json" <<JSON
{
  "upstreams": { "mock": { "kind": "openai", "base_url": "http://127.0.0.1:18000/v1", "connections": 256 } },
  "models": [
    { "id": "gpt-4o-mini", "upstream": "mock", "families": ["chat"], "combinations": [["streaming"]],
      "prices": { "input_per_million_tokens": 1000000, "output_per_million_tokens": 4000000 } },
    { "id": "text-embedding-3-small", "upstream": "mock", "families": ["embeddings"],
      "prices": { "input_per_million_tokens": 100000 } }
  ],
  "limits": { "body_bytes": 4194304, "requests_per_minute": 100000000, "concurrent_requests": 100000 }
}
JSON
export TOLLGATE_CONFIG=$WORK/config.json TOLLGATE_DATA_DIR=$WORK/data
STORE_NAME=SQLite
[ -n "${TOLLGATE_DATABASE_URL:-}" ] && STORE_NAME=PostgreSQL
echo "store: $STORE_NAME"
tollgate() { node packages/server/bin/tollgate.mjs "$@"; }
ACCOUNT=$(tollgate accounts create --email "bench-$(date +%s)@example.test" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).id))')
tollgate topup "$ACCOUNT" --amount 900000000000000 --reference bench >/dev/null
KEY=$(tollgate keys create "$ACCOUNT" --kind service --name bench | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).key))')

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
"$HARNESS/run.sh" --targets "anchors,$WORK/target.json" --only direct,node-passthrough,tollgate --out "$WORK/results" "${@:---quick}"

# Memory with 1,000 concurrent open streams: a slow mock (100 chunks, 100 ms apart), the gateway
# and the bare Node passthrough each pinned to CPU 0, the load client on CPU 1.
# Both proxies get 1,100 upstream connections, so no stream waits for a free one.
sed -e 's#127.0.0.1:18000#127.0.0.1:18001#' -e 's#"connections": 256#"connections": 1100#' "$WORK/config.json" > "$WORK/config-slow.json"
UPSTREAM_PORT=18001 STREAM_CHUNKS=100 STREAM_CHUNK_DELAY_MS=100 taskset -c 1 node "$HARNESS/mock-upstream.mjs" > "$WORK/mock-slow.log" 2>&1 &
MOCK=$!
trap 'kill $MOCK 2>/dev/null || true' EXIT
TOLLGATE_CONFIG=$WORK/config-slow.json PORT=18291 LOG_LEVEL=warn NODE_ENV=production taskset -c 0 node packages/server/dist/main.js > "$WORK/gateway-slow.log" 2>&1 &
GATEWAY=$!
PROXY_PORT=18292 PROXY_CONNECTIONS=1100 UPSTREAM_URL=http://127.0.0.1:18001 PROXY_MODE=passthrough taskset -c 0 node "$HARNESS/anchors/node-proxy.mjs" > "$WORK/proxy-slow.log" 2>&1 &
PROXY=$!
sleep 2
echo "streams memory, tollgate:"
taskset -c 1 node bench/streams-memory.mjs --url http://127.0.0.1:18291/v1 --key "$KEY" --pid "$GATEWAY" --streams 1000 | tee "$WORK/streams-tollgate.json"
echo "streams memory, node-passthrough:"
taskset -c 1 node bench/streams-memory.mjs --url http://127.0.0.1:18292/v1 --key "$KEY" --pid "$PROXY" --streams 1000 | tee "$WORK/streams-passthrough.json"
kill $GATEWAY $PROXY 2>/dev/null || true
wait $GATEWAY 2>/dev/null || true

echo "ledger after the run:"; tollgate ledger check | head -5
echo "results: $WORK/results"
