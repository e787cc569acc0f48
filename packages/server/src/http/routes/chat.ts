import type { FastifyInstance } from 'fastify';
import { Conversations } from '../../chat/conversations.js';
import { judgedAtClaim } from '../idempotency-judgement.js';
import type { AppDeps } from '../deps.js';
import { staleAfterMs } from '../../requests/record-ages.js';
import { runChatTurn } from '../chat-turn.js';
import { chatCompletionsDialect } from '../dialects/chat-completions.js';

/** `POST /v1/chat/completions`, OpenAI-compatible: the body is the internal chat request as is. */
export function registerChat(scope: FastifyInstance, deps: AppDeps): void {
  const conversations = new Conversations(deps.store.db, deps.clock, staleAfterMs(deps.config));
  scope.post(
    '/v1/chat/completions',
    judgedAtClaim(deps.requests.records, {}, (request, reply) =>
      runChatTurn(deps, conversations, request, reply, {
        body: request.body as Record<string, unknown> | undefined,
        dialect: chatCompletionsDialect,
      }),
    ),
  );
}
