#!/usr/bin/env node
// The floor of an accounted Node gateway on SQLite (issues 19 and 39): the harness's minimal JSON
// gateway (node:http + undici, anchors/node-proxy.mjs in ../shared/bench) plus the durable money
// that issue 19 says must be kept, and nothing else — no framework, no validation beyond a JSON
// parse, no limits, no logs, no metrics. Two promises, whatever the variant:
//
//   claim, committed before the upstream call: the request's record (unique key + idempotency key)
//     and its hold, guarded on the account (balance − held ≥ amount);
//   finish, committed before the answer: the hold's capture, exactly once, the account's balance
//     and held, the capture's journal, the record's outcome with the answer kept for a replay.
//
// Variants (FLOOR_VARIANT, or `--variant NAME`):
//   ordered-ids  (the default; `ledger-floor` in bench/goals.sh) Tollgate's own SQLite tables and
//                indexes for these four tables (requests, holds, journal, accounts, as migrated,
//                the money bounds abridged to one CHECK or trigger each) and Tollgate's own
//                time-ordered ids: `createIdGenerator().next('req' | 'hold' | 'jrn')` of
//                packages/server/src/util/effects.ts, imported from the build. The claim writes the
//                record, the guarded hold on the account, the hold row and its journal entry; the
//                finish the capture, the account, the capture's journal entry, the outcome.
//   random-ids   the same, with a `randomUUID()` for every row's key: the floor as it was until
//                2026-12-05 (issue 39), kept for comparison. Random 128-bit text keys in the
//                B-trees keyed by an id (three primary keys, holds_request) put every insert on a
//                random page, so each group commit rewrites many.
//   event-log    one append-only table of events (`events`, ordered by its integer sequence):
//                claim = the guarded account update + one `claim` row (request id, key id,
//                idempotency key, fingerprint, path, model, amount held); finish = one `finish` row (status,
//                usage, the answer, the amount captured and the amount released) inserted only
//                from its request's claim, + the account update. One unique index over claims'
//                (key_id, idempotency_key), one over (request_id, kind): a request is claimed once
//                and captured once. No listing, retention or sweeper index: in that design those
//                are a read model built from the log by sequence, off the request path
//                (docs/decisions/0019-hot-path-event-log.md).
//   event-log-projected  the event log plus that read model, built in the same process: every
//                50 ms a projector reads the events after the last one it applied, in order, and
//                in one transaction writes a record row per claim (updated by its finish) and a
//                statement entry per event, with the listing, retention and sweeper indexes
//                (by key, by account, by expiry, the processing ones; statements by account), and
//                the sequence it reached. Off the request path but in the gateway's process, so
//                its CPU counts: what the design costs in all.
//   event-log-projected-apart  the same read model, built by the same rule, in another OS process:
//                the floor spawns `ledger-floor.mjs --projector FILE` in a session of its own (so
//                the harness, which counts the gateway's process group, does not count it), which
//                opens the same database (WAL: readers never wait; one writer at a time, both
//                connections with a busy_timeout). It reads the events outside its write
//                transaction, then applies at most PROJECTED_APART_PER_BATCH of them in one short
//                `BEGIN IMMEDIATE` (the request path's group commit waits for it, in SQLite's busy
//                handler, at most that long), pausing between batches. It writes its own CPU and
//                the events it applied to DIR/projector-PID.json when it stops (`--projector-report`).
//
// Writes are group-committed as Tollgate's are (every claim or finish of one event-loop turn in
// one `BEGIN IMMEDIATE … COMMIT`, each in a savepoint), with WAL, `synchronous = NORMAL` and the
// PASSIVE checkpoint on a worker thread. So `bench/goals.sh` can show how much of Tollgate's CPU
// per request the durable money costs by itself, under each schema, and how much is the rest.
// A benchmark target only: it trusts the mock upstream and prices with a flat rule.
//
//   node bench/ledger-floor.mjs [--variant NAME]       the gateway (env below)
//   node bench/ledger-floor.mjs --check DIR [LABEL]    the ledger of DIR/floor.sqlite after a run
//   node bench/ledger-floor.mjs --self-test [NAME…]    each variant end to end: answers billed once,
//       a replayed idempotency key refused, a second finish and a second claim refused, the
//       ledger clean (exit 1 otherwise; bench/goals.sh runs it every time)
//   node bench/ledger-floor.mjs --store-loop [--requests 20000] [--rounds 3] [--group 16]
//       [--variants a,b] [--cpu 0]   the store alone, no HTTP: claims and finishes in a tight loop,
//       `--group` per commit, each variant in its own process, rounds interleaved; CPU per request
//       (and the apart projector's CPU per request beside it)
//   node bench/ledger-floor.mjs --projector-report DIR RESULTS.JSON NAME
//       after a harness run of event-log-projected-apart (bench/goals.sh): per round, the gateway's
//       CPU per request at max ÷ the passthrough's, the projector process's over the same window,
//       and their sum
//   node bench/ledger-floor.mjs --held-report DIR NAME
//       after a harness run of a projected variant: per round, how often and how long the projector
//       held the request path (the apart one: group commits that waited for its batch; the one in
//       the process: its batches, which run on the event loop)
//
// Env: PROXY_PORT (18110)  UPSTREAM_URL (http://127.0.0.1:18000)  FLOOR_DATA_DIR (a new temp dir)
//      FLOOR_VARIANT (ordered-ids)  FLOOR_INDEXES (all; `none`: only the money path's own keys,
//      see ledger-floor/sqlite-tables.mjs; the table variants only)
//
// Its parts are in bench/ledger-floor/ (this file stays the entry point: the floor's child
// processes run it again): sqlite.mjs (binding, variants, pragmas), sqlite-store.mjs (openStore),
// sqlite-tables.mjs, sqlite-event-log.mjs, sqlite-group-commit.mjs, sqlite-projector.mjs,
// sqlite-checks.mjs (`--check`), sqlite-self-test.mjs, store-loop.mjs, reports.mjs; shared with
// ledger-floor-pg.mjs: gateway.mjs, money.mjs, ledger-rules.mjs, self-test.mjs.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveGateway } from './ledger-floor/gateway.mjs';
import { heldReport, projectorReport } from './ledger-floor/reports.mjs';
import { VARIANTS } from './ledger-floor/sqlite.mjs';
import { checkLedger } from './ledger-floor/sqlite-checks.mjs';
import { writeHeld } from './ledger-floor/sqlite-group-commit.mjs';
import { projectorProcess } from './ledger-floor/sqlite-projector.mjs';
import { selfTest } from './ledger-floor/sqlite-self-test.mjs';
import { openStore } from './ledger-floor/sqlite-store.mjs';
import { storeLoop, storeLoopOne } from './ledger-floor/store-loop.mjs';
import { parseFlags } from './lib.mjs';

