import type { FastifyInstance } from 'fastify';
import type { OperatorActions } from '../../operator/operator-actions.js';
import type { AppDeps } from '../deps.js';
import { adminActor } from './admin-audit.js';

/** Disable and enable take no body: an absent one, `{}`, or `null`; any field is 400 naming it. */
const noFields = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {},
} as const;

/**
 * Console users under `/admin/v1` (docs/admin.md, docs/console.md "Taking access away"): the
 * list (or the user of one address), and disable / enable, audited through `OperatorActions`.
 * Disabling ends the user's sessions on every instance at once, voids their invitation links
 * and refuses their sign-in; the last operator who can sign in cannot be disabled here (403).
 */
export function registerAdminUsers(
  scope: FastifyInstance,
  deps: AppDeps,
  operator: OperatorActions,
): void {
  scope.get<{ Querystring: Record<string, string | undefined> }>(
    '/admin/v1/users',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { email: {}, limit: {}, after: {} },
        },
      },
    },
    async (request) => deps.consoleUsers.list(request.query),
  );
  for (const action of ['disable', 'enable'] as const)
    scope.post<{ Params: { id: string } }>(
      `/admin/v1/users/:id/${action}`,
      { schema: { body: noFields } },
      async (request) =>
        operator.setUserDisabled(adminActor(request), request.params.id, action === 'disable'),
    );
}
