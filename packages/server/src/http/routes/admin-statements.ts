import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { parseStatementPeriod, statementQuerySchema } from '../../usage/statement.js';
import {
  renderStatement,
  STATEMENT_CONTENT_TYPES,
  statementFileName,
  statementFormat,
  type StatementFormat,
} from '../../usage/statement-output.js';
import type { AppDeps } from '../deps.js';

/**
 * `GET /admin/v1/accounts/{id}/statement` (docs/usage.md, "Statements"): every balance movement
 * of a period, as JSON or CSV, written while it is read (a month of a busy account is never
 * held in memory whole). Registered inside the admin scope, behind its token.
 */
export function registerAdminStatements(admin: FastifyInstance, deps: AppDeps): void {
  admin.get<{
    Params: { id: string };
    Querystring: { from?: string; to?: string; format?: StatementFormat };
  }>(
    '/admin/v1/accounts/:id/statement',
    // No automatic HEAD: it would read the whole period only to send no body.
    { schema: { querystring: statementQuerySchema }, exposeHeadRoute: false },
    async (request, reply) => {
      const format = statementFormat(request.query.format, request.headers.accept);
      const statement = await deps.statements.prepare(
        request.params.id,
        parseStatementPeriod(request.query, deps.clock.now()),
      );
      void reply.type(STATEMENT_CONTENT_TYPES[format]);
      if (format === 'csv')
        void reply.header(
          'content-disposition',
          `attachment; filename="${statementFileName(statement, format)}"`,
        );
      return Readable.from(renderStatement(statement, format), { objectMode: false });
    },
  );
}
