import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { jsonSchemaOf } from '../../errors/input-schema.js';
import type { AppDeps } from '../deps.js';
import { parseLimit } from '../../util/list-page.js';
import { decodeJournalPosition, parseStatementPeriod } from '../../usage/statement.js';
import {
  renderStatement,
  STATEMENT_CONTENT_TYPES,
  statementFileName,
} from '../../usage/statement-output.js';
import { Wallets } from '../../usage/wallet.js';
import { memberAccountOf } from './console-auth.js';

/** A period of UTC days (`YYYY-MM-DD`, both included), as the statements take it. */
const periodQuery = z.strictObject({
  from: z.string().max(10).optional(),
  to: z.string().max(10).optional(),
});
const statementCsvQuerySchema = jsonSchemaOf(periodQuery);
type PeriodQuery = z.output<typeof periodQuery>;

/** The movements' query: a period, and a page of it (each parameter once, no other: 400 naming it). */
const movementsQuery = periodQuery.extend({
  cursor: z.string().max(200).optional(),
  limit: z.string().optional(),
});
const movementsQuerySchema = jsonSchemaOf(movementsQuery);
type MovementsQuery = z.output<typeof movementsQuery>;

/**
 * The member's wallet (docs/console.md, "Wallet"): the account's money and its open holds
 * explained, the journal of a period with the running balance, and that period as CSV — the
 * account statement's own reader (usage/statement.ts, scope `wallet`) and writer
 * (usage/statement-output.ts), bounded to the member's account. The role is checked before the
 * query is validated, so an operator is 403 whatever the query.
 */
export function registerCallerWalletRoutes(
  scope: FastifyInstance,
  deps: Pick<AppDeps, 'store' | 'accounts' | 'statements' | 'clock'>,
): void {
  const wallets = new Wallets(deps.store.db, deps.accounts);
  const memberFirst = {
    preValidation: async (request: Parameters<typeof memberAccountOf>[0]) =>
      void memberAccountOf(request),
  };

  scope.get('/console/api/wallet', async (request) => wallets.read(memberAccountOf(request)));

  scope.get<{ Querystring: MovementsQuery }>(
    '/console/api/wallet/movements',
    { schema: { querystring: movementsQuerySchema }, ...memberFirst },
    async (request) => {
      const accountId = memberAccountOf(request);
      const period = parseStatementPeriod(request.query, deps.clock.now());
      const { cursor, limit } = request.query;
      return deps.statements.walletPage(
        accountId,
        period,
        cursor === undefined ? null : decodeJournalPosition(cursor),
        parseLimit(limit, 50),
      );
    },
  );

  scope.get<{ Querystring: PeriodQuery }>(
    '/console/api/wallet/statement.csv',
    {
      schema: { querystring: statementCsvQuerySchema },
      // No automatic HEAD: it would read the whole period only to send no body.
      exposeHeadRoute: false,
      ...memberFirst,
    },
    async (request, reply) => {
      const accountId = memberAccountOf(request);
      const statement = await deps.statements.prepare(
        accountId,
        parseStatementPeriod(request.query, deps.clock.now()),
        'wallet',
      );
      return reply
        .type(STATEMENT_CONTENT_TYPES.csv)
        .header(
          'content-disposition',
          `attachment; filename="${statementFileName(statement, 'csv')}"`,
        )
        .header('cache-control', 'private, no-store')
        .send(Readable.from(renderStatement(statement, 'csv'), { objectMode: false }));
    },
  );
}
