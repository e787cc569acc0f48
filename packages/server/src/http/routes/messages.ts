import type { FastifyInstance } from 'fastify';
import type { AnthropicTokenCount } from '@tollgate/protocol';
import { Conversations } from '../../chat/conversations.js';
import { validateChat } from '../../chat/validate-chat.js';
import { staleAfterMs } from '../../requests/record-ages.js';
import { runChatTurn } from '../chat-turn.js';
import type { AppDeps } from '../deps.js';
import { judgedAtClaim } from '../idempotency-judgement.js';
import { principalOf } from '../plugins/authenticate.js';
import { anthropicErrorAnswers } from '../dialects/messages/anthropic-errors.js';
import { droppedBetaNames, requestedBetas } from '../dialects/messages/anthropic-headers.js';
import { inMessagesTerms, upstreamPromptTooLong } from '../dialects/messages/chat-error-paths.js';
import { estimatedInputTokens } from '../../chat/token-estimate.js';
import { messagesDialect } from '../dialects/messages/messages-dialect.js';
import { parseInput } from '../../errors/input-schema.js';
import {
  countTokensBodySchema,
  messagesBodySchema,
} from '../dialects/messages/messages-request.js';
import { toChatBody } from '../dialects/messages/to-chat-body.js';
import type { ModelConfig } from '../../config/schema.js';
import type { ApiError } from '../../errors/api-error.js';

/**
 * Anthropic's Messages API (docs/anthropic-messages.md), for Claude Code and Anthropic's SDKs:
 * `POST /v1/messages` is one chat turn (the same hold, billing, record and replays as
 * `/v1/chat/completions`) with the body translated to the internal chat request, and
 * `POST /v1/messages/count_tokens` an estimate that moves no money and records nothing. Every
 * error of both leaves in Anthropic's shape (`anthropicErrorAnswers`); a context too long for
 * the model, the gateway's finding or its provider's, in Anthropic's words (chat-error-paths.ts).
 */
export function registerMessages(scope: FastifyInstance, deps: AppDeps): void {
  const conversations = new Conversations(deps.store.db, deps.clock, staleAfterMs(deps.config));
  const turn = judgedAtClaim(deps.requests.records, {}, async (request, reply) => {
    const body = parseInput(messagesBodySchema, request.body);
    const translated = toChatBody(body);
    const betas = requestedBetas(request);
    const anthropicChannel = deps.channels.modelSpeaks(body.model, 'messages');
    try {
      return await runChatTurn(deps, conversations, request, reply, {
        body: translated.body,
        dialect: messagesDialect({
          shown:
            body.thinking === undefined ||
            !('display' in body.thinking) ||
            body.thinking.display !== 'omitted',
        }),
        dropped: [
          ...translated.dropped,
          ...(anthropicChannel ? [] : droppedBetaNames(betas.names)),
        ],
        opaque: translated.opaque,
        anthropicBeta: betas.header,
        inCallerTerms: (error) => inMessagesTerms(error, translated.origins) as ApiError,
        // A provider's context-length refusal reads as Anthropic's, sized as count_tokens counts it.
        contextTooLong: upstreamPromptTooLong,
      });
    } catch (error) {
      throw inMessagesTerms(error, translated.origins);
    }
  });
  scope.post('/v1/messages', {
    ...turn,
    config: { ...turn.config, acceptsXApiKey: true },
    onSend: anthropicErrorAnswers,
  });

  scope.post(
    '/v1/messages/count_tokens',
    // Read-only: no Idempotency-Key needed, nothing held or recorded (as the quotes).
    { config: { businessPost: false, acceptsXApiKey: true }, onSend: anthropicErrorAnswers },
    async (request): Promise<AnthropicTokenCount> => {
      const body = parseInput(countTokensBodySchema, request.body);
      const model = deps.catalog.resolve(principalOf(request), body.model, 'chat');
      const translated = toChatBody(body);
      try {
        return { input_tokens: estimatedTokensOf(translated.body, model) };
      } catch (error) {
        throw inMessagesTerms(error, translated.origins);
      }
    },
  );
}

/**
 * count_tokens' estimate of a translated body (chat/token-estimate.ts): validated as a message
 * would be, and counted whatever its size (the size limit is the answer's, not the count's).
 */
function estimatedTokensOf(body: Record<string, unknown> | undefined, model: ModelConfig): number {
  const chat = validateChat(body, { ...model, max_input_bytes: Number.MAX_SAFE_INTEGER });
  return estimatedInputTokens(chat, model);
}
