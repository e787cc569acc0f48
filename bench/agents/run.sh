#!/usr/bin/env bash
# Codex CLI and Claude Code, each configured only as docs/agents.md says, complete one turn through
# a fresh gateway on its built-in simulator, and are charged exactly. From the outside:
#
#   1. installs the two agents at the pinned versions below into a cache (npm, once per version);
#   2. starts the built gateway (packages/server/dist/main.js) on a free port with a new data dir
#      (SQLite, default configuration: the simulator behind the sim-* models), and with the CLI
#      creates an account, tops it up and makes one key per agent with `--idempotency optional`;
#   3. takes the recipe blocks of docs/agents.md (`<!-- recipe: … -->`), replaces only the base
#      URL's port and the key, and runs each agent with `env -i` (PATH and a temp HOME only, plus
#      what the recipe sets), in an empty directory, within a time limit;
#   4. checks each agent's exit code and that its stdout holds the simulator's reply, then the
#      gateway's side: every record of the agent's key (GET /v1/requests) `succeeded` on the
#      agent's route with a captured bill, the account's balance fell by exactly their sum, nothing
#      is held, and `tollgate ledger check` is clean. Each agent talks to the gateway through a
#      recording pass-through (wire-log.mjs), so a failure prints the exact request and answer, and
#      every POST the agent sent must be one of the key's records.
#
# Usage: bash bench/agents/run.sh [--smoke]      (--smoke is what CI runs; the checks are the same)
# Environment: TOLLGATE_AGENTS_CACHE (default ~/.cache/tollgate-ci/agents),
#   TOLLGATE_AGENTS_TURN_TIMEOUT (seconds per agent, default 60),
#   TOLLGATE_AGENTS_CODEX_QUIET=0 to run Codex on the recipe alone (see "Codex's own traffic" below),
#   TOLLGATE_AGENTS_KEEP=1 to keep the work directory after a pass (it is always kept after a failure),
#   TOLLGATE_AGENTS_TRACE=1 to run each agent under strace (connect, send*) and fail on anything it
#   sends beyond loopback, a DNS query included (needs strace).
set -euo pipefail

CODEX_PACKAGE=@openai/codex
CODEX_VERSION=0.171.0
CLAUDE_PACKAGE=@anthropic-ai/claude-code
CLAUDE_VERSION=2.1.332

CACHE=${TOLLGATE_AGENTS_CACHE:-$HOME/.cache/tollgate-ci/agents}
TURN_TIMEOUT=${TOLLGATE_AGENTS_TURN_TIMEOUT:-60}
TOPUP=10000000 # 10 yuan, in micro-yuan
# The simulator's answers: to a prompt, or after a tool loop (an agent may run a tool the
# simulator chose to call, then answer: Claude Code does on the Messages channel).
REPLY='Simulated reply to:'
TOOL_REPLY='Based on the tool results:'

case "${1:-}" in
  '' | --smoke) ;;
  *) echo "usage: bash bench/agents/run.sh [--smoke]" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/../.."
