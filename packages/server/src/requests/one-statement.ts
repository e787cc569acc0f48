import { sql, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import { prepareByName } from '../store/prepared-query.js';
import type { Database } from '../store/schema.js';

/**
 * A money movement written as ONE PostgreSQL statement (data-modifying `with` parts, each guarded
 * as its transaction's statement would be), for the batched admission and capture: one round
 * trip instead of a transaction's six, and the account row locked only while the server runs it
 * (an autocommit statement holds its locks until its own commit, never across a round trip to
 * the gateway). docs/billing.md, "One statement".
 *
 * The statement ends with `refuseUnless(ok, reason)`: when a guard refused (`ok` false), the
 * migration 032 function raises, and PostgreSQL rolls the whole statement back, every insert of
 * it included. Any other error the server answers with (a unique key already used, a deadlock
 * it broke) also means nothing of it persists. In every such case this returns false and the
 * caller takes the path that decides item by item. An error without an answer (the connection lost)
 * may have come after the commit: it is thrown, as a failed COMMIT's is.
 */
export async function runAsOneStatement(
  db: Kysely<Database>,
  /** The statement, compiled (built once per batch shape: store/shaped-statement.ts). */
  compiled: CompiledQuery,
  /** How many claims or captures it writes. */
  batchSize: number,
  /** Told of a server error other than a refusal or a key already used (worth a log line). */
  onUnexpected: (error: unknown) => void,
): Promise<boolean> {
  // The text of a batch of n repeats for every batch of n: the small (common) sizes are
  // prepared once per connection, as the hot path's other statements are.
  if (batchSize <= PREPARED_BATCH_SIZES) prepareByName(compiled.sql);
  try {
    await db.executeQuery(compiled);
    return true;
  } catch (error) {
    const code = sqlStateOf(error);
    if (code === undefined) throw error;
    if (code !== REFUSED && code !== UNIQUE_VIOLATION) onUnexpected(error);
    return false;
  }
}

/** Batches up to this size have their statement prepared by name (a bounded set of texts). */
const PREPARED_BATCH_SIZES = 16;

/** The SQLSTATE of `tollgate_refuse` (migration 032) and of a unique key already used. */
const REFUSED = 'TG001';
const UNIQUE_VIOLATION = '23505';

/** The final part of such a statement: raises (rolling it all back) unless `ok` holds. */
export function refuseUnless(ok: RawBuilder<boolean>, reason: string): RawBuilder<unknown> {
  return sql`select case when ${ok} then 0 else tollgate_refuse(${reason}) end as refused`;
}

/**
 * The SQLSTATE of an error the server answered with: then the statement did not commit. `pg`
 * gives such an error the server's severity and code; a socket's error (`EPIPE`) has no severity.
 */
function sqlStateOf(error: unknown): string | undefined {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)
    ? code
    : undefined;
}
