#!/usr/bin/env node
// The ledger floor on PostgreSQL (issue 39 item 2; docs/decisions/0019-hot-path-event-log.md): the
// same minimal gateway as bench/ledger-floor.mjs (whose HTTP side, self-test burst and pricing it
// imports), with its two promises — the claim committed before the upstream call, the finish
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
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { clearInterval, setImmediate, setInterval, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createIdGenerator } from '../packages/server/dist/util/effects.js';
import {
  checkSelfTestFigures,
  eventLogClean,
  gatewayBurst,
  INITIAL_BALANCE,
  median,
  priced,
  secondAttemptsRefused,
  serveGateway,
  tablesClean,
  testUpstream,
} from './ledger-floor.mjs';

const SELF = fileURLToPath(import.meta.url);
const VARIANTS = ['pg-ordered-ids', 'pg-event-log', 'pg-event-log-projected'];
const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/floorbench';

// ------------------------------------------------------------------------------------- the schema

const ACCOUNTS = `
create table if not exists accounts (id text primary key, email text not null unique, balance bigint default 0 not null,
  held bigint default 0 not null, created_at bigint not null, budget_limit bigint, budget_window text,
  budget_window_start bigint default 0 not null, budget_spent bigint default 0 not null, owed bigint default 0 not null,
  constraint accounts_money_non_negative check (balance >= 0 and held >= 0 and balance - held >= 0),
  constraint accounts_money_bounds check (not (balance > 1000000000000000 or held > 1000000000000000)));
-- Raises, so that PostgreSQL rolls a whole statement back when one of its guards refused (as
-- Tollgate's tollgate_refuse, migration 032): no rule lives in it.
create or replace function floor_refuse(reason text) returns integer language plpgsql as $$
begin raise exception using errcode = 'FL001', message = reason; end $$;`;
// Tollgate's tables as migrated up to 040-operator-dashboard (pg_dump of a migrated database),
// with every index the request path writes.
const TABLES = `
create table if not exists requests (id text primary key, key_id text not null, account_id text not null,
  idempotency_key text not null, fingerprint text not null, method text not null, path text not null, model text,
  status text not null, http_status integer, response_body text, error_code text, usage text, hold_id text,
  reserve_amount bigint, amount bigint, price_version text, pricing_rule text, upstream_request_id text,
  resolution text, created_at bigint not null, updated_at bigint not null, expires_at bigint not null,
  transcript text, usage_flag text, usage_reviewed_at bigint, usage_review text, task_id text, channel text,
  channel_attempts text, channel_cost bigint, line_items text,
  constraint requests_key_idempotency unique (key_id, idempotency_key));
create table if not exists holds (id text primary key, account_id text not null references accounts (id),
  request_id text not null, amount bigint not null, state text not null, captured_amount bigint,
  price_version text not null, created_at bigint not null, resolved_at bigint, budget_key_id text,
  constraint holds_amount_non_negative check (amount >= 0),
  constraint holds_amount_bounds check (not (amount > 1000000000000000 or captured_amount < 0 or captured_amount > 1000000000000000)));
create table if not exists journal (id text primary key, account_id text not null references accounts (id),
  kind text not null, balance_delta bigint not null, held_delta bigint not null, hold_id text, request_id text,
  topup_id text, reason text not null, created_at bigint not null, owed_delta bigint default 0 not null,
  constraint journal_delta_bounds check (balance_delta between -1000000000000000 and 1000000000000000
    and held_delta between -1000000000000000 and 1000000000000000));
create unique index if not exists holds_request on holds (request_id);
create index if not exists journal_account_created on journal (account_id, created_at);
create index if not exists journal_captures_created on journal (created_at) where kind = 'capture';
create index if not exists requests_account_created on requests (account_id, created_at, id);
create index if not exists requests_created on requests (created_at, id);
create index if not exists requests_expires on requests (expires_at);
create index if not exists requests_key_created on requests (key_id, created_at, id);
create index if not exists requests_processing on requests (updated_at) where status = 'processing';
create index if not exists requests_unresolved on requests (created_at, id) where status = 'submission_unknown';
create index if not exists requests_usage_flag on requests (usage_flag, usage_reviewed_at) where usage_flag is not null;`;
// The event log: `seq` from an identity (ordered, not commit-ordered), `xid` the writing
// transaction's id, which the projector reads by.
const EVENT_LOG = `
create table if not exists events (seq bigint generated always as identity primary key,
  xid xid8 not null default pg_current_xact_id(), kind text not null check (kind in ('claim', 'finish')),
  request_id text not null, account_id text not null, key_id text, idempotency_key text, fingerprint text,
  path text, model text, amount bigint not null check (amount between 0 and 1000000000000000),
  released bigint, status text, http_status integer, usage text, response_body text, created_at bigint not null);
create unique index if not exists events_claim_key on events (key_id, idempotency_key) where kind = 'claim';
create unique index if not exists events_request_kind on events (request_id, kind);
create index if not exists events_xid_seq on events (xid, seq);`;
const READ_MODEL = `
create table if not exists projection (name text primary key, last_xid xid8 not null, last_seq bigint not null);
create table if not exists records (id text primary key, key_id text not null, account_id text not null,
  status text not null, reserve_amount bigint not null, amount bigint, created_at bigint not null,
  updated_at bigint not null, expires_at bigint not null, claim_seq bigint not null, finish_seq bigint);
create index if not exists records_key_created on records (key_id, created_at, id);
create index if not exists records_account_created on records (account_id, created_at, id);
create index if not exists records_expires on records (expires_at);
create index if not exists records_processing on records (updated_at) where status = 'processing';
create table if not exists statement (seq bigint primary key, account_id text not null, request_id text not null,
  kind text not null, balance_delta bigint not null, held_delta bigint not null, created_at bigint not null);
create index if not exists statement_account_created on statement (account_id, created_at);
insert into projection (name, last_xid, last_seq) values ('read-model', '0', 0) on conflict do nothing;`;

