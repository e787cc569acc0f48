import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { answerChat, parseChatBody } from './chat.js';
import { readDialectBody, type SimulatorDialect } from './chat-dialects.js';
import { checkContinuity, signedAnswer } from './chat-continuity.js';
import { completionBody, streamChat } from './chat-wire.js';
import { checkAnthropicHeaders, refuseAnthropicBeta } from './anthropic-headers.js';
import { parseDirectives, type Directives } from './directives.js';
import { embeddingsResponse, parseEmbeddingsBody } from './embeddings.js';
import { SIMULATOR_LIMITS } from './limits.js';
import { LruMemory } from './lru-memory.js';
import { parseMessagesBody } from './messages-request.js';
import { messageObject, streamMessage, type MessageObject } from './messages-wire.js';
import { OpaqueState } from './opaque-state.js';
import { applyPromptCache } from './prompt-cache.js';
import { parseRerankBody, rerankResponse } from './rerank.js';
import { parseCompactBody, parseResponsesBody } from './responses-request.js';
import {
  compactionObject,
  responseObject,
  streamResponse,
  type ResponseObject,
  type ResponsesCaller,
} from './responses-wire.js';
import { answerTurn, inputTokensOf } from './turn.js';
import { ANTHROPIC_ERRORS, CHAT_ERRORS, OPENAI_ERRORS, type ErrorDialect } from './wire-error.js';

/** What the text routes remember across requests, per simulator: opaque-state keys and caches. */
export interface TextState {
  opaque: OpaqueState;
  /** Anthropic prompt-cache prefixes, per organisation (prompt-cache.ts). */
  promptCache: LruMemory;
  /** Responses reasoning items answered with `store` on, per organisation. */
  storedItems: LruMemory;
  now: () => number;
}

export function createTextState(secret: string | Buffer | undefined, now: () => number): TextState {
  return {
    opaque: new OpaqueState(secret),
    promptCache: new LruMemory(SIMULATOR_LIMITS.promptCacheEntries, now),
    storedItems: new LruMemory(SIMULATOR_LIMITS.storedReasoningItems, now),
    now,
  };
}

export interface RouteContext {
  headers: IncomingHttpHeaders;
  /** The caller's API key (opaque-state.ts `callerKeyOf`): its organisation. */
  callerKey: string;
  state: TextState;
  /** The provider the chat route answers as (`/dialect/<name>/v1`: chat-dialects.ts). */
  dialect: SimulatorDialect;
}

/**
 * What a route does with a parsed body: its directives, and the answer (computed once, after the
 * exchange's faults; its `usage` is what the request look-up reports) to send as JSON or to
 * stream. Throws `WireError`, `BadRequest` or `DirectiveError` to refuse the request.
 */
export interface Handled {
  directives: Directives;
  answer: () => unknown;
  stream?: (response: ServerResponse, answered: unknown) => Promise<void>;
}

export interface TextRoute {
  errors: ErrorDialect;
  /** Header checks, before the body is parsed. Throws `WireError`. */
  headers?: (headers: IncomingHttpHeaders) => void;
  handle: (body: unknown, context: RouteContext) => Handled;
}

const STORED_ITEM_MS = 30 * 24 * 60 * 60_000;

function responsesCaller(context: RouteContext): ResponsesCaller {
  const { state, callerKey } = context;
  const organisation = state.opaque.organisation(callerKey);
  return {
    state: state.opaque,
    callerKey,
    store: (id) => state.storedItems.remember(`${organisation}:${id}`, STORED_ITEM_MS),
    now: state.now,
  };
}

function opaqueCheck(context: RouteContext) {
  const { state, callerKey } = context;
  const organisation = state.opaque.organisation(callerKey);
  return {
    state: state.opaque,
    callerKey,
    stored: (id: string) => state.storedItems.has(`${organisation}:${id}`),
  };
}

