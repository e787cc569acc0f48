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
[ -n "${TOLLGATE_DATABASE_URL:-}" ] && echo "store: $TOLLGATE_DATABASE_URL" || echo "store: SQLite in $WORK/data"
tollgate() { node packages/server/bin/tollgate.mjs "$@"; }
ACCOUNT=$(tollgate accounts create --email "bench-$(date +%s)@example.test" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).id))')
tollgate topup "$ACCOUNT" --amount 900000000000000 --reference bench >/dev/null
KEY=$(tollgate keys create "$ACCOUNT" --kind service --name bench | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).key))')

cat > "$WORK/target.json" <<JSON
{ "targets": [ {
  "name": "tollgate", "kind": "gateway",
  "description": "Tollgate, full accounting (auth, record, hold, capture), ${TOLLGATE_DATABASE_URL:+PostgreSQL}${TOLLGATE_DATABASE_URL:-SQLite}",
  "port": 18290, "baseUrl": "http://127.0.0.1:{{PORT}}/v1",
  "headers": { "authorization": "Bearer $KEY", "idempotency-key": "{{uuid}}" },
  "env": { "NODE_ENV": "production", "PORT": "{{PORT}}", "LOG_LEVEL": "warn",
           "TOLLGATE_CONFIG": "$WORK/config.json", "TOLLGATE_DATA_DIR": "$WORK/data"${TOLLGATE_DATABASE_URL:+, \"TOLLGATE_DATABASE_URL\": \"$TOLLGATE_DATABASE_URL\"} },
  "start": "node $REPO/packages/server/dist/main.js", "cwd": "$REPO"
} ] }
JSON
"$HARNESS/run.sh" --targets "anchors,$WORK/target.json" --only direct,node-passthrough,tollgate --out "$WORK/results" "${@:---quick}"
echo "ledger after the run:"; tollgate ledger check | head -5
echo "results: $WORK/results"