/** A connection to `url` with `schema` first on its search path. */
async function connect(url, schema) {
  const client = new pg.Client({
    connectionString: url,
    options: `-c search_path=${schema}`,
  });
  await client.connect();
  return client;
}

async function createSchema(client, variant) {
  await client.query(ACCOUNTS);
  await client.query(variant === 'pg-ordered-ids' ? TABLES : EVENT_LOG);
  if (variant === 'pg-event-log-projected') await client.query(READ_MODEL);
  await client.query(
    `insert into accounts (id, email, balance, created_at) values ('acct', 'floor@example.test', $1, 0)
     on conflict do nothing`,
    [INITIAL_BALANCE],
  );
}

// ------------------------------------------------------------------------- the batched statements

// Each statement takes its batch as arrays (`unnest`), so it has one text whatever the batch's
// size and is prepared once per connection; it ends by refusing (rolling everything back) unless
// every guarded part moved what it had to.
const ACCOUNTS_LOCKED = (from) => `locked as (select id from accounts
    where id in (select account_id from ${from}) order by id for no key update)`;
const STATEMENTS = {
  'pg-ordered-ids': {
    claim: `with input as (select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
        $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::bigint[])
      as i (request_id, hold_id, journal_id, account_id, key_id, idempotency_key, fingerprint, path, model,
        amount, created_at)),
    records as (insert into requests (id, key_id, account_id, idempotency_key, fingerprint, method, path, model,
        status, hold_id, reserve_amount, price_version, created_at, updated_at, expires_at)
      select request_id, key_id, account_id, idempotency_key, fingerprint, 'POST', path, model, 'processing',
        hold_id, amount, 'v1', created_at, created_at, created_at + 2592000000 from input returning 1),
    ${ACCOUNTS_LOCKED('input')},
    reserved as (update accounts a set held = a.held + s.total
      from (select account_id, sum(amount) total from input group by account_id) s
      where a.id = s.account_id and a.id in (select id from locked) and a.balance - a.held >= s.total
      returning a.id),
    hold_rows as (insert into holds (id, account_id, request_id, amount, state, price_version, created_at)
      select hold_id, account_id, request_id, amount, 'open', 'v1', created_at from input returning 1),
    entries as (insert into journal (id, account_id, kind, balance_delta, held_delta, hold_id, request_id,
        reason, created_at)
      select journal_id, account_id, 'hold', 0, amount, hold_id, request_id, 'reserve', created_at from input
      returning 1)
    select case when (select count(*) from reserved) = (select count(distinct account_id) from input)
      then 0 else floor_refuse('insufficient funds') end as refused`,
    finish: `with input as (select * from unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::int[],
        $6::text[], $7::text[], $8::bigint[])
      as i (request_id, hold_id, journal_id, amount, http_status, usage, response_body, created_at)),
    captured as (update holds h set state = 'captured', captured_amount = i.amount, resolved_at = i.created_at
      from input i where h.id = i.hold_id and h.state = 'open' and h.amount >= i.amount
      returning h.id, h.account_id, h.request_id, h.amount reserve, i.amount, i.journal_id, i.created_at),
    ${ACCOUNTS_LOCKED('captured')},
    settled as (update accounts a set balance = a.balance - s.amount, held = a.held - s.reserve
      from (select account_id, sum(amount) amount, sum(reserve) reserve from captured group by account_id) s
      where a.id = s.account_id and a.id in (select id from locked) returning a.id),
    entries as (insert into journal (id, account_id, kind, balance_delta, held_delta, hold_id, request_id,
        reason, created_at)
      select journal_id, account_id, 'capture', -amount, -reserve, id, request_id, 'capture', created_at
      from captured returning 1),
    outcomes as (update requests r set status = 'succeeded', http_status = i.http_status,
        response_body = i.response_body, usage = i.usage, amount = i.amount, updated_at = i.created_at
      from input i where r.id = i.request_id and r.status = 'processing' returning 1)
    select case when (select count(*) from captured) = cardinality($1::text[])
      and (select count(*) from outcomes) = cardinality($1::text[])
      then 0 else floor_refuse('hold not open') end as refused`,
  },
  'pg-event-log': {
    claim: `with input as (select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
        $6::text[], $7::text[], $8::bigint[], $9::bigint[])
      as i (request_id, account_id, key_id, idempotency_key, fingerprint, path, model, amount, created_at)),
    claimed as (insert into events (kind, request_id, account_id, key_id, idempotency_key, fingerprint, path,
        model, amount, created_at)
      select 'claim', request_id, account_id, key_id, idempotency_key, fingerprint, path, model, amount,
        created_at from input returning 1),
    ${ACCOUNTS_LOCKED('input')},
    reserved as (update accounts a set held = a.held + s.total
      from (select account_id, sum(amount) total from input group by account_id) s
      where a.id = s.account_id and a.id in (select id from locked) and a.balance - a.held >= s.total
      returning a.id)
    select case when (select count(*) from reserved) = (select count(distinct account_id) from input)
      then 0 else floor_refuse('insufficient funds') end as refused`,
    // Only from the request's claim and within its hold; a second finish breaks the unique
    // (request_id, kind): captured once.
    finish: `with input as (select * from unnest($1::text[], $2::bigint[], $3::int[], $4::text[], $5::text[],
        $6::bigint[]) as i (request_id, amount, http_status, usage, response_body, created_at)),
    finished as (insert into events (kind, request_id, account_id, amount, released, status, http_status, usage,
        response_body, created_at)
      select 'finish', c.request_id, c.account_id, i.amount, c.amount, 'succeeded', i.http_status, i.usage,
        i.response_body, i.created_at
      from input i join events c on c.request_id = i.request_id and c.kind = 'claim' and c.amount >= i.amount
      returning account_id, amount, released),
    ${ACCOUNTS_LOCKED('finished')},
    settled as (update accounts a set balance = a.balance - s.amount, held = a.held - s.released
      from (select account_id, sum(amount) amount, sum(released) released from finished group by account_id) s
      where a.id = s.account_id and a.id in (select id from locked) returning a.id)
    select case when (select count(*) from finished) = cardinality($1::text[])
      then 0 else floor_refuse('no claim to finish') end as refused`,
  },
};
STATEMENTS['pg-event-log-projected'] = STATEMENTS['pg-event-log'];

