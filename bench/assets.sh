#!/usr/bin/env bash
# Asset upload/download throughput and peak memory for a 1 GiB file, and 100 concurrent Range
# reads of it (bench/assets.mjs), against Tollgate on the embedded default (SQLite, local files).
#   bench/assets.sh [--size 1024] [--readers 100]
#   bench/assets.sh --smoke              # an 8 MiB file and 4 readers (CI)
# Any failed upload or read fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--smoke" ]; then shift; set -- --size 8 --readers 4 "$@"; fi
REPO=$(pwd)
WORK=$(mktemp -d /tmp/tollgate-assets-bench.XXXXXX)
GATEWAY=""
trap 'kill $GATEWAY 2>/dev/null || true; rm -rf "$WORK"' EXIT
. bench/lib.sh
build_unless_built
export TOLLGATE_DATA_DIR=$WORK/data TOLLGATE_CONFIG=$WORK/config.json
# Per-key limits high enough for 100 concurrent readers of one key.
cat > "$WORK/config.json" <<JSON
{ "upstreams": { "simulator": { "kind": "simulator" } },
  "models": [ { "id": "sim-embed", "upstream": "simulator", "families": ["embeddings"], "prices": { "input_per_million_tokens": 500000 } } ],
  "limits": { "requests_per_minute": 1000000, "concurrent_requests": 1000 } }
JSON
tollgate() { node packages/server/bin/tollgate.mjs "$@"; }
ACCOUNT=$(tollgate accounts create --email "assets-bench-$(date +%s)@example.test" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).id))')
KEY=$(tollgate keys create "$ACCOUNT" --kind personal | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).key))')
PORT=18293 LOG_LEVEL=warn NODE_ENV=production taskset -c 0 node packages/server/dist/main.js > "$WORK/gateway.log" 2>&1 &
GATEWAY=$!
for _ in $(seq 1 100); do curl -sf -o /dev/null http://127.0.0.1:18293/healthz && break; sleep 0.2; done
taskset -c 1 node bench/assets.mjs --url http://127.0.0.1:18293/v1 --key "$KEY" --pid "$GATEWAY" "$@"
