import type { FastifyInstance } from 'fastify';
import { invalidInput, notFound } from '../../errors/api-error.js';
import type { AppDeps } from '../deps.js';

const switchBody = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: { reason: {} },
} as const;

/**
 * Operators' channel routes under `/admin/v1` (docs/routing.md): every channel with its state
 * (disabled, breaker, in flight), and manual disable and enable. A disabled channel is skipped
 * by every instance within the disabled list's refresh; its requests in flight finish.
 */
export function registerAdminChannels(scope: FastifyInstance, deps: AppDeps): void {
  scope.get('/admin/v1/channels', async () => ({
    object: 'list',
    data: await deps.channels.list(),
  }));
  for (const action of ['disable', 'enable'] as const) {
    scope.post<{ Params: { id: string }; Body: { reason?: unknown } | null | undefined }>(
      `/admin/v1/channels/:id/${action}`,
      { schema: { body: switchBody } },
      async (request) => {
        const reason = request.body?.reason;
        if (reason !== undefined && (typeof reason !== 'string' || reason.length > 500))
          throw invalidInput('reason', 'must be a string of at most 500 characters');
        const status = await deps.channels.setDisabled(
          request.params.id,
          action === 'disable',
          reason ?? null,
        );
        if (status === undefined) throw notFound('channel');
        return status;
      },
    );
  }
}