const UNIQUE_VIOLATION = '23505';
const REFUSED = 'FL001';

/**
 * A lane: items queued while its statement runs go in the next batch (one per event-loop turn
 * when idle). A batch the statement refuses or breaks a unique key in is decided item by item,
 * each with the same statement alone: one item's refusal never fails another.
 */
function lane(client, name, text, columnsOf) {
  let queue = [];
  let running = false;
  const run = (items) =>
    client.query({
      name,
      text,
      values: columnsOf(items.map((item) => item.value)),
    });
  async function flush() {
    running = true;
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        await run(batch);
        for (const item of batch) item.resolve();
      } catch (error) {
        if (error.code !== UNIQUE_VIOLATION && error.code !== REFUSED) {
          for (const item of batch) item.reject(error);
          continue;
        }
        for (const item of batch) {
          try {
            await run([item]);
            item.resolve();
          } catch (alone) {
            item.reject(
              Object.assign(alone, {
                status: alone.code === UNIQUE_VIOLATION ? 409 : alone.code === REFUSED ? 402 : 502,
              }),
            );
          }
        }
      }
    }
    running = false;
  }
  return (value) =>
    new Promise((resolve, reject) => {
      queue.push({ value, resolve, reject });
      if (!running) {
        running = true;
        setImmediate(flush);
      }
    });
}

