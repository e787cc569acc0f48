import { sql, type RawBuilder } from 'kysely';
import type { DialectName } from '../store/database.js';

/**
 * The database's own clock, in milliseconds since the epoch, as an SQL expression. Claims are
 * judged by it (docs/tasks.md "Claims"): instances whose clocks disagree still agree on whether a
 * lease has run out, because only the database's clock is ever compared with `lease_until`.
 * SQLite's `julianday('now')` has millisecond precision; PostgreSQL's `clock_timestamp()` is the
 * time of the statement (not of the transaction, as `now()` is).
 */
export function databaseNowMs(dialect: DialectName): RawBuilder<number> {
  return dialect === 'postgres'
    ? sql<number>`(floor(extract(epoch from clock_timestamp()) * 1000))::bigint`
    : sql<number>`cast(round((julianday('now') - 2440587.5) * 86400000.0) as integer)`;
}
