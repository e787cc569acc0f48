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
 * too; the account's spend stays in the journal (docs/usage.md). The console's owner view
 * (`listForAccount`, docs/console.md) reads the same summaries for every key of one account,
 * bounded to that account in SQL (index `requests_account_created`, migrations/013); no API
 * key reaches it.
 */
export class RequestListing {
  constructor(private readonly db: Kysely<Database>) {}

  async list(principal: Principal, filter: RequestListFilter): Promise<RequestList> {
    return this.listWhere('requests.key_id', principal.keyId, filter, summaryView);
  }

  /**
   * Every key's records of one account, each naming the key that made it: the console's owner
   * view (docs/console.md), never reachable by an API key.
   */
  async listForAccount(
    accountId: string,
    filter: RequestListFilter,
    search: OwnerSearch = {},
  ): Promise<OwnerRequestList> {
    return this.listWhere('requests.account_id', accountId, filter, ownerSummaryView, search);
  }

  /**
   * Every account's records (the operator's request log, docs/console.md): the same summaries,
   * filters and cursor, narrowed to one account and/or one key when given — index
   * `requests_key_created` with a key, `requests_account_created` with an account, else
   * `requests_created` (migrations/040). Only an operator's route reaches it.
   */
  async listForOperator(
    filter: RequestListFilter,
    owner: { readonly accountId?: string; readonly keyId?: string } = {},
  ): Promise<ListOf<RequestSummary & { key_id: string; account_id: string }>> {
    return this.listWhere(
      owner.keyId !== undefined ? 'requests.key_id' : 'requests.account_id',
      owner.keyId ?? owner.accountId ?? null,
      filter,
      (row) => ({ ...ownerSummaryView(row), account_id: row.account_id }),
      owner.keyId !== undefined && owner.accountId !== undefined
        ? { accountId: owner.accountId }
        : {},
    );
  }

  private async listWhere<Summary>(
    owner: 'requests.key_id' | 'requests.account_id',
    ownerId: string | null,
    filter: RequestListFilter,
    view: (row: RecordRow) => Summary,
    search: OwnerSearch & { readonly accountId?: string } = {},
  ): Promise<ListOf<Summary>> {
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
      );
    // `null`: no owner (the operator's log): every record.
    if (ownerId !== null) query = query.where(owner, '=', ownerId);
    if (search.accountId !== undefined)
      query = query.where('requests.account_id', '=', search.accountId);
    if (filter.model !== null) query = query.where('requests.model', '=', filter.model);
    if (search.requestId !== undefined) query = query.where('requests.id', '=', search.requestId);
    if (search.idempotencyKey !== undefined)
      query = query.where('requests.idempotency_key', '=', search.idempotencyKey);
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
      data: page.map((row) =>
        view({
          ...row,
          transcript: null,
          channel: null,
          channel_attempts: null,
          channel_cost: null,
        }),
      ),
      has_more: hasMore,
      next_cursor: hasMore ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
    };
  }
}

/** A page of a list, as `RequestList` is for summaries. */
export type ListOf<Summary> = Omit<RequestList, 'data'> & { data: Summary[] };

/**
 * The owner's search (console): one record by id, or by idempotency key — unique per key, so
 * across an account's keys it may name one record of each.
 */
export interface OwnerSearch {
  readonly requestId?: string;
  readonly idempotencyKey?: string;
}

/** A summary as the owner reads it: naming the key that made it. */
export function ownerSummaryView(row: RecordRow): RequestSummary & { key_id: string } {
  return { ...summaryView(row), key_id: row.key_id };
}

/** The owner's list: each summary names the key that made it. */
export type OwnerRequestList = ListOf<RequestSummary & { key_id: string }>;

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
  'requests.line_items',
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
