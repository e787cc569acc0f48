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
#   BENCH_PG_SERVER=postgres://postgres@127.0.0.1:5432 ...   # the server (default as shown)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=3 BEFORE=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --before) BEFORE+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- --seconds 8
[ ${#BEFORE[@]} -gt 0 ] || BEFORE=(packages/server/dist-before)
PG_SERVER=${BENCH_PG_SERVER:-postgres://postgres@127.0.0.1:5432}
DATABASE=tollgate_pg_throughput_$$
drop() { psql -q "$PG_SERVER/postgres" -c "DROP DATABASE IF EXISTS $DATABASE" >/dev/null 2>&1 || true; }
trap drop EXIT
npm run build --silent
for dist in "${BEFORE[@]}"; do
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
  run sqlite packages/server/dist "" "$@"
  for dist in "${BEFORE[@]}"; do run "postgres $(basename "$dist")" "$dist" "$PG_SERVER/$DATABASE" "$@"; done
  run "postgres dist (this build)" packages/server/dist "$PG_SERVER/$DATABASE" "$@"
done
