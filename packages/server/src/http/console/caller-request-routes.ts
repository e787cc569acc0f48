import { z } from 'zod';
import type {
  AccountUsage,
  KeySpend,
  OwnerRequestList,
  OwnerRequestSummary,
} from '@tollgate/protocol';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { recordNotFound } from '../../requests/request-errors.js';
import { parseUsageRange, usageQuerySchema } from '../../usage/account-usage.js';
import { accountRequestsCsv } from '../../usage/request-csv.js';
import {
  parseRequestsQuery,
  requestsQuery,
  type RequestListFilter,
} from '../../usage/request-list-query.js';
import type { OwnerSearch } from '../../usage/request-listing.js';
import { notFound } from '../../errors/api-error.js';
import { jsonSchemaOf } from '../../errors/input-schema.js';
import { memberAccountOf } from './console-auth.js';
import type { ConsoleDeps } from './console-deps.js';
import { withKeyNames } from './console-names.js';

/**
 * The owner's list takes the list filters of `GET /v1/requests`, and searches the account by
 * `request_id` or `idempotency_key` (beside the filters, not a lookup: keys are unique per key,
 * so an account may have one record per key with the same idempotency key).
 */
const ownerQueryInput = requestsQuery.extend({
  request_id: z.string().min(1).max(200).optional(),
});
const ownerQuerySchema = jsonSchemaOf(ownerQueryInput);
type OwnerQueryString = z.output<typeof ownerQueryInput>;

function ownerQuery(query: OwnerQueryString): { filter: RequestListFilter; search: OwnerSearch } {
  const { request_id: requestId, idempotency_key: idempotencyKey, ...list } = query;
  const parsed = parseRequestsQuery(list);
  if (parsed.mode !== 'list') throw notFound('route');
  return {
    filter: parsed.filter,
    search: {
      ...(requestId === undefined ? {} : { requestId }),
      ...(idempotencyKey === undefined ? {} : { idempotencyKey: idempotencyKey.toLowerCase() }),
    },
  };
}

/**
 * The records of every key of the member's account (docs/console.md, "Requests"): list with
 * search and filters, one record's detail (its bill and the rule that priced it), and the CSV
 * export — all through `RequestListing.listForAccount`, bounded to the account in SQL.
 */
export function registerCallerRequestRoutes(scope: FastifyInstance, deps: ConsoleDeps): void {
  scope.get<{ Querystring: OwnerQueryString }>(
    '/console/api/requests',
    { schema: { querystring: ownerQuerySchema } },
    async (request): Promise<OwnerRequestList> => {
      const { filter, search } = ownerQuery(request.query);
      const page = await deps.requestListing.listForAccount(
        memberAccountOf(request),
        filter,
        search,
      );
      // The console's answer names each record's key (docs/console.md, "Names, not ids").
      return { ...page, data: await withKeyNames(deps.store.db, page.data) };
    },
  );

  scope.get<{ Querystring: OwnerQueryString }>(
    '/console/api/requests.csv',
    { schema: { querystring: ownerQuerySchema }, exposeHeadRoute: false },
    async (request: FastifyRequest<{ Querystring: OwnerQueryString }>, reply) => {
      const accountId = memberAccountOf(request);
      const { filter, search } = ownerQuery(request.query);
      return reply
        .header('content-type', 'text/csv; charset=utf-8; header=present')
        .header('content-disposition', `attachment; filename="requests-${accountId}.csv"`)
        .header('cache-control', 'private, no-store')
        .send(
          Readable.from(accountRequestsCsv(deps.requestListing, accountId, filter, search), {
            objectMode: false,
          }),
        );
    },
  );

  // The overview's spend: what `GET /v1/account/usage` answers, per UTC day and model.
  scope.get<{ Querystring: { from?: string; to?: string } }>(
    '/console/api/usage',
    { schema: { querystring: usageQuerySchema } },
    async (request): Promise<AccountUsage> =>
      deps.accountUsage.read(
        memberAccountOf(request),
        parseUsageRange(request.query, deps.clock.now()),
      ),
  );

  // The keys page's spend per key over the same kind of range (the same journal entries), each
  // row with its key's name and hint (the per-key chart names them).
  scope.get<{ Querystring: { from?: string; to?: string } }>(
    '/console/api/usage/keys',
    { schema: { querystring: usageQuerySchema } },
    async (request): Promise<KeySpend> => {
      const spend = await deps.accountUsage.readByKey(
        memberAccountOf(request),
        parseUsageRange(request.query, deps.clock.now()),
      );
      return { ...spend, data: await withKeyNames(deps.store.db, spend.data) };
    },
  );

  scope.get<{ Params: { id: string } }>('/console/api/requests/:id', async (request) => {
    const found = await deps.requestListing.listForAccount(
      memberAccountOf(request),
      { ...parseListDefaults(), limit: 1 },
      { requestId: request.params.id },
    );
    const record = found.data[0];
    if (record === undefined) throw recordNotFound();
    const [named]: (OwnerRequestSummary | undefined)[] = await withKeyNames(deps.store.db, [
      record,
    ]);
    return named;
  });
}

function parseListDefaults(): RequestListFilter {
  const parsed = parseRequestsQuery({});
  if (parsed.mode !== 'list') throw new Error('an empty query is a list');
  return parsed.filter;
}