/** The text routes by path: OpenAI chat, Responses, embeddings, Cohere rerank, Anthropic Messages. */
export const TEXT_ROUTES: Record<string, TextRoute> = {
  '/v1/embeddings': {
    errors: CHAT_ERRORS,
    handle: (body) => {
      const input = parseEmbeddingsBody(body);
      const { directives, cleaned } = parseDirectives(input.texts);
      return { directives, answer: () => embeddingsResponse(input, cleaned, directives) };
    },
  },
  '/v1/chat/completions': {
    errors: CHAT_ERRORS,
    headers: refuseAnthropicBeta,
    handle: (body, { dialect, state, callerKey }) => {
      const input = parseChatBody(readDialectBody(dialect, body));
      const signer = { state: state.opaque, callerKey };
      checkContinuity(dialect, body, input.thinking, signer);
      const { directives, cleaned } = parseDirectives(input.texts);
      const answer = () => signedAnswer(dialect, answerChat(input, cleaned, directives), signer);
      if (input.stream)
        return {
          directives,
          answer,
          stream: (response, answered) =>
            streamChat(
              response,
              input,
              answered as ReturnType<typeof answerChat>,
              directives,
              dialect,
            ),
        };
      return { directives, answer: () => completionBody(input, answer(), dialect) };
    },
  },
  '/v1/rerank': {
    errors: CHAT_ERRORS,
    handle: (body) => {
      const input = parseRerankBody(body);
      const { directives, cleaned } = parseDirectives([input.query, ...input.documents]);
      const [query = '', ...documents] = cleaned;
      return { directives, answer: () => rerankResponse(input, query, documents, directives) };
    },
  },
  '/v1/responses': {
    errors: OPENAI_ERRORS,
    headers: refuseAnthropicBeta,
    handle: (body, context) => {
      const input = parseResponsesBody(body, opaqueCheck(context));
      const { directives, cleaned } = parseDirectives(input.texts);
      const answer = () =>
        responseObject(
          input,
          answerTurn(input, cleaned, directives),
          responsesCaller(context),
          directives.serviceTier,
        );
      return {
        directives,
        answer,
        ...(input.stream
          ? {
              stream: (response: ServerResponse, answered: unknown) =>
                streamResponse(response, answered as ResponseObject, directives),
            }
          : {}),
      };
    },
  },
  '/v1/responses/compact': {
    errors: OPENAI_ERRORS,
    headers: refuseAnthropicBeta,
    handle: (body, context) => {
      const turn = parseCompactBody(body, opaqueCheck(context));
      const { directives, cleaned } = parseDirectives(turn.texts);
      return {
        directives,
        answer: () => compactionObject(turn, cleaned, directives, responsesCaller(context)),
      };
    },
  },
  '/v1/messages': {
    errors: ANTHROPIC_ERRORS,
    headers: checkAnthropicHeaders,
    handle: (body, context) => {
      const { state, callerKey } = context;
      const input = parseMessagesBody(body, { state: state.opaque, callerKey }, false);
      const { directives, cleaned } = parseDirectives(input.texts);
      const answer = () => {
        const cache = applyPromptCache(
          input.breakpoints,
          cleaned,
          state.promptCache,
          state.opaque.organisation(callerKey),
        );
        return messageObject(
          input.model,
          answerTurn(input, cleaned, directives),
          cache,
          { state: state.opaque, callerKey },
          directives.serviceTier,
        );
      };
      return {
        directives,
        answer,
        ...(input.stream
          ? {
              stream: (response: ServerResponse, answered: unknown) =>
                streamMessage(response, answered as MessageObject, directives),
            }
          : {}),
      };
    },
  },
  '/v1/messages/count_tokens': {
    errors: ANTHROPIC_ERRORS,
    headers: checkAnthropicHeaders,
    handle: (body, context) => {
      const { state, callerKey } = context;
      const input = parseMessagesBody(body, { state: state.opaque, callerKey }, true);
      const { directives, cleaned } = parseDirectives(input.texts);
      return { directives, answer: () => ({ input_tokens: inputTokensOf(input, cleaned) }) };
    },
  },
};