const columns = (rows, count) =>
  Array.from({ length: count }, (_, index) => rows.map((row) => row[index]));

/**
 * The floor's PostgreSQL store: `claim` / `finish` as ledger-floor.mjs's (each resolved once its
 * batch's statement has committed), on two connections (one lane each), and for the projected
 * variant the projector on a third, every 50 ms. `samples()`: its backends' CPU and the WAL.
 */
async function openStore(url, schema, variant) {
  if (!VARIANTS.includes(variant))
    throw new Error(`unknown variant ${variant} (one of ${VARIANTS.join(', ')})`);
  const setup = await connect(url, schema);
  await createSchema(setup, variant);
  const clients = [setup, await connect(url, schema)];
  const ids = createIdGenerator();
  const newId = (prefix) => ids.next(prefix);
  const statements = STATEMENTS[variant];
  const tables = variant === 'pg-ordered-ids';
  const claimLane = lane(clients[0], `floor-claim-${variant}`, statements.claim, (rows) =>
    columns(rows, tables ? 11 : 9),
  );
  const finishLane = lane(clients[1], `floor-finish-${variant}`, statements.finish, (rows) =>
    columns(rows, tables ? 8 : 6),
  );
  let project;
  let projecting;
  let running; // the projector's batches in flight (one at a time on its connection)
  let catchingUp = async () => {};
  if (variant === 'pg-event-log-projected') {
    const client = await connect(url, schema);
    clients.push(client);
    project = projector(client);
    projecting = setInterval(() => {
      running ??= (async () => {
        while ((await project()) === PROJECTED_PER_BATCH);
      })().finally(() => (running = undefined));
    }, 50);
    catchingUp = async () => {
      while (running) await running;
      running = (async () => {
        while ((await project()) > 0);
      })().finally(() => (running = undefined));
      await running;
    };
  }
  const backends = (
    await Promise.all(clients.map((client) => client.query('select pg_backend_pid() pid')))
  ).map((result) => result.rows[0].pid);
  let finished = 0;
  return {
    claim(principal, idempotencyKey, fingerprint, url, model, reserve) {
      const now = Date.now();
      const request = newId('req');
      if (tables) {
        const hold = newId('hold');
        return claimLane([
          request,
          hold,
          newId('jrn'),
          principal.accountId,
          principal.keyId,
          idempotencyKey,
          fingerprint,
          url,
          model,
          reserve,
          now,
        ]).then(() => ({ request, hold }));
      }
      return claimLane([
        request,
        principal.accountId,
        principal.keyId,
        idempotencyKey,
        fingerprint,
        url,
        model,
        reserve,
        now,
      ]).then(() => ({ request }));
    },
    finish(principal, claimed, reserve, usage, status, answer) {
      const amount = priced(usage, reserve);
      const now = Date.now();
      const usageText = JSON.stringify(usage ?? null);
      const row = tables
        ? [claimed.request, claimed.hold, newId('jrn'), amount, status, usageText, answer, now]
        : [claimed.request, amount, status, usageText, answer, now];
      return finishLane(row).then(() => {
        finished += 1;
      });
    },
    /** Applies every event not yet projected (the projected variant; otherwise nothing). */
    async catchUp() {
      await catchingUp();
    },
    /** This store's PostgreSQL backends' CPU (µs, from /proc), the WAL, the requests finished. */
    async sample() {
      const wal = (await setup.query('select pg_current_wal_lsn()::text lsn')).rows[0].lsn;
      return [Date.now(), backendsCpuUs(backends), finished * 2, walBytes(wal)];
    },
    async close() {
      clearInterval(projecting);
      await running;
      await Promise.all(clients.map((client) => client.end()));
    },
  };
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux
function backendsCpuUs(pids) {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      return NaN; // PostgreSQL on another machine: not measurable from here
    }
  }
  return (ticks / TICKS_PER_SECOND) * 1e6;
}
const walBytes = (lsn) => {
  const [high, low] = lsn.split('/');
  return Number.parseInt(high, 16) * 2 ** 32 + Number.parseInt(low, 16);
};

// ---------------------------------------------------------------------------------- the projector

const PROJECTED_PER_BATCH = 4096;
/**
 * The projector: one transaction per batch. Its snapshot's xmin first — every transaction with an
 * id below it has ended, and any later one gets a larger id — then the events after the (xid,
 * seq) reached, of transactions below that xmin, in (xid, seq) order: what it applies can never be
 * overtaken by an event committed later, whatever order the sequence was taken in. A claim always
 * sorts before its finish (the finish's transaction began after the claim's had committed). With
 * `rule: 'seq'` (the self-test's counter-example only), the naive reader: `seq > last`.
 */