ROOT=$PWD
HELPER="node $ROOT/bench/agents/agents.mjs"
DOC=$ROOT/docs/agents.md
STARTED=$(date +%s.%N)
since() { awk -v from="$1" -v to="$(date +%s.%N)" 'BEGIN { printf "%.1f", to - from }'; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tollgate-agents.XXXXXX")
DATA=$WORK/data
mkdir -p "$DATA"
GATEWAY_PID='' WIRE_PID='' CURRENT=''

cleanup() {
  local status=$?
  [ -n "$WIRE_PID" ] && kill "$WIRE_PID" 2>/dev/null || true
  if [ -n "$GATEWAY_PID" ]; then
    kill "$GATEWAY_PID" 2>/dev/null || true
    wait "$GATEWAY_PID" 2>/dev/null || true
  fi
  if [ "$status" = 0 ] && [ "${TOLLGATE_AGENTS_KEEP:-0}" != 1 ]; then rm -rf "$WORK"; else echo "work directory kept: $WORK"; fi
}
trap cleanup EXIT

# One failure: what went wrong, then what the agent said, what went over the wire (the failing
# exchanges in full) and what the gateway logged at warn or above, or answered 4xx/5xx.
die() {
  echo >&2
  echo "FAIL: $*" >&2
  if [ -n "$CURRENT" ]; then
    local dir=$WORK/$CURRENT
    if [ -s "$dir/stderr" ]; then
      echo "--- $CURRENT stderr (last 40 lines; whole: $dir/stderr)" >&2
      tail -n 40 "$dir/stderr" >&2
    fi
    if [ -s "$dir/stdout" ]; then
      echo "--- $CURRENT stdout (last 20 lines)" >&2
      tail -n 20 "$dir/stdout" >&2
    fi
    echo "--- $CURRENT on the wire" >&2
    $HELPER wire "$dir/wire.jsonl" --failures >&2 || true
  fi
  if [ -s "$DATA/tollgate.log" ]; then
    echo "--- gateway log, warnings and refusals (whole: $DATA/tollgate.log)" >&2
    node -e '
      for (const line of require("fs").readFileSync(process.argv[1], "utf8").split("\n")) {
        let entry; try { entry = JSON.parse(line); } catch { if (line.trim()) console.log(line); continue; }
        if (entry.level >= 40 || (entry.status ?? entry.res?.statusCode ?? 0) >= 400) console.log(line);
      }' "$DATA/tollgate.log" | tail -n 40 >&2 || true
  fi
  exit 1
}

json() { # json FIELD.PATH < JSON: one field (objects as JSON)
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let v=JSON.parse(s);for(const k of process.argv[1].split("."))v=v?.[k];console.log(typeof v==="object"?JSON.stringify(v):v)})' "$1"
}

# --- 1. the agents ----------------------------------------------------------------------------
# npm brings each agent's native binary as an optional dependency of its platform; Claude Code's
# postinstall links its binary over bin/claude.exe (a stub that only says so without it).
install_agent() { # install_agent PACKAGE VERSION BIN: adds its .bin directory to AGENT_BINS
  local dir=$CACHE/$1@$2 started
  if [ -f "$dir/.installed" ] && [ -x "$dir/node_modules/.bin/$3" ]; then
    echo "$1@$2: cached in $dir"
  else
    started=$(date +%s.%N)
    rm -rf "$dir"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund "$1@$2" >"$WORK/install-$3.log" 2>&1 ||
      { cat "$WORK/install-$3.log" >&2; die "npm install $1@$2 failed"; }
    touch "$dir/.installed"
    echo "$1@$2: installed in $(since "$started") s into $dir"
  fi
  AGENT_BINS=$AGENT_BINS$dir/node_modules/.bin:
}
AGENT_BINS=''
install_agent "$CODEX_PACKAGE" "$CODEX_VERSION" codex
install_agent "$CLAUDE_PACKAGE" "$CLAUDE_VERSION" claude
# The PATH each agent gets: the two agents and the node that runs this script (codex.js needs one).
AGENT_PATH=$AGENT_BINS$(dirname "$(command -v node)"):/usr/local/bin:/usr/bin:/bin
for agent in "codex:$CODEX_VERSION" "claude:$CLAUDE_VERSION"; do
  version=$(env -i PATH="$AGENT_PATH" HOME="$WORK" "${agent%%:*}" --version 2>&1) ||
    die "${agent%%:*} --version failed: $version (for Claude Code: did its postinstall run?)"
  [[ $version == *"${agent#*:}"* ]] || die "${agent%%:*} --version says '$version', not ${agent#*:}"
done

# --- 2. the gateway ---------------------------------------------------------------------------
[ -f packages/server/dist/main.js ] || npm run build --silent
PORT=$($HELPER free-port)
BASE=http://127.0.0.1:$PORT
# The gateway and its CLI see only this: no TOLLGATE_* of the machine (a configuration, a
# PostgreSQL or Redis URL, an admin token) reaches them.
# The embedded default plus sim-chat-responses and sim-chat-messages: sim-chat through upstreams
# speaking OpenAI's Responses and Anthropic's Messages protocols (agents.mjs gateway-config).
mkdir -p "$DATA"
$HELPER gateway-config "$DATA/config.json" || die "agents.mjs gateway-config"
GATEWAY_ENV=(env -i PATH="$PATH" HOME="$HOME" HOST=127.0.0.1 PORT="$PORT" TOLLGATE_DATA_DIR="$DATA" TOLLGATE_CONFIG="$DATA/config.json" LOG_FORMAT=json)
tollgate() { "${GATEWAY_ENV[@]}" node "$ROOT/packages/server/bin/tollgate.mjs" "$@"; }
started=$(date +%s.%N)
"${GATEWAY_ENV[@]}" node packages/server/dist/main.js >"$DATA/tollgate.log" 2>&1 &
GATEWAY_PID=$!
until curl -fsS "$BASE/healthz" >/dev/null 2>&1; do
  kill -0 "$GATEWAY_PID" 2>/dev/null || { wait "$GATEWAY_PID" || true; GATEWAY_PID=''; die "the gateway exited at start"; }
  [ "$(since "$started" | cut -d. -f1)" -lt 30 ] || die "no /healthz within 30 s"
  sleep 0.1
