#!/usr/bin/env bash
# Prints the directory of a ready-to-run copy of the reference harness (../shared/bench, or
# $TOLLGATE_BENCH_HARNESS). The harness installs its npm dependencies into its own folder on first
# use; a copy under the user's cache keeps ../shared untouched and is reused while the harness's
# lockfile is unchanged. Sourced by the bench scripts: HARNESS=$(bench/harness.sh).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SOURCE=${TOLLGATE_BENCH_HARNESS:-$REPO/../shared/bench}
[ -f "$SOURCE/run.mjs" ] || { echo "no reference harness at $SOURCE (set TOLLGATE_BENCH_HARNESS)" >&2; exit 1; }
STAMP=$(cat "$SOURCE/package-lock.json" "$SOURCE"/*.mjs | sha256sum | cut -c1-12)
COPY=${XDG_CACHE_HOME:-$HOME/.cache}/tollgate-bench/harness-$STAMP
if [ ! -d "$COPY/node_modules/undici" ]; then
  rm -rf "$COPY.tmp"
  mkdir -p "$COPY.tmp"
  (cd "$SOURCE" && tar --exclude=./node_modules --exclude=./results -cf - .) | tar -xf - -C "$COPY.tmp"
  chmod -R u+w "$COPY.tmp"
  (cd "$COPY.tmp" && npm ci --no-audit --no-fund --silent >&2)
  rm -rf "$COPY"
  mv "$COPY.tmp" "$COPY"
fi
echo "$COPY"
