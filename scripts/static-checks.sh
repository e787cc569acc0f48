#!/usr/bin/env bash
# npm test's static checks (package.json "test"): ESLint, the type check and Prettier. They are
# single-threaded and only read the tree, so they run in two lanes of about equal length — ESLint
# beside the type check then Prettier — and each lane's output is printed whole when both are
# done. Exits non-zero when any of them failed. `npm run lint` and `npm run typecheck` run the
# same commands one after another (docs/ci.md).
set -uo pipefail
cd "$(dirname "$0")/.."
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT
npx eslint --cache --cache-location node_modules/.cache/eslint/ . > "$LOGS/eslint.log" 2>&1 &
ESLINT=$!
(npm run typecheck --silent && npx prettier --check --cache .) > "$LOGS/types-format.log" 2>&1 &
TYPES=$!
ESLINT_RC=0 TYPES_RC=0
wait "$ESLINT" || ESLINT_RC=$?
wait "$TYPES" || TYPES_RC=$?
echo "--- ESLint (exit $ESLINT_RC)"
cat "$LOGS/eslint.log"
echo "--- type check, then Prettier (exit $TYPES_RC)"
cat "$LOGS/types-format.log"
if [ "$ESLINT_RC" != 0 ] || [ "$TYPES_RC" != 0 ]; then
  echo "static checks failed: ESLint exit $ESLINT_RC, type check and Prettier exit $TYPES_RC" >&2
  exit 1
fi
