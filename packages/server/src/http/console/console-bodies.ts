import type {
  FastifyInstance,
  FastifyRequest,
  preValidationAsyncHookHandler,
  RouteOptions,
} from 'fastify';
import { openApiPath } from '../openapi/route-catalog.js';
import { memberAccountOf } from './console-auth.js';
import { CONSOLE_OPERATIONS, type ConsoleAccess } from './console-operations.js';
import { operatorActorOf } from './operator-auth.js';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A body that may carry these fields and no other, the mechanism of `/v1` and `/admin/v1`: an
 * unknown field is 400 `INVALID_INPUT` naming it (`body.allowed_ips is not a known field`)
 * instead of being dropped. An absent body (validated as `null`) is left to the route, which
 * answers it as before; any other non-object is 400 naming `body`.
 */
export function closedBody(fields: readonly string[]) {
  return {
    type: 'object',
    nullable: true,
    additionalProperties: false,
    properties: Object.fromEntries(fields.map((field) => [field, {}])),
  } as const;
}

/**
 * Every console write route refuses body fields it does not take (docs/console.md, "Unknown
 * fields"). Registered on the console's scope before its routes: each POST, PUT, PATCH and
 * DELETE gets the closed schema of its row in console-operations.ts (its `body` fields, none
 * when it has no `body`) unless the route has a body schema of its own or the row says its body
 * is checked elsewhere. A route whose body is checked this way also checks its role in
 * `preValidation`, so a member on an operator route (or an operator on a member route) is 403
 * before anything of the body is read, as before.
 */
export function refuseUnknownBodyFields(
  scope: FastifyInstance,
  requireOperatorTotp: boolean,
): void {
  const roleChecks: Partial<Record<ConsoleAccess, (request: FastifyRequest) => unknown>> = {
    member: memberAccountOf,
    operator: (request) => operatorActorOf(request, requireOperatorTotp),
  };
  scope.addHook('onRoute', (route: RouteOptions) => {
    const methods = [route.method].flat();
    if (!methods.some((method) => WRITE_METHODS.has(method))) return;
    if (route.schema?.body !== undefined) return;
    const operation = methods
      .map((method) => CONSOLE_OPERATIONS[`${method} ${openApiPath(route.url)}`])
      .find((found) => found !== undefined);
    // A route without a row stops the gateway from starting (console-openapi.ts).
    if (operation === undefined || operation.unknownFields !== undefined) return;
    route.schema = { ...route.schema, body: closedBody(operation.body ?? []) };
    const check = roleChecks[operation.access];
    if (check === undefined) return;
    const roleFirst: preValidationAsyncHookHandler = async (request) => {
      check(request);
    };
    route.preValidation = [...[route.preValidation ?? []].flat(), roleFirst];
  });
}
