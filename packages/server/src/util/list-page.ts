import { sql, type Kysely, type RawBuilder } from 'kysely';
import { invalidInput } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';

/** One page of a newest-first listing, in the list shape of docs/api-conventions.md. */
export interface ListPage<View> {
  readonly object: 'list';
  readonly data: View[];
  readonly has_more: boolean;
  /** The last item's id, to pass as `after` for the next page; null on the last page. */
  readonly next_cursor: string | null;
}

/**
 * The page of a listing whose query read one row more than `limit`: that extra row only tells
 * whether there are more, and is not shown.
 */
export function listPage<Row extends { readonly id: string }, View>(
  rows: readonly Row[],
  limit: number,
  view: (row: Row) => View,
): ListPage<View> {
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return {
    object: 'list',
    data: page.map((row) => view(row)),
    has_more: hasMore,
    next_cursor: hasMore ? (page.at(-1)?.id ?? null) : null,
  };
}

/** A page size: an integer from 1 to 100, `fallback` when absent (query strings are text). */
export function parseLimit(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const limit = typeof value === 'string' && /^[0-9]{1,3}$/.test(value) ? Number(value) : value;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 100)
    throw invalidInput('limit', 'must be an integer from 1 to 100');
  return limit;
}

/** Tables listed newest first by (`created_at`, `id`), each with an index on those columns. */
type NewestFirstTable = 'accounts' | 'redemption_batches';

/**
 * The condition that keeps the rows after `after` in a newest-first (`created_at`, `id`) listing
 * of `table` (keyset paging: stable while rows are added), `undefined` for the first page. An
 * `after` that names no row of the table is 400 naming `after`, with `what` saying what it
 * should have been ("is not an account id"); callers order by `created_at desc, id desc`.
 */
export async function afterCursor(
  db: Kysely<Database>,
  table: NewestFirstTable,
  after: unknown,
  what: string,
): Promise<RawBuilder<boolean> | undefined> {
  if (after === undefined) return undefined;
  const cursor =
    typeof after === 'string' && after.length <= 100
      ? await db
          .selectFrom(table)
          .select(['created_at', 'id'])
          .where('id', '=', after)
          .executeTakeFirst()
      : undefined;
  if (cursor === undefined) throw invalidInput('after', what);
  return sql<boolean>`(created_at < ${cursor.created_at} or (created_at = ${cursor.created_at} and id < ${cursor.id}))`;
}
