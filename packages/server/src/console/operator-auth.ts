import type { FastifyRequest } from 'fastify';
import type { AuditActor } from '../audit/audit-log.js';
import { ApiError } from '../errors/api-error.js';
import { identityOf } from './console-auth.js';

/**
 * The signed-in operator, as the audit log names them. A member is refused with the same 403 on
 * every operator route, whatever it names (an account, a share, a record that exists or not),
 * so a member learns nothing about other accounts from them.
 */
export function operatorActorOf(request: FastifyRequest): AuditActor {
  const { user } = identityOf(request);
  if (user.role !== 'operator')
    throw new ApiError('PERMISSION_DENIED', 'this page is for operators');
  return { kind: 'console_user', id: user.id, email: user.email, address: request.ip };
}
