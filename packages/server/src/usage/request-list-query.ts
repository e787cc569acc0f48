import { z } from 'zod';
import { invalidInput } from '../errors/api-error.js';
import { jsonSchemaOf } from '../errors/input-schema.js';
import { RECORD_MOVES } from '../requests/record-states.js';
import type { RequestStatus } from '../store/schema.js';
import { dayOf } from './days.js';

/** Where a page starts: after the record at (`createdAt`, `id`), in newest-first order. */
export interface ListCursor {
  readonly createdAt: number;
  readonly id: string;
}

/** What `GET /v1/requests` lists: the calling key's records matching every filter given. */
export interface RequestListFilter {
  /** 1–100. */
  readonly limit: number;
  readonly cursor: ListCursor | null;
  readonly model: string | null;
  readonly status: RequestStatus | null;
  /** Epoch ms, included. */
  readonly createdAfter: number | null;
  /** Epoch ms, excluded. */
  readonly createdBefore: number | null;
}

/** The two modes of `GET /v1/requests`: one record by idempotency key (spec 4.2), or a list. */
export type RequestsQuery =
  | { readonly mode: 'lookup'; readonly idempotencyKey: string }
  | { readonly mode: 'list'; readonly filter: RequestListFilter };

/**
 * The query string as Fastify checks it: these parameters, each once (a repeated one arrives as
 * an array and is refused), and no other (400 naming it).
 */
export const requestsQuery = z.strictObject({
  idempotency_key: z.string().min(1).max(200).optional(),
  limit: z.string().optional(),
  cursor: z.string().max(200).optional(),
  model: z.string().min(1).max(200).optional(),
  status: z.string().optional(),
  created_after: z.string().optional(),
  created_before: z.string().optional(),
});
export const requestsQuerySchema = jsonSchemaOf(requestsQuery);
export type RequestsQueryString = z.output<typeof requestsQuery>;

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 100;

const STATUSES = Object.keys(RECORD_MOVES) as RequestStatus[];

/**
 * Reads the query into one of the two modes. `idempotency_key` is a lookup of one record and
 * takes no other parameter (a list filter beside it is the 400 naming that filter); without it
 * the query is a list.
 */
export function parseRequestsQuery(query: RequestsQueryString): RequestsQuery {
  const { idempotency_key: idempotencyKey, ...listParameters } = query;
  if (idempotencyKey !== undefined) {
    const extra = Object.keys(listParameters)[0];
    if (extra !== undefined)
      throw invalidInput(
        extra,
        'idempotency_key reads one record and takes no list parameter; list without idempotency_key',
      );
    return { mode: 'lookup', idempotencyKey };
  }
  const createdAfter = parseTime(query.created_after, 'created_after');
  const createdBefore = parseTime(query.created_before, 'created_before');
  if (createdAfter !== null && createdBefore !== null && createdAfter >= createdBefore)
    throw invalidInput('created_before', 'must be later than created_after');
  return {
    mode: 'list',
    filter: {
      limit: parseLimit(query.limit),
      cursor: query.cursor === undefined ? null : decodeCursor(query.cursor),
      model: query.model ?? null,
      status: parseStatus(query.status),
      createdAfter,
      createdBefore,
    },
  };
}

export function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIST_LIMIT;
  const limit = /^[0-9]{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LIST_LIMIT))
    throw invalidInput('limit', `must be an integer from 1 to ${MAX_LIST_LIMIT}`);
  return limit;
}

export function parseStatus(value: string | undefined): RequestStatus | null {
  if (value === undefined) return null;
  const status = STATUSES.find((candidate) => candidate === value);
  if (status === undefined) throw invalidInput('status', `must be one of ${STATUSES.join(', ')}`);
  return status;
}

/** A day (`2026-11-01`, 00:00 UTC) or a time with its zone (`2026-11-01T08:00:00+08:00`, `…Z`). */
const ISO_TIME =
  /^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,3})?)?(Z|[+-][0-9]{2}:[0-9]{2}))?$/;

/** ISO 8601 with an explicit zone (a time without one would depend on the server's zone). */
export function parseTime(value: string | undefined, field: string): number | null {
  if (value === undefined) return null;
  // Date.parse rolls a day that does not exist (2026-02-30) over into the next month: refuse it.
  const time =
    ISO_TIME.test(value) && isCalendarDay(value.slice(0, 10))
      ? Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value)
      : Number.NaN;
  if (Number.isNaN(time))
    throw invalidInput(
      field,
      'must be an ISO 8601 day (2026-11-01, UTC) or time with its zone (2026-11-01T08:00:00Z)',
    );
  return time;
}

function isCalendarDay(day: string): boolean {
  const time = Date.parse(`${day}T00:00:00Z`);
  return !Number.isNaN(time) && dayOf(time) === day;
}

/**
 * Cursors are opaque to callers: base64url of `<created_at>.<id>` of the last record of a page.
 * A forged one can only move where the caller's own list starts (every read is bounded to the
 * calling key), so it is checked for shape, not signed.
 */
export function encodeCursor(cursor: ListCursor): string {
  return Buffer.from(`${cursor.createdAt}.${cursor.id}`).toString('base64url');
}

const CURSOR = /^([0-9]{1,16})\.([A-Za-z0-9_-]{1,100})$/;

export function decodeCursor(value: string): ListCursor {
  const match = CURSOR.exec(Buffer.from(value, 'base64url').toString('utf8'));
  const createdAt = Number(match?.[1]);
  if (match === null || !Number.isSafeInteger(createdAt) || match[2] === undefined)
    throw invalidInput('cursor', "is not a cursor this server gave; pass a page's next_cursor");
  return { createdAt, id: match[2] };
}
