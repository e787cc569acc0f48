import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  parseStatementPeriod,
  statementQuerySchema,
  type StatementQueryString,
} from '../../usage/statement.js';
import {
  renderStatement,
  STATEMENT_CONTENT_TYPES,
  statementFileName,
  statementFormat,
} from '../../usage/statement-output.js';
import type { AppDeps } from '../deps.js';

/**
 * The route options every statement route shares: the query schema (`from`, `to`, `format`),
 * and no automatic HEAD (it would read the whole period only to send no body).
 */
export const statementRouteOptions = {
  schema: { querystring: statementQuerySchema },
  exposeHeadRoute: false,
} as const;

/**
 * Answers one account's statement (docs/usage.md, "Statements"): every balance movement of a
 * period, as JSON or CSV, written while it is read (a month of a busy account is never held in
 * memory whole). The caller has already decided who may read `accountId`.
 */
export async function answerStatement(
  deps: Pick<AppDeps, 'statements' | 'clock'>,
  request: FastifyRequest<{ Querystring: StatementQueryString }>,
  reply: FastifyReply,
  accountId: string,
): Promise<Readable> {
  const format = statementFormat(request.query.format, request.headers.accept);
  const statement = await deps.statements.prepare(
    accountId,
    parseStatementPeriod(request.query, deps.clock.now()),
  );
  void reply.type(STATEMENT_CONTENT_TYPES[format]);
  if (format === 'csv')
    void reply.header(
      'content-disposition',
      `attachment; filename="${statementFileName(statement, format)}"`,
    );
  return Readable.from(renderStatement(statement, format), { objectMode: false });
}

/**
 * `GET /admin/v1/accounts/{id}/statement`, registered inside the admin scope, behind its token
 * (the console's operator pages answer the same statement: http/console/operator-routes.ts).
 */
export function registerAdminStatements(admin: FastifyInstance, deps: AppDeps): void {
  admin.get<{ Params: { id: string }; Querystring: StatementQueryString }>(
    '/admin/v1/accounts/:id/statement',
    statementRouteOptions,
    async (request, reply) => answerStatement(deps, request, reply, request.params.id),
  );
}
