import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import {
  imageBodySchema,
  parseTaskBody,
  videoBodySchema,
  type TaskBody,
} from '../../families/media/media-input.js';
import type { H3SettleBody } from '@tollgate/protocol';
import type { TaskKind } from '../../store/schema.js';
import { settleBodySchema, type SettleBody } from '../../tasks/task-settlement.js';
import { requestIdentity } from '../billed-request.js';
import type { AppDeps } from '../deps.js';
import { principalOf } from '../plugins/authenticate.js';
import { answerClaim as answer } from '../claim-answer.js';
import { serveContent } from '../serve-content.js';
import { refuseQueryString, SETTLE_BODY_LIMIT } from '../settle-rules.js';

const KINDS = [
  { kind: 'image', base: '/v1/images', create: '/v1/images/generations', schema: imageBodySchema },
  { kind: 'video', base: '/v1/videos', create: '/v1/videos', schema: videoBodySchema },
] as const;

/**
 * Image and video tasks (docs/tasks.md): read-only quotes, creation (202 with the task),
 * reads and settlement by the creating key, and video content once delivered. Routes parse,
 * call one service, answer.
 */
export function registerTasks(scope: FastifyInstance, deps: AppDeps): void {
  for (const { kind, base, create, schema } of KINDS) {
    // A quote is read-only: nothing recorded, so no key to judge (plugins/idempotency-guard.ts).
    scope.post<{ Body: TaskBody }>(
      `${base}/quote`,
      { config: { businessPost: false }, schema: { body: schema } },
      async (request) => deps.tasks.quote(principalOf(request), parseTaskBody(kind, request.body)),
    );

    scope.post<{ Body: TaskBody }>(create, { schema: { body: schema } }, async (request, reply) => {
      const identity = requestIdentity(request, request.body.model);
      return answer(reply, await deps.tasks.create(identity, parseTaskBody(kind, request.body)));
    });

    scope.get<{ Params: { id: string } }>(`${base}/:id`, async (request) =>
      deps.tasks.read(principalOf(request), kind, request.params.id),
    );

    registerSettle(scope, deps, { kind, path: `${base}/:id/settle`, schema: settleBodySchema });
  }

  registerTaskContent(scope, deps, { kind: 'video', path: '/v1/videos/:id/content' });
}

/**
 * `POST <path>` settling a task of `kind` with the exact body of spec 4.3 / 4.5 (`schema` holds
 * the family's confirmation word): 4096 bytes at most, JSON, no query string.
 */
export function registerSettle(
  scope: FastifyInstance,
  deps: AppDeps,
  route: { kind: TaskKind; path: string; schema: object },
): void {
  scope.post<{ Params: { id: string }; Body: SettleBody | H3SettleBody }>(
    route.path,
    { bodyLimit: SETTLE_BODY_LIMIT, schema: { body: route.schema } },
    async (request, reply) => {
      refuseQueryString(request);
      try {
        const claim = await deps.taskSettlement.settle(
          requestIdentity(request, null),
          { kind: route.kind, id: request.params.id },
          request.body,
        );
        deps.metrics.taskSettlements.inc({ outcome: 'settled' });
        return answer(reply, claim);
      } catch (error) {
        const insufficient = error instanceof ApiError && error.code === 'INSUFFICIENT_FUNDS';
        deps.metrics.taskSettlements.inc({
          outcome: insufficient ? 'insufficient_funds' : 'refused',
        });
        throw error;
      }
    },
  );
}

/** `GET`/`HEAD <path>`: a delivered task's video, by its creating key only, with Range. */
export function registerTaskContent(
  scope: FastifyInstance,
  deps: AppDeps,
  route: { kind: TaskKind; path: string },
): void {
  const content = async (
    request: FastifyRequest<{ Params: { id: string } }>,
    reply: FastifyReply,
  ) => {
    const asset = await deps.taskReads.deliveredOutput(
      principalOf(request),
      route.kind,
      request.params.id,
    );
    return serveContent(request, reply, deps.assets, asset);
  };
  scope.get<{ Params: { id: string } }>(route.path, { exposeHeadRoute: false }, content);
  scope.head<{ Params: { id: string } }>(route.path, content);
}