function projector(client, { rule = 'xmin', perBatch = PROJECTED_PER_BATCH } = {}) {
  const read =
    rule === 'xmin'
      ? `select seq, xid::text xid, kind, request_id, account_id, key_id, amount, released, created_at
         from events where (xid, seq) > ($1::xid8, $2::bigint) and xid < $3::xid8
         order by xid, seq limit $4`
      : `select seq, xid::text xid, kind, request_id, account_id, key_id, amount, released, created_at
         from events where seq > $2::bigint and $1::xid8 is not null and $3::xid8 is not null
         order by seq limit $4`;
  return async function project() {
    await client.query('begin');
    try {
      const xmin = (
        await client.query({
          name: 'floor-xmin',
          text: 'select pg_snapshot_xmin(pg_current_snapshot())::text xmin',
        })
      ).rows[0].xmin;
      const cursor = (
        await client.query(
          "select last_xid::text xid, last_seq seq from projection where name = 'read-model' for update",
        )
      ).rows[0];
      const { rows: events } = await client.query({
        name: `floor-events-${rule}`,
        text: read,
        values: [cursor.xid, cursor.seq, xmin, perBatch],
      });
      if (events.length > 0) await apply(client, events);
      await client.query('commit');
      return events.length;
    } catch (error) {
      await client.query('rollback');
      throw error;
    }
  };
}

/** A batch of events into the read model: the claims' records, then the finishes', the entries. */
async function apply(client, events) {
  const claims = events.filter((event) => event.kind === 'claim');
  const finishes = events.filter((event) => event.kind === 'finish');
  const pick = (rows, ...names) => names.map((name) => rows.map((row) => row[name]));
  if (claims.length > 0)
    await client.query({
      name: 'floor-records',
      text: `insert into records (id, key_id, account_id, status, reserve_amount, created_at, updated_at,
          expires_at, claim_seq)
        select request_id, key_id, account_id, 'processing', amount, created_at, created_at,
          created_at + 2592000000, seq
        from unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])
          as i (request_id, key_id, account_id, amount, created_at, seq)`,
      values: pick(claims, 'request_id', 'key_id', 'account_id', 'amount', 'created_at', 'seq'),
    });
  if (finishes.length > 0)
    await client.query({
      name: 'floor-outcomes',
      text: `update records r set status = 'succeeded', amount = i.amount, updated_at = i.created_at,
          finish_seq = i.seq
        from unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[]) as i (request_id, amount, created_at, seq)
        where r.id = i.request_id`,
      values: pick(finishes, 'request_id', 'amount', 'created_at', 'seq'),
    });
  await client.query({
    name: 'floor-entries',
    text: `insert into statement (seq, account_id, request_id, kind, balance_delta, held_delta, created_at)
      select seq, account_id, request_id, case when kind = 'claim' then 'hold' else 'capture' end,
        case when kind = 'claim' then 0 else -amount end,
        case when kind = 'claim' then amount else -released end, created_at
      from unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[])
        as i (seq, account_id, request_id, kind, amount, released, created_at)`,
    values: pick(
      events,
      'seq',
      'account_id',
      'request_id',
      'kind',
      'amount',
      'released',
      'created_at',
    ),
  });
  const last = events.at(-1);
  await client.query(
    "update projection set last_xid = $1::xid8, last_seq = $2 where name = 'read-model'",
    [last.xid, last.seq],
  );
}

// ------------------------------------------------------------------------------------ the check

/**
 * The ledger of the floor's schema at `url`, as ledger-floor.mjs's `ledgerFigures`: for the log,
 * no finish without its claim, none twice, releases equal to the holds, what is held equal to the
 * unfinished claims, the captures equal to the balance's drop, and the read model equal to the
 * log up to the (xid, seq) it reached; for the tables, the same through the holds and journal.
 */
