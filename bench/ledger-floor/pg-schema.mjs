// The PostgreSQL floors' variants and schema (accounts, Tollgate's tables, the event log with each
// event's transaction id, the read model), a connection to a schema, and the schema's creation.
import pg from 'pg';
import { INITIAL_BALANCE } from './money.mjs';

export const VARIANTS = ['pg-ordered-ids', 'pg-event-log', 'pg-event-log-projected'];
export const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/floorbench';

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
export async function connect(url, schema) {
  const client = new pg.Client({
    connectionString: url,
    options: `-c search_path=${schema}`,
  });
  await client.connect();
  return client;
}

export async function createSchema(client, variant) {
  await client.query(ACCOUNTS);
  await client.query(variant === 'pg-ordered-ids' ? TABLES : EVENT_LOG);
  if (variant === 'pg-event-log-projected') await client.query(READ_MODEL);
  await client.query(
    `insert into accounts (id, email, balance, created_at) values ('acct', 'floor@example.test', $1, 0)
     on conflict do nothing`,
    [INITIAL_BALANCE],
  );
}
