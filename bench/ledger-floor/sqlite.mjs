// The SQLite floors' common ground: the entry script their child processes run, the binding, the
// variants, the connections' pragmas, the accounts table and the busy timeout.
import { fileURLToPath } from 'node:url';
// The SQLite binding the gateway itself picks for this Node version (docs/decisions/0005): the
// built one, as the other benchmark scripts use (bench/goals.sh builds first).
import {
  SqliteDatabase as Database,
  sqliteBindingPath,
} from '../../packages/server/dist/store/sqlite-binding.js';

export { Database, sqliteBindingPath };

/**
 * bench/ledger-floor.mjs, the entry point: the apart projector (`--projector FILE`), each store
 * loop measurement (`--store-loop-one`) and the self-test's gateways are child processes that run
 * it again, whichever module spawns them.
 */
export const FLOOR_SCRIPT = fileURLToPath(new URL('../ledger-floor.mjs', import.meta.url));

export const VARIANTS = [
  'random-ids',
  'ordered-ids',
  'event-log',
  'event-log-projected',
  'event-log-projected-apart',
];

export const PRAGMAS = [
  'journal_mode = WAL',
  'synchronous = NORMAL',
  'foreign_keys = ON',
  'cache_size = -65536',
  'mmap_size = 268435456',
  'temp_store = MEMORY',
  'wal_autocheckpoint = 20000',
];
export const ACCOUNTS = `
CREATE TABLE IF NOT EXISTS accounts (id text primary key, email text not null unique, balance bigint default 0 not null,
  held bigint default 0 not null, created_at bigint not null, budget_limit bigint, budget_window text,
  budget_window_start bigint default 0 not null, budget_spent bigint default 0 not null,
  constraint accounts_money_non_negative check (balance >= 0 and held >= 0 and balance - held >= 0));
CREATE TRIGGER IF NOT EXISTS accounts_money_bounds_update before update of balance, held on accounts
  when new.balance > 1000000000000000 or new.held > 1000000000000000 begin select raise(abort, 'bounds'); end;`;

export const BUSY_TIMEOUT_MS = 5000;