async function ledgerFigures(url, schema = 'public') {
  const client = await connect(url, schema);
  try {
    const one = async (query) => {
      const row = (await client.query(query)).rows[0];
      return Number(Object.values(row)[0]);
    };
    const balanceMoved =
      INITIAL_BALANCE - (await one("select balance from accounts where id = 'acct'"));
    const held = await one("select held from accounts where id = 'acct'");
    const isTrue = async (table) =>
      (await client.query(`select to_regclass('${table}') is not null as yes`)).rows[0].yes;
    if (await isTrue('events')) {
      const figures = {
        schema: 'event-log',
        requests: await one("select count(*) from events where kind = 'claim'"),
        finished: await one("select count(*) from events where kind = 'finish'"),
        finishedWithoutClaim:
          await one(`select count(*) from events f where f.kind = 'finish' and not exists
          (select 1 from events c where c.request_id = f.request_id and c.kind = 'claim')`),
        capturedTwice: await one(`select count(*) from (select request_id from events
          where kind = 'finish' group by request_id having count(*) > 1) twice`),
        releasedOtherThanHeld:
          await one(`select count(*) from events f join events c on c.request_id = f.request_id
          and c.kind = 'claim' where f.kind = 'finish' and (f.released <> c.amount or f.amount > c.amount)`),
        held,
        openHeld:
          await one(`select coalesce(sum(amount), 0) from events c where c.kind = 'claim' and not exists
          (select 1 from events f where f.request_id = c.request_id and f.kind = 'finish')`),
        balanceMoved,
        captured: await one("select coalesce(sum(amount), 0) from events where kind = 'finish'"),
      };
      if (await isTrue('projection')) Object.assign(figures, await projectionFigures(one));
      return { clean: eventLogClean(figures), figures };
    }
    const figures = {
      schema: 'tables',
      requests: await one('select count(*) from requests'),
      unsucceeded: await one("select count(*) from requests where status <> 'succeeded'"),
      openHolds: await one("select count(*) from holds where state = 'open'"),
      capturedTwice: await one(`select count(*) from (select request_id from journal
        where kind = 'capture' group by request_id having count(*) > 1) twice`),
      held,
      openHeld: await one("select coalesce(sum(amount), 0) from holds where state = 'open'"),
      balanceMoved,
      journalMoved: -(await one('select coalesce(sum(balance_delta), 0) from journal')),
      captured: await one(
        "select coalesce(sum(amount), 0) from requests where status = 'succeeded'",
      ),
    };
    return { clean: tablesClean(figures), figures };
  } finally {
    await client.end();
  }
}

/** The read model against the log up to the (xid, seq) the projector reached. */
async function projectionFigures(one) {
  const reached = `(xid, seq) <= (select last_xid, last_seq from projection where name = 'read-model')`;
  const upTo = (kind, what) =>
    one(`select ${what} from events where kind = '${kind}' and ${reached}`);
  const expected = {
    records: await upTo('claim', 'count(*)'),
    succeeded: await upTo('finish', 'count(*)'),
    captured: await upTo('finish', 'coalesce(sum(amount), 0)'),
    entries: await one(`select count(*) from events where ${reached}`),
    statementMoved: -(await upTo('finish', 'coalesce(sum(amount), 0)')),
    statementHeld:
      (await upTo('claim', 'coalesce(sum(amount), 0)')) -
      (await upTo('finish', 'coalesce(sum(released), 0)')),
  };
  const actual = {
    records: await one('select count(*) from records'),
    succeeded: await one("select count(*) from records where status = 'succeeded'"),
    captured: await one("select coalesce(sum(amount), 0) from records where status = 'succeeded'"),
    entries: await one('select count(*) from statement'),
    statementMoved: await one('select coalesce(sum(balance_delta), 0) from statement'),
    statementHeld: await one('select coalesce(sum(held_delta), 0) from statement'),
  };
  return {
    projectedTo: await one("select last_seq from projection where name = 'read-model'"),
    lag: await one(`select count(*) from events where not (${reached})`),
    readModelMismatches: Object.keys(expected).filter((name) => expected[name] !== actual[name])
      .length,
  };
}

async function checkLedger(url, label = 'ledger-floor-pg') {
  const { clean, figures } = await ledgerFigures(url);
  console.log(`  ${label}: ${clean ? 'clean' : 'NOT clean'} ${JSON.stringify(figures)}`);
  return clean ? 0 : 1;
}

// ------------------------------------------------------------------------------- the self-test

/**
 * Each variant end to end, in a schema of its own on FLOOR_PG_URL's database (dropped after):
 * as ledger-floor.mjs's self-test (24 requests billed once, a replayed key refused, a second
 * finish and a second claim refused with a larger hold open, the ledger clean and caught up);
 * then the projector's out-of-order-commit test. Exit code.
 */
