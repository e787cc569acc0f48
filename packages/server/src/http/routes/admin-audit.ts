import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AuditActor } from '../../audit/audit-log.js';
import { jsonSchemaOf, parseInput } from '../../errors/input-schema.js';
import type { OperatorActions } from '../../operator/operator-actions.js';
import { invitationInput } from '../../operator/operator-inputs.js';
import type { AppDeps } from '../deps.js';
import { adminBodyOf } from './admin-bodies.js';

/** The admin token names no person: the audit row keeps the address it was used from. */
export function adminActor(request: FastifyRequest): AuditActor {
  return { kind: 'admin_token', address: request.clientAddress };
}

/** `GET /admin/v1/audit` filters, and no other (400 naming it); the log judges their values. */
const auditQuery = z.strictObject({
  account_id: z.unknown().optional(),
  action: z.unknown().optional(),
  limit: z.unknown().optional(),
  after: z.unknown().optional(),
});
const auditQuerySchema = jsonSchemaOf(auditQuery);
type AuditQueryString = z.output<typeof auditQuery>;

/**
 * The audit log and console invitations under `/admin/v1` (docs/audit.md, docs/console.md);
 * registered inside the admin scope, behind its token.
 */
export function registerAdminAudit(
  scope: FastifyInstance,
  deps: AppDeps,
  operator: OperatorActions,
): void {
  scope.get<{ Querystring: AuditQueryString }>(
    '/admin/v1/audit',
    { schema: { querystring: auditQuerySchema } },
    async (request) => deps.audit.list(request.query),
  );
  scope.post<{ Body: unknown }>(
    '/admin/v1/invitations',
    { schema: { body: adminBodyOf(invitationInput) } },
    async (request, reply) => {
      void reply.code(201);
      return operator.invite(adminActor(request), parseInput(invitationInput, request.body));
    },
  );
}
