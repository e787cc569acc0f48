import type { RequestList, RequestSummary } from '@tollgate/protocol';
import { sql, type Kysely } from 'kysely';
import type { Principal } from '../auth/key-service.js';
import { recordView, type RecordRow } from '../requests/record-view.js';
import type { Database } from '../store/schema.js';
import { encodeCursor, type RequestListFilter } from './request-list-query.js';

/**
 * `GET /v1/requests` without `idempotency_key` (docs/requests.md, "Listing"): the calling key's
 * own records, newest first, by keyset pages on (`created_at`, `id`) — index
 * `requests_key_created` (migrations/012). Every read is bounded to `principal.keyId` in SQL:
 * no other key's record, of the same account or not, can appear, whatever the filters or cursor.
 * Records purged after their retention (docs/requests.md, "Idempotency") are gone from the list
 * too; the account's spend stays in the journal (docs/usage.md).
 */
export class RequestListing {
  constructor(private readonly db: Kysely<Database>) {}

  async list(principal: Principal, filter: RequestListFilter): Promise<RequestList> {
    let query = this.db
      .selectFrom('requests')
      .leftJoin('holds', 'holds.id', 'requests.hold_id')
      .select([...SUMMARY_COLUMNS, 'holds.state as hold_state'])
      // The stored body is read only when it is an error (small, and shown as `error`); a result
      // is not part of a summary, and may be large.
      .select(
        sql<
          string | null
        >`case when requests.http_status >= 400 then requests.response_body else null end`.as(
          'response_body',
        ),
      )
      .where('requests.key_id', '=', principal.keyId);
    if (filter.model !== null) query = query.where('requests.model', '=', filter.model);
    if (filter.status !== null) query = query.where('requests.status', '=', filter.status);
    if (filter.createdAfter !== null)
      query = query.where('requests.created_at', '>=', filter.createdAfter);
    if (filter.createdBefore !== null)
      query = query.where('requests.created_at', '<', filter.createdBefore);
    const cursor = filter.cursor;
    if (cursor !== null)
      query = query.where((eb) =>
        eb.or([
          eb('requests.created_at', '<', cursor.createdAt),
          eb.and([
            eb('requests.created_at', '=', cursor.createdAt),
            eb('requests.id', '<', cursor.id),
          ]),
        ]),
      );
    const rows = await query
      .orderBy('requests.created_at', 'desc')
      .orderBy('requests.id', 'desc')
      .limit(filter.limit + 1)
      .execute();
    const page = rows.slice(0, filter.limit);
    const last = page.at(-1);
    const hasMore = rows.length > filter.limit && last !== undefined;
    return {
      object: 'list',
      data: page.map((row) => summaryView({ ...row, transcript: null })),
      has_more: hasMore,
      next_cursor: hasMore ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
    };
  }
}

/** The record as `GET /v1/requests/{id}` shows it, without `result`. */
export function summaryView(row: RecordRow): RequestSummary {
  const { result: _result, ...summary } = recordView(row);
  return summary;
}

/** Every column of a record but its stored body and stream transcript. */
const SUMMARY_COLUMNS = [
  'requests.id',
  'requests.key_id',
  'requests.account_id',
  'requests.idempotency_key',
  'requests.fingerprint',
  'requests.method',
  'requests.path',
  'requests.model',
  'requests.status',
  'requests.http_status',
  'requests.error_code',
  'requests.usage',
  'requests.hold_id',
  'requests.reserve_amount',
  'requests.amount',
  'requests.price_version',
  'requests.pricing_rule',
  'requests.upstream_request_id',
  'requests.resolution',
  'requests.usage_flag',
  'requests.usage_reviewed_at',
  'requests.usage_review',
  'requests.task_id',
  'requests.created_at',
  'requests.updated_at',
  'requests.expires_at',
] as const;
