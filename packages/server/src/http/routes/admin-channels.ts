import type { FastifyInstance } from 'fastify';
import { parseInput } from '../../errors/input-schema.js';
import type { OperatorActions } from '../../operator/operator-actions.js';
import { channelSwitchInput } from '../../operator/operator-inputs.js';
import type { AppDeps } from '../deps.js';
import { adminActor } from './admin-audit.js';
import { adminBodyOf } from './admin-bodies.js';

const switchBody = adminBodyOf(channelSwitchInput, { absent: true });

/**
 * Operators' channel routes under `/admin/v1` (docs/routing.md): every channel with its state
 * (disabled, breaker, in flight), and manual disable and enable. A disabled channel is skipped
 * by every instance within the disabled list's refresh; its requests in flight finish. Both
 * switches are audited (`OperatorActions`).
 */
export function registerAdminChannels(
  scope: FastifyInstance,
  deps: AppDeps,
  operator: OperatorActions,
): void {
  scope.get('/admin/v1/channels', async () => ({
    object: 'list',
    data: await deps.channels.list(),
  }));
  for (const action of ['disable', 'enable'] as const) {
    scope.post<{ Params: { id: string }; Body: unknown }>(
      `/admin/v1/channels/:id/${action}`,
      { schema: { body: switchBody } },
      async (request) =>
        operator.setChannelDisabled(
          adminActor(request),
          request.params.id,
          action === 'disable',
          parseInput(channelSwitchInput, request.body ?? {}),
        ),
    );
  }
}
