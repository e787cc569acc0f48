import type { RequestResolution } from '@tollgate/protocol';
import { z } from 'zod';
import type { Database } from './schema.js';

/**
 * Stored JSON columns (JSON is stored as text: schema.ts) are read with the zod schema of what
 * their writers store, the TypeScript type derived from it (docs/architecture.md, "Validation at
 * the boundary"). Here: the one way to read such a column, and the schemas of the columns read in
 * more than one place. A column read in one place has its schema beside its reader; the tasks'
 * columns are tasks/task-stored-json.ts (a mismatch there stops the task for an operator).
 */

/**
 * A stored JSON value that does not match its column's schema (or is not JSON): a corrupt row,
 * never the caller's fault. Not an `ApiError`: the error handler answers 500 `INTERNAL_ERROR`
 * and logs this message, which names the table, the column and the row.
 */
export class CorruptRow extends Error {
  override readonly name = 'CorruptRow';
}

/** Where a stored value was read: its table, its column and its row's id. */
export interface StoredAt<Table extends keyof Database> {
  readonly table: Table;
  readonly column: keyof Database[Table] & string;
  readonly id: string;
}

/** A stored JSON column's text, parsed and checked with its schema; a `CorruptRow` if it fails. */
export function parseStoredJson<Schema extends z.ZodType, Table extends keyof Database>(
  schema: Schema,
  text: string,
  at: StoredAt<Table>,
): z.output<Schema> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw corruptRow(at, `not JSON: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw corruptRow(at, `${issue?.path.map(String).join('.') || '(root)'}: ${issue?.message}`);
}

function corruptRow(
  at: { readonly table: string; readonly column: string; readonly id: string },
  problem: string,
): CorruptRow {
  return new CorruptRow(
    `${at.table}.${at.column} of row ${at.id} does not match its schema (${problem.slice(0, 300)})`,
  );
}

/**
 * `requests.resolution`: how a held record was resolved after the fact, the wire's
 * `RequestResolution` (both ways, below). Written by requests/settlement-service.ts (`settled`,
 * and an operator's `capture` or `release`) and requests/request-reconciler.ts (`by: lookup`).
 */
export const requestResolutionSchema = z.discriminatedUnion('action', [
  z.strictObject({
    action: z.literal('settled'),
    idempotency_key: z.string().min(1),
    at: z.iso.datetime(),
  }),
  z.strictObject({
    action: z.enum(['capture', 'release']),
    amount: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
    reason: z.string(),
    by: z.enum(['operator', 'lookup']),
    at: z.iso.datetime(),
  }),
]);

type StoredResolution = z.output<typeof requestResolutionSchema>;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameAsProtocol: Same<StoredResolution, RequestResolution> = true;
void sameAsProtocol;