const SELF = fileURLToPath(import.meta.url);

// ------------------------------------------------------------------------------------ the gateway

function serve(variant) {
  const file = path.join(
    process.env.FLOOR_DATA_DIR || mkdtempSync(path.join(tmpdir(), 'floor-')),
    'floor.sqlite',
  );
  const store = openStore(file, { variant, indexes: process.env.FLOOR_INDEXES !== 'none' });
  if (variant.startsWith('event-log-projected')) writeHeld(path.dirname(file));
  serveGateway(store, `${variant}`, file);
}

// ------------------------------------------------------------------------------------ dispatch

const [mode, ...rest] = process.argv.slice(2);
if (path.resolve(process.argv[1] ?? '') !== SELF) {
  // imported: nothing to run (the parts are in bench/ledger-floor/)
} else if (mode === '--check')
  process.exit(checkLedger(path.join(rest[0], 'floor.sqlite'), rest[1]));
else if (mode === '--self-test') process.exit(await selfTest(rest.length > 0 ? rest : VARIANTS));
else if (mode === '--store-loop') process.exit(await storeLoop(parseFlags(rest)));
else if (mode === '--projector') projectorProcess(rest[0]);
else if (mode === '--projector-report') process.exit(projectorReport(rest[0], rest[1], rest[2]));
else if (mode === '--held-report') process.exit(heldReport(rest[0], rest[1]));
else if (mode === '--store-loop-one') {
  await storeLoopOne(rest[0], Number(rest[1]), Number(rest[2]));
  process.exit(0);
} else {
  const variant = mode === '--variant' ? rest[0] : (process.env.FLOOR_VARIANT ?? 'ordered-ids');
  if (!VARIANTS.includes(variant))
    throw new Error(`unknown variant ${variant} (one of ${VARIANTS.join(', ')})`);
  serve(variant);
}
