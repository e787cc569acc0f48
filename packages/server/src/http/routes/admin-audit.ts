import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditActor } from '../../audit/audit-log.js';
import type { OperatorActions } from '../../operator/operator-actions.js';
import type { AppDeps } from '../deps.js';

/** The admin token names no person: the audit row keeps the address it was used from. */
export function adminActor(request: FastifyRequest): AuditActor {
  return { kind: 'admin_token', address: request.clientAddress };
}

/**
 * The audit log and console invitations under `/admin/v1` (docs/audit.md, docs/console.md);
 * registered inside the admin scope, behind its token.
 */
export function registerAdminAudit(
  scope: FastifyInstance,
  deps: AppDeps,
  operator: OperatorActions,
): void {
  scope.get<{ Querystring: Record<string, string | undefined> }>(
    '/admin/v1/audit',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { account_id: {}, action: {}, limit: {}, after: {} },
        },
      },
    },
    async (request) => deps.audit.list(request.query),
  );
  scope.post<{ Body: Record<string, unknown> }>(
    '/admin/v1/invitations',
    {
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { email: {}, role: {}, account_id: {} },
        },
      },
    },
    async (request, reply) => {
      void reply.code(201);
      return operator.invite(adminActor(request), request.body);
    },
  );
}
