#!/usr/bin/env bash
# The latency of one accounted chat that finds every process idle (bench/idle-latency.mjs), on
# SQLite and on PostgreSQL, beside the reference harness's bare Node passthrough: what the accounted
# path's own round trips cost, without the queueing of a load. Gateways and passthrough on CPU 0,
# mock upstream and client on CPU 1.
#   bench/idle-latency.sh                               # 400 requests per target per round, 2 rounds
#   bench/idle-latency.sh --compare before=packages/server/dist-before
#                                                       # also an earlier build, same run (repeatable)
#   bench/idle-latency.sh --no-postgres                 # SQLite only
#   bench/idle-latency.sh --smoke                       # 20 requests, 1 round (CI): that it runs
#   bench/idle-latency.sh --requests 1000 --rounds 3    # other flags go to bench/idle-latency.mjs
# PostgreSQL: a fresh database per build on $TOLLGATE_GOALS_PG_URL's server (default
# postgres://postgres@127.0.0.1:5432), dropped afterwards. Fails on any non-200 answer or a ledger
# that is not clean afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
POSTGRES=1 COMPARE=() PROBE_FLAGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) PROBE_FLAGS+=(--requests 20 --rounds 1) ;;
    --no-postgres) POSTGRES=0 ;;
    --compare) COMPARE+=("$2"); shift ;;
    *) PROBE_FLAGS+=("$1") ;;
  esac
  shift
done
HARNESS=$(bench/harness.sh)
WORK=$(mktemp -d /tmp/tollgate-idle.XXXXXX)
PIDS=()
. bench/lib.sh
cleanup() {
  kill ${PIDS[@]+"${PIDS[@]}"} 2>/dev/null || true
  drop_pg_databases
  rm -rf "$WORK"
}
trap cleanup EXIT
build_unless_built
write_bench_config "$WORK/config.json"
export TOLLGATE_CONFIG=$WORK/config.json

UPSTREAM_PORT=18000 taskset -c 1 node "$HARNESS/mock-upstream.mjs" > "$WORK/mock.log" 2>&1 &
PIDS+=($!)
PROXY_PORT=18100 UPSTREAM_URL=http://127.0.0.1:18000 taskset -c 0 node "$HARNESS/anchors/node-proxy.mjs" > "$WORK/proxy.log" 2>&1 &
PIDS+=($!)
wait_ready http://127.0.0.1:18000/v1/models
TARGETS=("node-passthrough=http://127.0.0.1:18100|none") LEDGERS=()
PORT_NEXT=18395
add_target() { # name dist data-dir database-url
  local name=$1 dist=$2 data=$3 database=$4 key port=$PORT_NEXT
  PORT_NEXT=$((PORT_NEXT + 1))
  key=$(TOLLGATE_DIST=$dist TOLLGATE_DATA_DIR=$data TOLLGATE_DATABASE_URL=$database create_funded_key)
  NODE_ENV=production PORT=$port LOG_LEVEL=warn TOLLGATE_DATA_DIR=$data TOLLGATE_DATABASE_URL=$database \
    taskset -c 0 node "$dist/main.js" > "$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  wait_ready "http://127.0.0.1:$port/readyz"
  TARGETS+=("$name=http://127.0.0.1:$port|$key")
  LEDGERS+=("$data|$database|$dist")
}
BUILDS=("tollgate|$REPO/packages/server/dist")
for compared in ${COMPARE[@]+"${COMPARE[@]}"}; do
  BUILDS+=("tollgate-${compared%%=*}|$(cd "${compared#*=}" && pwd)")
done
for build in "${BUILDS[@]}"; do
  IFS='|' read -r name dist <<< "$build"
  add_target "$name-sqlite" "$dist" "$WORK/$name-sqlite" "sqlite:$WORK/$name-sqlite/tollgate.sqlite"
  if [ "$POSTGRES" = 1 ]; then
    new_pg_database "tollgate_idle_$$_${#PG_RUN_DATABASES[@]}"
    add_target "$name-postgres" "$dist" "$WORK/$name-postgres" "$NEW_PG_URL"
  fi
done
# The passthrough needs no key: the mock accepts any.
taskset -c 1 node bench/idle-latency.mjs --targets "$(IFS=,; echo "${TARGETS[*]}")" ${PROBE_FLAGS[@]+"${PROBE_FLAGS[@]}"}
STATUS=0
echo "ledger after the run:"
for ledger in "${LEDGERS[@]}"; do
  IFS='|' read -r data database dist <<< "$ledger"
  if TOLLGATE_DIST=$dist TOLLGATE_DATA_DIR=$data TOLLGATE_DATABASE_URL=$database node bench/tollgate-of.mjs ledger check > "$WORK/ledger.json"; then
    echo "  ${database%%\?*}: clean"
  else
    echo "  ${database%%\?*}: NOT clean"; cat "$WORK/ledger.json"; STATUS=1
  fi
done
exit $STATUS
