#!/usr/bin/env bash
# PostgreSQL accounted throughput against SQLite's, before and after a change, in one run
# (issue 21 item 5): bench/many-accounts.sh (1 and 64 accounts) alternating SQLite, PostgreSQL
# with an earlier build and PostgreSQL with this build, for several rounds; each PostgreSQL run
# on a database of its own, created for it and dropped afterwards. Prints the load average
# before every run (the machine may be shared: compare within a round only).
#   cp -r packages/server/dist packages/server/dist-before   # before the change
#   bench/pg-throughput.sh                                    # 3 rounds, --seconds 8
#   bench/pg-throughput.sh --rounds 5 --before packages/server/dist-before -- --seconds 8
#   --before DIR may be given several times: each build runs on PostgreSQL in every round.
#   bench/pg-throughput.sh --instances 3 -- --seconds 8        # also this build as 3 instances
#                                    # of one database in every round (many-accounts.sh's
#                                    # BENCH_INSTANCES: all on the one core a single instance has),
#                                    # and bench/core-share.sh: what 3 bare passthroughs on one
#                                    # core keep of one, the machine's own ceiling for that ratio
#   --no-before                      # only SQLite and this build (with --instances: and N of it)
#   bench/pg-throughput.sh --smoke   # CI: one round, this build on one and on 3 instances, a
#                                    # second per phase (fails on any non-2xx or a dirty ledger;
#                                    # SQLite's run is many-accounts.sh's own smoke)
#   BENCH_PG_SERVER=postgres://postgres@127.0.0.1:5432 ...   # the server (default as shown)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=3 BEFORE=() INSTANCES=1 NO_BEFORE=0 SQLITE=1 CORE_SHARE_FLAGS="--seconds 6"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --before) BEFORE+=("$2"); shift 2 ;;
    --instances) INSTANCES=$2; shift 2 ;;
    --no-before) NO_BEFORE=1; shift ;;
    --smoke) ROUNDS=1 NO_BEFORE=1 INSTANCES=3 SQLITE=0 CORE_SHARE_FLAGS=--smoke; shift; set -- -- --smoke "$@" ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- --seconds 8
[ ${#BEFORE[@]} -gt 0 ] || [ "$NO_BEFORE" = 1 ] || BEFORE=(packages/server/dist-before)
PG_SERVER=${BENCH_PG_SERVER:-postgres://postgres@127.0.0.1:5432}
DATABASE=tollgate_pg_throughput_$$
drop() { psql -q "$PG_SERVER/postgres" -c "DROP DATABASE IF EXISTS $DATABASE" >/dev/null 2>&1 || true; }
trap drop EXIT
. bench/lib.sh
build_unless_built
for dist in ${BEFORE[@]+"${BEFORE[@]}"}; do
  [ -d "$dist" ] || { echo "no build at $dist (copy packages/server/dist there before the change)" >&2; exit 1; }
done
run() { # label, dist, database url or empty for SQLite, then many-accounts.sh's flags
  local label=$1 dist=$2 url=$3; shift 3
  echo "== round $round: $label (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  if [ -n "$url" ]; then
    drop; psql -q "$PG_SERVER/postgres" -c "CREATE DATABASE $DATABASE" >/dev/null
    TOLLGATE_DIST=$dist TOLLGATE_DATABASE_URL=$url bench/many-accounts.sh "$@"
    drop
  else
    TOLLGATE_DIST=$dist bench/many-accounts.sh "$@"
  fi
}
for round in $(seq 1 "$ROUNDS"); do
  if [ "$SQLITE" = 1 ]; then run sqlite packages/server/dist "" "$@"; fi
  for dist in ${BEFORE[@]+"${BEFORE[@]}"}; do run "postgres $(basename "$dist")" "$dist" "$PG_SERVER/$DATABASE" "$@"; done
  run "postgres dist (this build)" packages/server/dist "$PG_SERVER/$DATABASE" "$@"
  if [ "$INSTANCES" -gt 1 ]; then
    BENCH_INSTANCES=$INSTANCES run "postgres dist (this build) x $INSTANCES instances" packages/server/dist "$PG_SERVER/$DATABASE" "$@"
    # What the machine itself keeps of a core split that many ways: read the ratio above against it.
    echo "== round $round: $INSTANCES bare passthroughs on one core against one (bench/core-share.sh)"
    bench/core-share.sh --instances "$INSTANCES" --rounds 1 $CORE_SHARE_FLAGS
  fi
done