async function selfTest(url, variants) {
  const upstream = await testUpstream();
  const requests = 24;
  const outcomes = await Promise.all(
    [...variants, 'projector-order'].map(async (variant) => {
      const problems = [];
      const schema = `floor_self_test_${variant.replaceAll('-', '_')}_${process.pid}`;
      const admin = await connect(url, 'public');
      await admin.query(`create schema ${schema}`);
      try {
        if (variant === 'projector-order') await projectorOrderTest(url, schema, problems);
        else await selfTestOne(url, schema, variant, upstream, requests, problems);
      } catch (error) {
        problems.push(String(error?.stack ?? error));
      } finally {
        await admin.query(`drop schema ${schema} cascade`);
        await admin.end();
      }
      return [variant, problems];
    }),
  );
  upstream.close();
  for (const [variant, problems] of outcomes)
    console.log(
      `  ${variant}: ${problems.length === 0 ? (variant === 'projector-order' ? 'ok (the later sequence committed first: the projector waited for the earlier transaction, then applied both, once each; a seq cursor would have stepped over it)' : `ok (${requests} requests billed once, a replayed key refused, a second finish and a second claim refused with a hold open, ledger clean)`) : `FAILED: ${problems.join('; ')}`}`,
    );
  return outcomes.every(([, problems]) => problems.length === 0) ? 0 : 1;
}

