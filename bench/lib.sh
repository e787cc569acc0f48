# Shell helpers shared by the benchmark scripts (sourced, not run): one benchmark configuration and
# one way to fund a key, so that every script measures the same accounted path.

# Each benchmark starts its gateways on a fresh database: they apply the schema themselves, on
# PostgreSQL too, where a deployment runs `tollgate migrate` first (docs/deploy.md, "Migrations").
export TOLLGATE_MIGRATE_ON_START=${TOLLGATE_MIGRATE_ON_START:-1}

# Builds the project, unless bench/smoke.sh already did for all the scripts it runs.
build_unless_built() {
  [ -n "${TOLLGATE_BENCH_BUILT:-}" ] || npm run build --silent
}

# Writes the benchmark configuration to $1: `gpt-4o-mini` (chat, streaming) and
# `text-embedding-3-small` routed to the reference harness's mock (127.0.0.1:18000), and every
# limit that could bind raised (per key, per account, upstream connections per account), so that
# a figure is the accounted path's and never the fairness rules'. Prints the limits.
write_bench_config() {
  cat > "$1" <<JSON
{
  "upstreams": { "mock": { "kind": "openai", "base_url": "http://127.0.0.1:18000/v1", "connections": 256,
                           "connections_per_account": 256 } },
  "models": [
    { "id": "gpt-4o-mini", "upstream": "mock", "families": ["chat"], "combinations": [["streaming"]],
      "prices": { "input_per_million_tokens": 1000000, "output_per_million_tokens": 4000000 } },
    { "id": "text-embedding-3-small", "upstream": "mock", "families": ["embeddings"],
      "prices": { "input_per_million_tokens": 100000 } }
  ],
  "limits": { "body_bytes": 4194304, "requests_per_minute": 100000000, "concurrent_requests": 100000,
              "concurrent_requests_per_account": 100000 },
  "server": { "max_connections_per_address": 4096 }
}
JSON
  echo "limits (none binds): $(node -e 'const c=require(process.argv[1]);console.log(JSON.stringify({limits:c.limits,server:c.server,upstream:c.upstreams.mock}))' "$1")"
}

# Creates an account in the store named by the environment (TOLLGATE_CONFIG, TOLLGATE_DATA_DIR,
# TOLLGATE_DATABASE_URL), tops it up with the largest single movement the money bounds allow
# (10^13 micro-yuan), and prints a new service key of it.
# With TOLLGATE_DIST set, that build's own CLI (bench/tollgate-of.mjs) sets up its store.
create_funded_key() {
  local account
  account=$(node bench/tollgate-of.mjs accounts create --email "bench-$(date +%s%N)@example.test" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).id))')
  node bench/tollgate-of.mjs topup "$account" --amount 10000000000000 --reference bench >/dev/null
  node bench/tollgate-of.mjs keys create "$account" --kind service --name bench |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).key))'
}

# PostgreSQL databases made for one run, on $TOLLGATE_GOALS_PG_URL's server (default
# postgres://postgres@127.0.0.1:5432): `new_pg_database NAME` creates NAME and sets NEW_PG_URL to it;
# `drop_pg_databases` (call it from the script's EXIT trap) drops every one of them.
PG_RUN_SERVER=${TOLLGATE_GOALS_PG_URL:-postgres://postgres@127.0.0.1:5432}
PG_RUN_DATABASES=()
new_pg_database() {
  psql -q "$PG_RUN_SERVER/postgres" -c "CREATE DATABASE $1" >/dev/null
  PG_RUN_DATABASES+=("$1")
  NEW_PG_URL=$PG_RUN_SERVER/$1
}
drop_pg_databases() {
  for database in ${PG_RUN_DATABASES[@]+"${PG_RUN_DATABASES[@]}"}; do
    psql -q "$PG_RUN_SERVER/postgres" -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true
  done
}

# Waits until URL answers 2xx (at most 10 s), or stops the script.
wait_ready() {
  for _ in $(seq 1 100); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "not ready: $1" >&2
  exit 1
}
