import type { FastifyRequest } from 'fastify';
import type { AuditActor } from '../../audit/audit-log.js';
import { ApiError } from '../../errors/api-error.js';
import { identityOf } from './console-auth.js';

/**
 * The signed-in operator, as the audit log names them. A member is refused with the same 403 on
 * every operator route, whatever it names (an account, a share, a record that exists or not),
 * so a member learns nothing about other accounts from them. `requireTotp` is
 * `server.console_require_operator_totp`.
 */
export function operatorActorOf(request: FastifyRequest, requireTotp: boolean): AuditActor {
  const { user, session } = identityOf(request);
  if (user.role !== 'operator')
    throw new ApiError('PERMISSION_DENIED', 'this page is for operators');
  // `server.console_require_operator_totp`: a session that did not prove the second factor
  // opens no operator page (it can still set one up: POST /console/api/totp).
  if (requireTotp && session.totp_verified_at === null)
    throw new ApiError(
      'PERMISSION_DENIED',
      'operators sign in with a second factor here: set one up (POST /console/api/totp), then sign in with it',
      'totp',
    );
  return { kind: 'console_user', id: user.id, email: user.email, address: request.clientAddress };
}
