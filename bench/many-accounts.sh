#!/usr/bin/env bash
# Accounted chat throughput with the load spread over 1 and over 64 accounts (bench/many-accounts.mjs),
# against the reference harness's mock upstream; gateway on CPU 0, client and mock on CPU 1.
#   bench/many-accounts.sh                      # SQLite (the embedded default)
#   TOLLGATE_DATABASE_URL=postgres://... bench/many-accounts.sh
#   bench/many-accounts.sh --smoke              # a second per phase, 1 and 4 accounts (CI)
#   TOLLGATE_BENCH_BATCH_MONEY=false ...         # PostgreSQL without batched admission (to compare)
#   BENCH_PORT=18394 UPSTREAM_PORT=18100 ...     # other ports (defaults 18294, 18000)
#   TOLLGATE_DIST=packages/server/dist-before ... # another build (copied before a change); no build
#   BENCH_INSTANCES=3 TOLLGATE_DATABASE_URL=postgres://... bench/many-accounts.sh
#                                                # three instances of one database, all on CPU 0 (the
#                                                # one core a single instance has): the client sends
#                                                # each connection's requests round the instances
#   BENCH_WARMUP_SECONDS=N ...                   # the unmeasured load before the first phase (default
#                                                # 8 per instance, none with --smoke): a cold gateway
#                                                # runs at half speed until its code is optimised, and
#                                                # instances sharing one core take that many times
#                                                # longer to get there (bench/RESULTS.md, "Warm")
#   BENCH_COUNT_PG=1 ...                         # also count the gateway's statements per request
#                                                # (bench/count-pg-statements.mjs; costs some CPU)
# Each run measures 1 account, 64 accounts, then 1 account with a budget on its key.
# On PostgreSQL each phase also reports commits and WAL syncs per request (pg_stat_database,
# pg_stat_wal: the WAL figures are the whole server's). bench/pg-throughput.sh alternates builds.
# Any failed answer or a dirty ledger fails the run; the limits are raised so that none binds.
set -euo pipefail
cd "$(dirname "$0")/.."
ACCOUNT_COUNTS="1 64" SMOKE=0
if [ "${1:-}" = "--smoke" ]; then shift; set -- --seconds 1 --connections 16 "$@"; ACCOUNT_COUNTS="1 4" SMOKE=1; fi
HARNESS=$(bench/harness.sh)
WORK=$(mktemp -d /tmp/tollgate-many-accounts.XXXXXX)
GATEWAYS=() MOCK=""
trap 'kill ${GATEWAYS[@]+"${GATEWAYS[@]}"} $MOCK 2>/dev/null || true; rm -rf "$WORK"' EXIT
DIST=${TOLLGATE_DIST:-packages/server/dist}
. bench/lib.sh
[ -n "${TOLLGATE_DIST:-}" ] || build_unless_built
BENCH_PORT=${BENCH_PORT:-18294}
export UPSTREAM_PORT=${UPSTREAM_PORT:-18000}
cat > "$WORK/config.json" <<JSON
{ "postgres": { "batch_money": ${TOLLGATE_BENCH_BATCH_MONEY:-true} },
  "upstreams": { "mock": { "kind": "openai", "base_url": "http://127.0.0.1:$UPSTREAM_PORT/v1", "connections": 256,
                        "connections_per_account": 256 } },
  "models": [ { "id": "gpt-4o-mini", "upstream": "mock", "families": ["chat"],
    "prices": { "input_per_million_tokens": 1000000, "output_per_million_tokens": 4000000 } } ],
  "limits": { "requests_per_minute": 100000000, "concurrent_requests": 100000,
              "concurrent_requests_per_account": 100000 } }
JSON
export TOLLGATE_CONFIG=$WORK/config.json TOLLGATE_DATA_DIR=$WORK/data TOLLGATE_ADMIN_TOKEN=bench-admin-$RANDOM$RANDOM
taskset -c 1 node "$HARNESS/mock-upstream.mjs" > "$WORK/mock.log" 2>&1 &
MOCK=$!
COUNTING=()
if [ -n "${BENCH_COUNT_PG:-}" ]; then
  COUNTING=(--import "$PWD/bench/count-pg-statements.mjs"); export BENCH_PG_COUNTS=$WORK/pg-counts.json
fi
INSTANCES=${BENCH_INSTANCES:-1}
if [ "$INSTANCES" -gt 1 ] && [[ "${TOLLGATE_DATABASE_URL:-}" != postgres* ]]; then
  echo "BENCH_INSTANCES needs TOLLGATE_DATABASE_URL=postgres://... (instances share one database)" >&2; exit 2
fi
if [ "$INSTANCES" -gt 1 ] && [ -n "${BENCH_COUNT_PG:-}" ]; then
  echo "BENCH_COUNT_PG counts one instance's statements: run it with BENCH_INSTANCES=1" >&2; exit 2
fi
URLS=()
for instance in $(seq 0 $((INSTANCES - 1))); do
  port=$((BENCH_PORT + instance))
  # One at a time: the first migrates the new database, the others find it migrated.
  PORT=$port LOG_LEVEL=warn NODE_ENV=production taskset -c 0 node "${COUNTING[@]}" "$DIST/main.js" > "$WORK/gateway-$instance.log" 2>&1 &
  GATEWAYS+=($!) URLS+=("http://127.0.0.1:$port")
  for _ in $(seq 1 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.2; done
done
load() { # accounts, then many-accounts.mjs's flags
  local accounts=$1; shift
  taskset -c 1 node bench/many-accounts.mjs --url "$(IFS=,; echo "${URLS[*]}")" --admin-token "$TOLLGATE_ADMIN_TOKEN" \
    --accounts "$accounts" --connections 64 --pid "$(IFS=,; echo "${GATEWAYS[*]}")" \
    --pg-url "${TOLLGATE_DATABASE_URL:-}" --counts "${BENCH_PG_COUNTS:-}" "$@"
}
# Every target is measured warm, whatever its number of instances: the same load, unmeasured,
# for long enough that each instance's code is optimised.
WARMUP_SECONDS=${BENCH_WARMUP_SECONDS:-$([ "$SMOKE" = 1 ] && echo 0 || echo $((8 * INSTANCES)))}
if [ "$WARMUP_SECONDS" -gt 0 ]; then
  echo "warm-up: ${WARMUP_SECONDS}s of the first phase's load, not measured"
  load "${ACCOUNT_COUNTS%% *}" "$@" --seconds "$WARMUP_SECONDS" >/dev/null
fi
for accounts in $ACCOUNT_COUNTS; do load "$accounts" "$@"; done
# The key budgets' path (a budget on the key that never binds): its own phase, so that the
# statements for budgeted keys cannot slow down unseen (bench/RESULTS.md, "Key budgets in one statement").
echo "key budget: 1 account, a daily budget on its key that never binds"
load 1 "$@" --key-budget 1000000000000
export TOLLGATE_DIST=$DIST
echo "ledger:"; node bench/tollgate-of.mjs ledger check | head -3
node bench/tollgate-of.mjs ledger check >/dev/null || { echo "ledger check failed after the benchmark" >&2; exit 1; }
