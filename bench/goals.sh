#!/usr/bin/env bash
# The hot path's goals (issue 19), measured side by side in one run of the reference harness:
# the bare Node passthrough against Tollgate on SQLite, with Tollgate on PostgreSQL reported
# beside (not judged: the scale-out work owns PostgreSQL's targets), and the harness's minimal
# JSON gateway (node-json) as the floor of any gateway that reads the JSON. Prints each goal's ratio,
# the ledger check of every store afterwards, and exits non-zero when a goal is missed, any answer
# was not a 2xx, or a ledger is not clean (bench/goals.mjs holds the goals).
#
#   bench/goals.sh                       # median of 3 rounds, --quick phases (~10 min)
#   bench/goals.sh --rounds 1            # extra flags go to the harness (the last one wins)
#   bench/goals.sh --compare before=packages/server/dist-before
#                                        # also measure an earlier build (a copy of
#                                        # packages/server/dist taken before a change) as targets
#                                        # tollgate-before (SQLite) and tollgate-before-postgres
#                                        # (unless --no-postgres, on a database of its own), same
#                                        # run; repeatable
#   bench/goals.sh --no-postgres         # SQLite only
#   bench/goals.sh --smoke               # a second per phase: checks it runs, judges no timing (CI)
#
# PostgreSQL: a fresh database (tollgate_goals_<pid>) on $TOLLGATE_GOALS_PG_URL's server
# (default postgres://postgres@127.0.0.1:5432), created for the run and dropped afterwards.
# Needs ../shared/bench (bench/harness.sh) and Debian's wrk for the max phase.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
SMOKE=0 POSTGRES=1
HARNESS_FLAGS=() COMPARE=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) SMOKE=1 ;;
    --no-postgres) POSTGRES=0 ;;
    --compare) COMPARE+=("$2"); shift ;;
    *) HARNESS_FLAGS+=("$1") ;;
  esac
  shift
done
HARNESS=$(bench/harness.sh)
WORK=$(mktemp -d /tmp/tollgate-goals.XXXXXX)
. bench/lib.sh
trap drop_pg_databases EXIT
build_unless_built
write_bench_config "$WORK/config.json"
export TOLLGATE_CONFIG=$WORK/config.json

# One target per store (and per build): its own data, account and key.
TARGETS=() NAMES=()
add_target() { # name port dist description data-dir database-url
  local name=$1 port=$2 dist=$3 description=$4 data=$5 database=$6 key
  key=$(TOLLGATE_DIST=$dist TOLLGATE_DATA_DIR=$data TOLLGATE_DATABASE_URL=$database create_funded_key)
  TARGETS+=("{ \"name\": \"$name\", \"kind\": \"gateway\", \"description\": \"$description\",
    \"port\": $port, \"baseUrl\": \"http://127.0.0.1:{{PORT}}/v1\",
    \"headers\": { \"authorization\": \"Bearer $key\", \"idempotency-key\": \"{{uuid}}\" },
    \"env\": { \"NODE_ENV\": \"production\", \"PORT\": \"{{PORT}}\", \"LOG_LEVEL\": \"warn\",
      \"TOLLGATE_CONFIG\": \"$WORK/config.json\", \"TOLLGATE_DATA_DIR\": \"$data\", \"TOLLGATE_DATABASE_URL\": \"$database\" },
    \"start\": \"node $dist/main.js\", \"cwd\": \"$REPO\" }")
  NAMES+=("$name")
  LEDGERS+=("$data|$database|$dist")
}
LEDGERS=()
add_target tollgate-sqlite 18295 "$REPO/packages/server/dist" "Tollgate, full accounting, SQLite" \
  "$WORK/sqlite" "sqlite:$WORK/sqlite/tollgate.sqlite"
# The compared builds, as "name|absolute dist", each measured on every store of the run.
COMPARED=()
for compared in ${COMPARE[@]+"${COMPARE[@]}"}; do
  COMPARED+=("${compared%%=*}|$(cd "${compared#*=}" && pwd)")
done
PORT_NEXT=18297
for compared in ${COMPARED[@]+"${COMPARED[@]}"}; do
  IFS='|' read -r name dist <<< "$compared"
  add_target "tollgate-$name" "$PORT_NEXT" "$dist" "Tollgate, build $dist, SQLite" \
    "$WORK/$name" "sqlite:$WORK/$name/tollgate.sqlite"
  PORT_NEXT=$((PORT_NEXT + 1))
done
if [ "$POSTGRES" = 1 ]; then
  new_pg_database tollgate_goals_$$_main
  add_target tollgate-postgres 18296 "$REPO/packages/server/dist" "Tollgate, full accounting, PostgreSQL" \
    "$WORK/postgres" "$NEW_PG_URL"
  for compared in ${COMPARED[@]+"${COMPARED[@]}"}; do
    IFS='|' read -r name dist <<< "$compared"
    new_pg_database "tollgate_goals_$$_$name"
    add_target "tollgate-$name-postgres" "$PORT_NEXT" "$dist" "Tollgate, build $dist, PostgreSQL" \
      "$WORK/$name-postgres" "$NEW_PG_URL"
    PORT_NEXT=$((PORT_NEXT + 1))
  done
fi
(IFS=,; echo "{ \"targets\": [ ${TARGETS[*]} ] }") > "$WORK/targets.json"

if [ "$SMOKE" = 1 ]; then
  set -- --rounds 1 --duration 1 --warmup 0 --target-warmup 1 --rates 100,200 --stream-rate 20 --connections 16
else
  set -- --quick --rounds 3 --rates 500,2000 ${HARNESS_FLAGS[@]+"${HARNESS_FLAGS[@]}"}
fi
# node-json: the harness's minimal JSON gateway, reported beside (bench/goals.mjs), not judged.
ONLY=direct,node-passthrough,node-json,$(IFS=,; echo "${NAMES[*]}")
"$HARNESS/run.sh" --targets "anchors,$WORK/targets.json" --only "$ONLY" --out "$WORK/results" "$@"

STATUS=0
node bench/check-harness-results.mjs "$WORK/results/results.json" || STATUS=1
echo "ledger after the run:"
for ledger in "${LEDGERS[@]}"; do
  IFS='|' read -r data database dist <<< "$ledger"
  if TOLLGATE_DIST=$dist TOLLGATE_DATA_DIR=$data TOLLGATE_DATABASE_URL=$database node bench/tollgate-of.mjs ledger check > "$WORK/ledger.json"; then
    echo "  ${database%%\?*}: clean $(node -e 'const l=require(process.argv[1]);console.log(JSON.stringify(l))' "$WORK/ledger.json")"
  else
    echo "  ${database%%\?*}: NOT clean"; cat "$WORK/ledger.json"; STATUS=1
  fi
done
JUDGE=()
[ "$SMOKE" = 1 ] && JUDGE=(--report-only)
node bench/goals.mjs "$WORK/results/results.json" ${JUDGE[@]+"${JUDGE[@]}"} || STATUS=1
echo "results: $WORK/results"
exit $STATUS