done
GATEWAY_SECONDS=$(since "$started")
echo "gateway: $BASE (data $DATA), healthy in $GATEWAY_SECONDS s"

started=$(date +%s.%N)
ACCOUNT=$(tollgate accounts create --email "agents-$(date +%s%N)@example.test" | json id) || die "tollgate accounts create failed"
tollgate topup "$ACCOUNT" --amount "$TOPUP" --reference agents-smoke >/dev/null || die "tollgate topup failed"
# docs/agents.md, "Keys for agents": `keys create <account id> --name codex --idempotency optional`.
CODEX_KEY=$(tollgate keys create "$ACCOUNT" --name codex --idempotency optional | json key) || die "tollgate keys create failed"
CLAUDE_KEY=$(tollgate keys create "$ACCOUNT" --name claude-code --idempotency optional | json key) || die "tollgate keys create failed"
CODEX_RESPONSES_KEY=$(tollgate keys create "$ACCOUNT" --name codex-responses --idempotency optional | json key) || die "tollgate keys create failed"
CLAUDE_MESSAGES_KEY=$(tollgate keys create "$ACCOUNT" --name claude-code-messages --idempotency optional | json key) || die "tollgate keys create failed"
CODEX_COMPACTION_KEY=$(tollgate keys create "$ACCOUNT" --name codex-compaction --idempotency optional | json key) || die "tollgate keys create failed"
echo "account $ACCOUNT topped up with $TOPUP micro-yuan, five optional keys, in $(since "$started") s"

balance() { # balance -> "BALANCE HELD"
  local account
  account=$(tollgate accounts show "$ACCOUNT")
  echo "$(json balance <<<"$account") $(json held <<<"$account")"
}
read -r BALANCE HELD < <(balance)
[ "$BALANCE" = "$TOPUP" ] && [ "$HELD" = 0 ] || die "after the top-up: balance $BALANCE, held $HELD"

