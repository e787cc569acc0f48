import { z } from 'zod';
import type { OperatorRequestLog, OperatorRequestLogRow } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import { invalidInput } from '../errors/api-error.js';
import { jsonSchemaOf, parseInput } from '../errors/input-schema.js';
import type { Database } from '../store/schema.js';
import { MAX_USAGE_DAYS } from './account-usage.js';
import { DAY_MS } from './days.js';
import {
  listCursor,
  listLimit,
  listTime,
  listValuesOf,
  recordStatus,
  timeOf,
  type RequestListFilter,
} from './request-list-query.js';
import type { RequestListing } from './request-listing.js';

/** Without `from`: the 30 days before `to` (or now). */
const DEFAULT_LOG_DAYS = 30;

/**
 * The query string as Fastify checks it: these parameters, each once, and no other. The key is
 * `key_id`: a parameter named `key` is refused on every URL (http/plugins/request-hygiene.ts).
 */
export const requestLogQuery = z.strictObject({
  account_id: z.string().min(1).max(100).optional(),
  key_id: z.string().min(1).max(100).optional(),
  model: z.string().min(1).max(200).optional(),
  status: recordStatus.optional(),
  from: listTime.optional(),
  to: listTime.optional(),
  cursor: listCursor.optional(),
  limit: listLimit.optional(),
});
export const requestLogQuerySchema = jsonSchemaOf(requestLogQuery);
export type RequestLogQueryString = z.output<typeof requestLogQuery>;

/** A parsed query: the listing's filter, whose records, and the period read. */
export interface RequestLogQuery {
  readonly filter: RequestListFilter & { createdAfter: number; createdBefore: number };
  readonly owner: { readonly accountId?: string; readonly keyId?: string };
}

/**
 * `from` (included) and `to` (excluded): ISO 8601 times with their zone, or UTC days (their
 * 00:00), as `GET /v1/requests` reads `created_after`/`created_before`. `to` defaults to now,
 * `from` to 30 days before `to`; at most 366 days at once (a filter on a rare model scans the
 * period's records in time order), else the 400 naming `from`. Each value is judged by its
 * schema first (`requestLogQuery`: the listing's status, limit, cursor and times), the 400
 * naming its field.
 */
export function parseRequestLogQuery(given: RequestLogQueryString, now: number): RequestLogQuery {
  const query = parseInput(requestLogQuery, given);
  const to = query.to === undefined ? now + 1 : timeOf(query.to);
  const from = query.from === undefined ? to - DEFAULT_LOG_DAYS * DAY_MS : timeOf(query.from);
  if (from >= to) throw invalidInput('to', 'must be later than from');
  if (to - from > MAX_USAGE_DAYS * DAY_MS)
    throw invalidInput(
      'from',
      `the period is longer than ${MAX_USAGE_DAYS} days; ask for at most ${MAX_USAGE_DAYS} at once`,
    );
  return {
    filter: { ...listValuesOf(query), createdAfter: from, createdBefore: to },
    owner: {
      ...(query.account_id === undefined ? {} : { accountId: query.account_id }),
      ...(query.key_id === undefined ? {} : { keyId: query.key_id }),
    },
  };
}

/**
 * The operator's global request log (docs/console.md, "Request log"): the listing's page
 * (`RequestListing.listForOperator`: the same summaries, filters and cursor as every other
 * request list), each row naming its account by email and its key by name.
 */
export async function readRequestLog(
  db: Kysely<Database>,
  listing: RequestListing,
  query: RequestLogQuery,
): Promise<OperatorRequestLog> {
  const page = await listing.listForOperator(query.filter, query.owner);
  const accountIds = [...new Set(page.data.map((row) => row.account_id))];
  const keyIds = [...new Set(page.data.map((row) => row.key_id))];
  const [accounts, keys] = await Promise.all([
    accountIds.length === 0
      ? []
      : db.selectFrom('accounts').select(['id', 'email']).where('id', 'in', accountIds).execute(),
    keyIds.length === 0
      ? []
      : db
          .selectFrom('api_keys')
          .select(['id', 'name', 'key_hint'])
          .where('id', 'in', keyIds)
          .execute(),
  ]);
  const emails = new Map(accounts.map((row) => [row.id, row.email]));
  const keyNames = new Map(keys.map((row) => [row.id, row]));
  return {
    object: 'list',
    data: page.data.map((row): OperatorRequestLogRow => {
      const key = keyNames.get(row.key_id);
      return {
        id: row.id,
        created_at: row.created_at,
        account_id: row.account_id,
        account_email: emails.get(row.account_id) ?? null,
        key_id: row.key_id,
        key_name: key?.name ?? null,
        key_hint: key?.key_hint ?? null,
        model: row.model,
        status: row.status,
        http_status: row.http_status,
        amount: row.bill?.amount ?? null,
        captured: row.bill?.captured ?? false,
      };
    }),
    has_more: page.has_more,
    next_cursor: page.next_cursor,
    from: new Date(query.filter.createdAfter).toISOString(),
    to: new Date(query.filter.createdBefore).toISOString(),
  };
}
