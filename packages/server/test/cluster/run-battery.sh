#!/usr/bin/env bash
# The crash-and-fault battery alone (docs/deploy.md, "The proof"):
#   npm run battery                 the short form npm test runs (20 kill -9s, every fault once)
#   npm run battery -- --long       the long form (100 kill -9s)
#   npm run battery -- --kills 300 --seed 7
# Needs TOLLGATE_TEST_PG_URL and TOLLGATE_TEST_REDIS_URL (as bash .ci/run sets them), nginx and
# redis-server; builds dist/ first (the battery runs the built gateway as real processes).
set -euo pipefail
cd "$(dirname "$0")/../../../.."
while [ $# -gt 0 ]; do
  case "$1" in
    --long) export TOLLGATE_BATTERY=long ;;
    --kills) export TOLLGATE_BATTERY_KILLS="$2"; shift ;;
    --seed) export TOLLGATE_BATTERY_SEED="$2"; shift ;;
    --keep) export TOLLGATE_BATTERY_KEEP=1 ;;
    *) echo "unknown option $1 (--long, --kills N, --seed N, --keep)" >&2; exit 2 ;;
  esac
  shift
done
npm run build --silent
exec npx vitest run packages/server/test/cluster/battery.test.ts
