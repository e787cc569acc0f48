#!/usr/bin/env bash
# Runs `tollgate ledger check` and writes its result, and the money held by open holds, for
# node_exporter's textfile collector (--collector.textfile.directory). Run it from cron on ONE
# host every 5 minutes, with the gateway's environment (TOLLGATE_DATABASE_URL):
#   */5 * * * * tollgate /opt/tollgate/examples/prometheus/ledger-check.sh /var/lib/node_exporter
# The check reads one REPEATABLE READ snapshot, so a busy cluster gives no false alarms.
set -uo pipefail
OUT_DIR=${1:?usage: ledger-check.sh TEXTFILE_DIRECTORY}
TOLLGATE=${TOLLGATE:-npx tollgate}
report=$($TOLLGATE ledger check 2>&1)
violations=$(printf '%s' "$report" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).violations.length)}catch{console.log(1)}})')
held=$(psql "${TOLLGATE_DATABASE_URL}" -qAtc 'select coalesce(sum(held), 0) from accounts')
oldest=$(psql "${TOLLGATE_DATABASE_URL}" -qAtc "select coalesce(extract(epoch from now()) - min(created_at) / 1000, 0)::bigint from holds where state = 'open'")
tmp=$(mktemp "$OUT_DIR/tollgate.prom.XXXXXX")
cat >"$tmp" <<METRICS
# HELP tollgate_ledger_check_violations Violations found by the last tollgate ledger check.
# TYPE tollgate_ledger_check_violations gauge
tollgate_ledger_check_violations $violations
# HELP tollgate_ledger_check_last_run_seconds When the ledger check last ran (Unix seconds).
# TYPE tollgate_ledger_check_last_run_seconds gauge
tollgate_ledger_check_last_run_seconds $(date +%s)
# HELP tollgate_held_micro_yuan Micro-yuan held by open holds, all accounts.
# TYPE tollgate_held_micro_yuan gauge
tollgate_held_micro_yuan ${held:-0}
# HELP tollgate_oldest_open_hold_age_seconds Age of the oldest open hold.
# TYPE tollgate_oldest_open_hold_age_seconds gauge
tollgate_oldest_open_hold_age_seconds ${oldest:-0}
METRICS
chmod 644 "$tmp"
mv "$tmp" "$OUT_DIR/tollgate.prom"
