import { z } from 'zod';
import { invalidInput } from '../errors/api-error.js';
import { jsonSchemaOf, parseInput } from '../errors/input-schema.js';
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

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 100;

const STATUSES = Object.keys(RECORD_MOVES) as RequestStatus[];

/*
 * The values of the request listings' query strings (`GET /v1/requests`, the console's, the
 * operator's request log: operator-request-log.ts). Each stays the text it came as; its rule is a
 * refinement, which the JSON Schema Fastify checks does not carry (`{"type": "string"}`), so Ajv
 * refuses what is not one string and `parseInput` names the value a listing cannot read. What a
 * value means is read from it once judged (`listFilterOf`).
 */

/** `limit`: 1 to MAX_LIST_LIMIT, written in at most three digits. */
export const listLimit = z.string().refine((value) => limitOf(value) !== undefined, {
  error: `must be an integer from 1 to ${MAX_LIST_LIMIT}`,
});

/** `cursor`: a page's `next_cursor`, as this server wrote it (`encodeCursor`). */
export const listCursor = z
  .string()
  .max(200)
  .refine((value) => cursorOf(value) !== undefined, {
    error: "is not a cursor this server gave; pass a page's next_cursor",
  });

/** `status`: one of a record's states. */
export const recordStatus = z.string().refine((value) => statusOf(value) !== undefined, {
  error: `must be one of ${STATUSES.join(', ')}`,
});

/** A time filter: ISO 8601, a day (UTC) or a time with its zone (`timeOf`). */
export const listTime = z.string().refine((value) => !Number.isNaN(timeOf(value)), {
  error: 'must be an ISO 8601 day (2026-11-01, UTC) or time with its zone (2026-11-01T08:00:00Z)',
});

/**
 * The query string: these parameters, each once (a repeated one arrives as an array and is
 * refused), and no other (400 naming it). Fastify checks its JSON Schema, `parseRequestsQuery`
 * the rest.
 */
export const requestsQuery = z.strictObject({
  idempotency_key: z.string().min(1).max(200).optional(),
  limit: listLimit.optional(),
  cursor: listCursor.optional(),
  model: z.string().min(1).max(200).optional(),
  status: recordStatus.optional(),
  created_after: listTime.optional(),
  created_before: listTime.optional(),
});
export const requestsQuerySchema = jsonSchemaOf(requestsQuery);
export type RequestsQueryString = z.output<typeof requestsQuery>;

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
  const judged = parseInput(requestsQuery, query);
  const filter = listFilterOf(judged);
  if (
    filter.createdAfter !== null &&
    filter.createdBefore !== null &&
    filter.createdAfter >= filter.createdBefore
  )
    throw invalidInput('created_before', 'must be later than created_after');
  return { mode: 'list', filter };
}

/** The filter a judged query (its values checked by `requestsQuery`) asks for. */
function listFilterOf(query: RequestsQueryString): RequestListFilter {
  return {
    ...listValuesOf(query),
    createdAfter: query.created_after === undefined ? null : timeOf(query.created_after),
    createdBefore: query.created_before === undefined ? null : timeOf(query.created_before),
  };
}

/** The page and the record filters of a judged query (`listLimit`, `listCursor`, `recordStatus`). */
export function listValuesOf(query: {
  readonly limit?: string | undefined;
  readonly cursor?: string | undefined;
  readonly model?: string | undefined;
  readonly status?: string | undefined;
}): Omit<RequestListFilter, 'createdAfter' | 'createdBefore'> {
  return {
    limit: query.limit === undefined ? DEFAULT_LIST_LIMIT : judged(limitOf(query.limit), 'limit'),
    cursor: query.cursor === undefined ? null : decodeCursor(query.cursor),
    model: query.model ?? null,
    status: query.status === undefined ? null : judged(statusOf(query.status), 'status'),
  };
}

/** A value its schema let through reads as one (else the schema and its reader disagree). */
function judged<Value>(value: Value | undefined, field: string): Value {
  if (value === undefined) throw new Error(`${field} passed its schema but cannot be read`);
  return value;
}

function limitOf(value: string): number | undefined {
  const limit = /^[0-9]{1,3}$/.test(value) ? Number(value) : Number.NaN;
  return limit >= 1 && limit <= MAX_LIST_LIMIT ? limit : undefined;
}

function statusOf(value: string): RequestStatus | undefined {
  return STATUSES.find((candidate) => candidate === value);
}

/** A day (`2026-11-01`, 00:00 UTC) or a time with its zone (`2026-11-01T08:00:00+08:00`, `…Z`). */
const ISO_TIME =
  /^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,3})?)?(Z|[+-][0-9]{2}:[0-9]{2}))?$/;

/**
 * ISO 8601 with an explicit zone (a time without one would depend on the server's zone), as
 * epoch milliseconds; NaN for anything else.
 */
export function timeOf(value: string): number {
  // Date.parse rolls a day that does not exist (2026-02-30) over into the next month: refuse it.
  return ISO_TIME.test(value) && isCalendarDay(value.slice(0, 10))
    ? Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value)
    : Number.NaN;
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

function cursorOf(value: string): ListCursor | undefined {
  const match = CURSOR.exec(Buffer.from(value, 'base64url').toString('utf8'));
  const createdAt = Number(match?.[1]);
  if (match === null || !Number.isSafeInteger(createdAt) || match[2] === undefined)
    return undefined;
  return { createdAt, id: match[2] };
}

/** A cursor this server wrote (a judged `listCursor`, a page's `next_cursor`). */
export function decodeCursor(value: string): ListCursor {
  const cursor = cursorOf(value);
  if (cursor === undefined)
    throw invalidInput('cursor', "is not a cursor this server gave; pass a page's next_cursor");
  return cursor;
}