async function selfTestOne(url, schema, variant, upstream, requests, problems) {
  const dir = mkdtempSync(path.join(tmpdir(), `floor-pg-self-test-${variant}-`));
  try {
    const env = {
      UPSTREAM_URL: `http://127.0.0.1:${upstream.address().port}`,
      FLOOR_PG_URL: url,
      FLOOR_PG_SCHEMA: schema,
      FLOOR_VARIANT: variant,
      FLOOR_DATA_DIR: dir,
    };
    await gatewayBurst(SELF, env, requests, problems);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const store = await openStore(url, schema, variant);
  try {
    const reader = await connect(url, schema);
    const captured = (
      await reader.query(
        variant === 'pg-ordered-ids'
          ? `select id request, hold_id hold, reserve_amount::float8 reserve from requests
             where status = 'succeeded' limit 1`
          : `select c.request_id request, c.amount::float8 reserve from events c join events f
             on f.request_id = c.request_id and f.kind = 'finish' where c.kind = 'claim' limit 1`,
      )
    ).rows[0];
    await reader.end();
    await secondAttemptsRefused(store, captured, problems);
    await store.catchUp();
  } finally {
    await store.close();
  }
  const { clean, figures } = await ledgerFigures(url, schema);
  checkSelfTestFigures(clean, figures, requests, problems);
}

/**
 * PostgreSQL's sequence is not commit-ordered. Transaction A claims (seq n, xid a) and stays
 * open; B claims after it (seq n + 1, xid b > a) and commits first. A `seq > last` reader would
 * see n + 1 and move past n for good (shown, so the test is known to test something); the
 * projector must apply nothing of B while A is open, then both once A commits, each once; and a
 * rolled-back transaction in between must not stop it.
 */
async function projectorOrderTest(url, schema, problems) {
  const setup = await connect(url, schema);
  await createSchema(setup, 'pg-event-log-projected');
  const [a, b, c, projecting] = await Promise.all(
    Array.from({ length: 4 }, () => connect(url, schema)),
  );
  // Events alone, without the account updates (which would make B wait for A's row lock): what
  // is tested is the projector's order, checked on the read model against the log.
  const claim = (client, request) =>
    client.query(
      `insert into events (kind, request_id, account_id, key_id, idempotency_key, amount, created_at)
       values ('claim', $1, 'acct', 'key', $1, 100, 0) returning seq`,
      [request],
    );
  const finish = (client, request) =>
    client.query(
      `insert into events (kind, request_id, account_id, amount, released, status, created_at)
       select 'finish', request_id, account_id, 40, amount, 'succeeded', 0 from events
       where request_id = $1 and kind = 'claim'`,
      [request],
    );
  try {
    const project = projector(projecting);
    await a.query('begin');
    const seqA = Number((await claim(a, 'req-a')).rows[0].seq);
    await b.query('begin');
    const seqB = Number((await claim(b, 'req-b')).rows[0].seq);
    await b.query('commit');
    if (!(seqB > seqA)) problems.push(`B's sequence ${seqB} is not after A's ${seqA}`);
    const naive = (await setup.query('select seq from events where seq > 0 order by seq')).rows;
    if (naive.length !== 1 || Number(naive[0].seq) !== seqB)
      problems.push('the counter-example did not arise: a seq reader would not have skipped');
    if ((await project()) !== 0)
      problems.push('the projector applied an event while an older transaction was open');
    await c.query('begin');
    await claim(c, 'req-c');
    await c.query('rollback');
    await a.query('commit');
    await finish(a, 'req-a');
    // The xmin is the whole server's: any transaction with an id, in any database (another
    // self-test's, someone else's), holds the projector back while it runs. So it is asked again
    // every 20 ms, as its 50 ms interval would, for up to 10 s.
    let applied = 0;
    for (let tries = 0; applied < 3 && tries < 500; tries += 1) {
      applied += await project();
      if (applied < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (applied !== 3) problems.push(`the projector applied ${applied} events, not 3`);
    const records = (await setup.query('select id, status from records order by id')).rows;
    if (
      JSON.stringify(records) !==
      JSON.stringify([
        { id: 'req-a', status: 'succeeded' },
        { id: 'req-b', status: 'processing' },
      ])
    )
      problems.push(`the read model holds ${JSON.stringify(records)}`);
    if ((await project()) !== 0) problems.push('the projector applied an event twice');
    const { figures } = await ledgerFigures(url, schema);
    if (figures.readModelMismatches !== 0 || figures.lag !== 0)
      problems.push(`the read model is not the log's ${JSON.stringify(figures)}`);
  } finally {
    await Promise.all([setup, a, b, c, projecting].map((client) => client.end()));
  }
}

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

/**
 * `--side-report DIR RESULTS.JSON NAME`: per round of NAME in the harness's results, over the max
 * phase (the last `durationSec` before the gateway stopped): the gateway's CPU per request (the
 * harness's), its PostgreSQL backends' CPU per request, WAL bytes per request (the whole server's:
 * anything else writing at the time is counted too).
 */
function sideReport(dir, resultsFile, name) {
  const { raw } = JSON.parse(readFileSync(resultsFile, 'utf8'));
  const target = raw[name];
  const passthrough = raw['node-passthrough'];
  if (!target || !passthrough) return (console.log(`  ${name}: not in ${resultsFile}`), 1);
  const runs = readdirSync(dir)
    .filter((entry) => /^pg-side-\d+\.json$/.test(entry))
    .map((entry) => JSON.parse(readFileSync(path.join(dir, entry), 'utf8')))
    .sort((x, y) => x.started - y.started);
  if (runs.length !== target.rounds.length)
    return (
      console.log(`  ${name}: ${runs.length} sample files for ${target.rounds.length} rounds`),
      1
    );
  const windows = runs.map((run, round) => {
    const seconds = target.rounds[round].max?.durationSec ?? NaN;
    const end = run.samples.findLast(([at]) => at <= run.stopped - 250) ?? run.samples.at(-1);
    const start = run.samples.findLast(([at]) => at <= end[0] - seconds * 1000) ?? run.samples[0];
    const requests = (end[2] - start[2]) / 2;
    return { pgCpu: (end[1] - start[1]) / requests, wal: (end[3] - start[3]) / requests };
  });
  const format = (value) => (Number.isFinite(value) ? value.toFixed(2) : String(value));
  const whole = (value) => (Number.isFinite(value) ? value.toFixed(0) : String(value));
  const cells = (values, show = format) =>
    `${show(median(values))} (${values.map(show).join(', ')})`;
  const cpu = (other, round) => other.rounds[round].max.targetCpuUsPerReq;
  const gateway = target.rounds.map((_, round) => cpu(target, round));
  const rows = [
    ['gateway CPU µs/req at max', gateway, whole],
    ['its PostgreSQL backends, CPU µs/req, same window', windows.map((w) => w.pgCpu), whole],
    ['WAL bytes/req, same window (the whole server)', windows.map((w) => w.wal), whole],
    ['gateway ÷ node-passthrough', gateway.map((value, round) => value / cpu(passthrough, round))],
  ];
  for (const other of ['tollgate-postgres', 'ledger-floor', 'ledger-floor-pg'])
    if (raw[other] && other !== name)
      rows.push([
        `gateway ÷ ${other}`,
        gateway.map((value, round) => value / cpu(raw[other], round)),
      ]);
  for (const phase of Object.keys(target.rounds[0]).filter((key) => /^rate\d+$/.test(key)))
    rows.push([
      `p99 at ${phase.slice(4)} req/s (ms)`,
      target.rounds.map((phases) => phases[phase]?.serviceMs?.p99 ?? NaN),
    ]);
  console.log(`\n${name} (${target.rounds.length} round(s)), median (rounds):\n`);
  console.log('| figure | median (rounds) |\n|---|---|');
  for (const [label, values, show] of rows) console.log(`| ${label} | ${cells(values, show)} |`);
  return 0;
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