# --- 3. the agents' turns ---------------------------------------------------------------------
# run_agent NAME ROUTE KEY COMMAND...: the command runs in $WORK/NAME/work with stdin closed,
# through a fresh recording pass-through whose port stands in the recipe for the gateway's.
SUMMARY=()
run_agent() {
  local name=$1 route=$2 key=$3 dir=$WORK/$1 status records count sum problems before
  shift 3
  CURRENT=$name
  export TRACE=''
  [ "${TOLLGATE_AGENTS_TRACE:-0}" != 1 ] || TRACE="strace -f -qq -s 128 -e trace=connect,sendto,sendmsg,sendmmsg -e signal=none -o $dir/strace.txt"
  "$@" >"$dir/stdout" 2>"$dir/stderr" </dev/null && status=0 || status=$?
  TURN_SECONDS=$(since "$TURN_STARTED")
  kill "$WIRE_PID" 2>/dev/null || true
  WIRE_PID=''
  [ "$status" != 124 ] && [ "$status" != 137 ] || die "$name did not finish within $TURN_TIMEOUT s (exit $status)"
  [ "$status" = 0 ] || die "$name exited with $status"
  grep -qF -e "$REPLY" -e "$TOOL_REPLY" "$dir/stdout" ||
    die "$name's stdout holds neither of the simulator's replies ('$REPLY', '$TOOL_REPLY')"
  if [ -n "$TRACE" ]; then
    # Every address beyond loopback the agent connected or sent to (a resolver included), and the
    # names it asked a resolver for.
    local outside names
    outside=$(grep -E 'inet_addr\(|inet_pton\(' "$dir/strace.txt" |
      grep -vE 'inet_addr\("127\.|inet_pton\(AF_INET6, "::1"|inet_pton\(AF_INET6, "::ffff:127\.' |
      grep -oE '(inet_addr|inet_pton)\([^)]*\)' | sort | uniq -c || true)
    names=$(grep -E '^[0-9]+ +send' "$dir/strace.txt" | grep -oE '(\\[0-9]+[A-Za-z0-9_-]+)+\\0\\0' |
      sed -E 's/\\0\\0$//; s/\\[0-9]+/./g; s/^\.//' | sort -u | tr '\n' ' ' || true)
    [ -z "$outside" ] || die "$name reached beyond loopback (strace: $dir/strace.txt):
$outside${names:+
  names looked up: $names}"
    echo "$name: nothing sent beyond loopback (strace of connect/sendto/sendmsg/sendmmsg)"
  fi

  records=$($HELPER records "$BASE" "$key" "$route" "$dir/wire.jsonl") || die "listing $name's records failed"
  echo "$records" >"$dir/records.json"
  problems=$(json problems <<<"$records")
  [ "$problems" = '[]' ] || die "$name's records: $(node -e 'console.log(JSON.parse(process.argv[1]).join("\n  "))' "$problems")"
  count=$(json count <<<"$records")
  sum=$(json sum <<<"$records")
  before=$BALANCE
  read -r BALANCE HELD < <(balance)
  [ "$HELD" = 0 ] || die "after $name: $HELD micro-yuan still held"
  [ $((before - BALANCE)) = "$sum" ] ||
    die "after $name: the balance fell by $((before - BALANCE)) micro-yuan, its records' bills add up to $sum"
  SUMMARY+=("$(printf '%-15s %d request(s) on %-13s charged %d micro-yuan, turn %s s' "$name" "$count" "$route" "$sum" "$TURN_SECONDS")")
  SUMMARY+=("$(node -e 'for (const r of JSON.parse(process.argv[1]).records) console.log(`        ${r.id}: ${r.pricing_rule}`)' "$records")")
  echo "$name: passed (${count} record(s), ${sum} micro-yuan, turn ${TURN_SECONDS} s)"
  CURRENT=''
}

start_wire() { # start_wire NAME -> WIRE_PORT
  local dir=$WORK/$1
  mkdir -p "$dir/work" "$dir/home"
  node "$ROOT/bench/agents/wire-log.mjs" "$PORT" "$dir/wire.jsonl" "$dir/wire.port" &
  WIRE_PID=$!
  until [ -s "$dir/wire.port" ]; do kill -0 "$WIRE_PID" 2>/dev/null || die "wire-log.mjs did not start"; sleep 0.05; done
  WIRE_PORT=$(cat "$dir/wire.port")
}

# codex_turn NAME KEY MODEL: Codex CLI with the codex-config block as $CODEX_HOME/config.toml
# (the model id replaced by MODEL) and the codex-run block as the command.
codex_turn() {
  local name=$1 key=$2 model=$3 run
  start_wire "$name"
  CURRENT=$name
  mkdir -p "$WORK/$name/home/.codex"
  $HELPER recipe "$DOC" codex-config --port "$WIRE_PORT" --model "$model" >"$WORK/$name/home/.codex/config.toml" || die "recipe codex-config"
  run=$($HELPER recipe "$DOC" codex-run --key "$key") || die "recipe codex-run"
  # Codex's own traffic (plugin sync, analytics, update check) is turned off by the recipe's
  # block; with TOLLGATE_AGENTS_CODEX_QUIET=1 (default) any setting it lacks is added and said.
  if [ "${TOLLGATE_AGENTS_CODEX_QUIET:-1}" = 1 ]; then
    added=$($HELPER codex-quiet "$WORK/$name/home/.codex/config.toml")
    [ -z "$added" ] || echo "$name: added to the codex-config recipe: $added"
  fi
  TURN_STARTED=$(date +%s.%N)
  run_agent "$name" /v1/responses "$key" \
    bash -c 'cd "$1" && exec timeout --kill-after=5 "$2" $TRACE env -i PATH="$3" HOME="$4" CODEX_HOME="$4/.codex" bash -c "$5"' _ \
    "$WORK/$name/work" "$TURN_TIMEOUT" "$AGENT_PATH" "$WORK/$name/home" "$run"
}

