#!/usr/bin/env node
// The ledger floor on PostgreSQL (issue 39 item 2; docs/decisions/0019-hot-path-event-log.md): the
// same minimal gateway as bench/ledger-floor.mjs (whose HTTP side, self-test burst and pricing it
// shares), with its two promises — the claim committed before the upstream call, the finish
// before the answer, each exactly once — kept in PostgreSQL the way Tollgate's PostgreSQL path
// keeps them (decision 0018): the claims of one batch written by ONE autocommit statement of
// data-modifying `with` parts, the finishes likewise, each part guarded as the single path's
// statement would be, the accounts locked in id order after the rows, and the whole statement
// rolled back by a raising function when a guard refuses (then each item is decided alone, by
// the same statement with a batch of one). A batch is what arrived while the previous one of its
// lane (claims, finishes: one connection each) was running: one per event-loop turn when idle.
//
// Variants (FLOOR_VARIANT, or `--variant NAME`):
//   pg-ordered-ids   Tollgate's PostgreSQL tables and indexes for requests, holds, journal and
//                    accounts as migrated (040-operator-dashboard: requests_created and the partial
//                    journal_captures_created included; the bounds abridged to one check each),
//                    with Tollgate's time-ordered ids. Claim: the record, the guarded hold on the
//                    account, the hold row, its journal entry. Finish: the capture (open, within
//                    the hold), the account, the capture's journal entry, the outcome.
//   pg-event-log     the event log: claim = one `claim` event + the guarded account update;
//                    finish = one `finish` event inserted only from its claim and within its hold
//                    + the account update. Unique (key_id, idempotency_key) over claims and unique
//                    (request_id, kind); and, PostgreSQL's part of the design, each event's
//                    transaction id (`xid xid8 default pg_current_xact_id()`) with an index on
//                    (xid, seq), which the projector reads by.
//   pg-event-log-projected  the event log plus its read model (records, statement entries, the
//                    listing indexes), built every 50 ms by the projector on a third connection
//                    of the gateway's process (its CPU counted with the gateway's; PostgreSQL's
//                    beside). The projector's rule: in one transaction, the snapshot's xmin first
//                    (`pg_snapshot_xmin(pg_current_snapshot())`), then the events after the
//                    (xid, seq) it reached of transactions older than that xmin, in (xid, seq)
//                    order, applied with the (xid, seq) they take it to. A sequence is not
//                    commit-ordered here; an xid below every running transaction's is final.
//
//   node bench/ledger-floor-pg.mjs [--variant NAME]       the gateway (env below)
//   node bench/ledger-floor-pg.mjs --check URL [LABEL]    the ledger of the database at URL
//   node bench/ledger-floor-pg.mjs --self-test [NAME…]    each variant end to end as
//       ledger-floor.mjs's, each in a schema of its own, and the projector's out-of-order-commit
//       test (two transactions, the later sequence committed first: nothing stepped over)
//   node bench/ledger-floor-pg.mjs --side-report DIR RESULTS.JSON NAME   after a harness run:
//       per round, the gateway's CPU per request at max, its PostgreSQL backends' CPU and the WAL
//       it wrote per request over the same window (sampled by the gateway: DIR/pg-side-PID.json)
//
// Env: FLOOR_PG_URL (postgres://postgres@127.0.0.1:5432/floorbench)  FLOOR_PG_SCHEMA (public)
//      FLOOR_DATA_DIR (where the samples go)  PROXY_PORT  UPSTREAM_URL  FLOOR_VARIANT (pg-ordered-ids)
//
// Its parts are in bench/ledger-floor/: pg-schema.mjs, pg-statements.mjs, pg-store.mjs,
// pg-projector.mjs, pg-checks.mjs (`--check`), pg-self-test.mjs, reports.mjs (`--side-report`), and
// what it shares with ledger-floor.mjs: gateway.mjs, money.mjs, ledger-rules.mjs, self-test.mjs.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { serveGateway } from './ledger-floor/gateway.mjs';
import { checkLedger } from './ledger-floor/pg-checks.mjs';
import { DEFAULT_URL, VARIANTS } from './ledger-floor/pg-schema.mjs';
import { selfTest } from './ledger-floor/pg-self-test.mjs';
import { openStore } from './ledger-floor/pg-store.mjs';
import { sideReport } from './ledger-floor/reports.mjs';

// ------------------------------------------------------------------------- the gateway's samples

/**
 * The gateway: ledger-floor.mjs's, on this store. Every 250 ms it samples its PostgreSQL
 * backends' CPU, the WAL position and the requests finished; on SIGTERM (the harness stops it
 * after the max phase) it writes them to FLOOR_DATA_DIR/pg-side-PID.json.
 */
async function serve(variant) {
  const url = process.env.FLOOR_PG_URL ?? DEFAULT_URL;
  const schema = process.env.FLOOR_PG_SCHEMA ?? 'public';
  const store = await openStore(url, schema, variant);
  const started = Date.now();
  const samples = [];
  const sampling = setInterval(async () => {
    try {
      samples.push(await store.sample());
    } catch {
      // a sample missed is a sample missed
    }
  }, 250);
  const dir = process.env.FLOOR_DATA_DIR;
  // Replaces serveGateway's own handlers (which exit at once): the samples first.
  process.prependListener('SIGTERM', () => {
    clearInterval(sampling);
    if (dir)
      writeFileSync(
        path.join(dir, `pg-side-${process.pid}.json`),
        JSON.stringify({ started, stopped: Date.now(), samples }),
      );
  });
  serveGateway(store, variant, `${url} (schema ${schema})`);
}

// ------------------------------------------------------------------------------------ dispatch

const [mode, ...rest] = process.argv.slice(2);
const url = process.env.FLOOR_PG_URL ?? DEFAULT_URL;
if (mode === '--check') process.exit(await checkLedger(rest[0], rest[1]));
else if (mode === '--self-test')
  process.exit(await selfTest(url, rest.length > 0 ? rest : VARIANTS));
else if (mode === '--side-report') process.exit(sideReport(rest[0], rest[1], rest[2]));
else {
  const variant = mode === '--variant' ? rest[0] : (process.env.FLOOR_VARIANT ?? 'pg-ordered-ids');
  if (!VARIANTS.includes(variant))
    throw new Error(`unknown variant ${variant} (one of ${VARIANTS.join(', ')})`);
  await serve(variant);
}
