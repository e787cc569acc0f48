import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { jsonSchemaOf } from '../../errors/input-schema.js';
import type { OperatorActions } from '../../operator/operator-actions.js';
import type { AppDeps } from '../deps.js';
import { adminActor } from './admin-audit.js';
import { adminBodyOf } from './admin-bodies.js';

/** Disable and enable take no body: an absent one, `{}`, or `null`; any field is 400 naming it. */
const noFields = adminBodyOf(z.strictObject({}), { absent: true });

/** `GET /admin/v1/users` parameters, and no other (400 naming it); the list judges their values. */
const userListQuery = z.strictObject({
  email: z.unknown().optional(),
  limit: z.unknown().optional(),
  after: z.unknown().optional(),
});
const userListQuerySchema = jsonSchemaOf(userListQuery);
type UserListQueryString = z.output<typeof userListQuery>;

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
  scope.get<{ Querystring: UserListQueryString }>(
    '/admin/v1/users',
    { schema: { querystring: userListQuerySchema } },
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