# codex_compaction NAME KEY MODEL: Codex CLI on its built-in OpenAI provider (the
# codex-openai-config and codex-openai-run blocks), its automatic compaction limit set below what
# one turn uses, two turns: `exec`, then `exec resume --last`, which compacts first (in the
# stream: docs/agents.md, "Compaction") and goes on from the compaction item.
codex_compaction() {
  local name=$1 key=$2 model=$3 run resume problems
  start_wire "$name"
  CURRENT=$name
  mkdir -p "$WORK/$name/home/.codex"
  {
    echo 'model_auto_compact_token_limit = 1000'
    $HELPER recipe "$DOC" codex-openai-config --port "$WIRE_PORT" --model "$model" || die "recipe codex-openai-config"
  } >"$WORK/$name/home/.codex/config.toml"
  if [ "${TOLLGATE_AGENTS_CODEX_QUIET:-1}" = 1 ]; then
    added=$($HELPER codex-quiet "$WORK/$name/home/.codex/config.toml")
    [ -z "$added" ] || echo "$name: added to the codex-openai-config recipe: $added"
  fi
  run=$($HELPER recipe "$DOC" codex-openai-run --key "$key") || die "recipe codex-openai-run"
  resume=${run/exec --skip-git-repo-check/exec --skip-git-repo-check resume --last}
  [ "$resume" != "$run" ] || die "recipe codex-openai-run: no 'exec --skip-git-repo-check' to resume"
  TURN_STARTED=$(date +%s.%N)
  run_agent "$name" /v1/responses "$key" \
    bash -c 'cd "$1" && exec timeout --kill-after=5 "$2" $TRACE env -i PATH="$3" HOME="$4" CODEX_HOME="$4/.codex" bash -c "$5 && $6"' _ \
    "$WORK/$name/work" "$TURN_TIMEOUT" "$AGENT_PATH" "$WORK/$name/home" "$run" "$resume"
  problems=$($HELPER compaction "$WORK/$name/wire.jsonl") || die "agents.mjs compaction"
  CURRENT=$name
  [ -z "$problems" ] || die "$name: $problems"
  CURRENT=''
  echo "$name: compacted in the stream, then went on from the compaction item"
}

# claude_turn NAME KEY MODEL: Claude Code with the claude-env block sourced (its model ids replaced
# by MODEL), then the claude-run block.
claude_turn() {
  local name=$1 key=$2 model=$3 run
  start_wire "$name"
  CURRENT=$name
  $HELPER recipe "$DOC" claude-env --port "$WIRE_PORT" --key "$key" --model "$model" >"$WORK/$name/env.sh" || die "recipe claude-env"
  run=$($HELPER recipe "$DOC" claude-run) || die "recipe claude-run"
  TURN_STARTED=$(date +%s.%N)
  run_agent "$name" /v1/messages "$key" \
    bash -c 'cd "$1" && exec timeout --kill-after=5 "$2" $TRACE env -i PATH="$3" HOME="$4" bash -c ". \"\$0\"; $5" "$6"' _ \
    "$WORK/$name/work" "$TURN_TIMEOUT" "$AGENT_PATH" "$WORK/$name/home" "$run" "$WORK/$name/env.sh"
}

# Each agent on sim-chat (a chat-completions channel), then on a channel speaking its own
# protocol: Codex on a Responses upstream, Claude Code on a Messages upstream.
codex_turn codex "$CODEX_KEY" sim-chat
claude_turn claude "$CLAUDE_KEY" sim-chat
codex_turn codex-responses "$CODEX_RESPONSES_KEY" sim-chat-responses
claude_turn claude-messages "$CLAUDE_MESSAGES_KEY" sim-chat-messages
# Codex compacting a long session, on its built-in provider (docs/agents.md, "Compaction").
codex_compaction codex-compaction "$CODEX_COMPACTION_KEY" sim-chat

# --- 4. the ledger ----------------------------------------------------------------------------
ledger=$(tollgate ledger check) || die "tollgate ledger check: $ledger"
[ "$(json ok <<<"$ledger")" = true ] || die "tollgate ledger check: $ledger"

echo
echo "bench/agents: Codex CLI $CODEX_VERSION and Claude Code $CLAUDE_VERSION through the gateway"
printf '  %s\n' "${SUMMARY[@]}"
echo "  balance $TOPUP -> $BALANCE micro-yuan (spent $((TOPUP - BALANCE))), held $HELD, ledger check clean"
echo "  gateway healthy in $GATEWAY_SECONDS s; total $(since "$STARTED") s"
