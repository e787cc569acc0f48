import { errorStatus } from '@tollgate/protocol';
import type { z } from 'zod';
import { responsesBodySchema } from '../dialects/responses/responses-request.js';
import {
  countTokensBodySchema,
  messagesBodySchema,
} from '../dialects/messages/messages-request.js';

/**
 * What each `/v1` operation answers, by status: the protocol type of each success body (its
 * JSON Schema is generated from packages/protocol, `wireSchemas`), and the error statuses the
 * operation can give (each documented with the `ErrorBody` codes of that status, from
 * `errorStatus`). The request side is not here: it is the route's own schema, as Fastify
 * validates with it. A `/v1` route missing from this table makes the document fail to build.
 */
export type Success =
  | { readonly json: string | readonly string[] }
  /**
   * `stream: true` answers server-sent events: `data:` events of chat chunks ending in `[DONE]`
   * or an `ErrorBody`; with `named`, every event has an `event:` line and its data is one
   * `stream` object, the ending included (Responses, Anthropic Messages).
   */
  | { readonly stream: string; readonly json: string; readonly named?: true }
  | { readonly binary: true };

export interface Operation {
  readonly summary: string;
  readonly success: Readonly<Record<number, Success>>;
  readonly errors: readonly number[];
  /** A business POST: requires `Idempotency-Key`; a replay carries `Idempotent-Replayed`. */
  readonly idempotent?: true;
  /**
   * The route reads the body itself (no Fastify body schema): what it accepts; a zod schema is
   * the body's own (its JSON Schema is generated from it).
   */
  readonly body?: 'chat' | 'upload' | 'empty' | { readonly zod: z.ZodType };
  /** Fields may be taken and not sent upstream by a documented rule (`X-Tollgate-Dropped-Fields`). */
  readonly dropsFields?: true;
  /** Errors read in Anthropic's shape (`AnthropicErrorBody`) instead of the spec's. */
  readonly anthropicErrors?: true;
}

/**
 * Every `/v1` route can answer these (hygiene, authentication, rate limits, faults; 503 when the
 * database cannot be used, errors/database-outage.ts).
 */
const BASE = [400, 401, 404, 408, 429, 431, 500, 503] as const;
/** A route with a JSON body. */
const BODY = [...BASE, 413, 415] as const;
/** A billed call to an upstream. */
const BILLED = [...BODY, 402, 403, 409, 502, 504] as const;
/** Content downloads (Range, ETag). */
const CONTENT = [...BASE, 403, 409, 416] as const;
const binary: Success = { binary: true };
const content = { 200: binary, 206: binary, 304: binary };

export const OPERATIONS: Readonly<Record<string, Operation>> = {
  'GET /v1/models': {
    summary: 'Models this key may call',
    success: { 200: { json: 'ModelList' } },
    errors: BASE,
  },
  'GET /v1/account': {
    summary: 'The account and the budget of the calling key (personal keys)',
    success: { 200: { json: 'CallerAccount' } },
    errors: [...BASE, 403],
  },
  'POST /v1/redemptions': {
    summary: 'Redeem a code',
    success: { 200: { json: 'Account' } },
    errors: [...BODY, 403, 409],
  },
  'POST /v1/chat/completions': {
    summary: 'Chat completion (OpenAI-compatible)',
    success: { 200: { json: 'ChatCompletion', stream: 'ChatCompletionChunk' } },
    errors: BILLED,
    idempotent: true,
    body: 'chat',
    dropsFields: true,
  },
  'POST /v1/responses': {
    summary:
      'OpenAI Responses API on the chat core; `stream: true` answers its named events (docs/agents.md)',
    success: { 200: { json: 'ResponseObject', stream: 'ResponseStreamEvent', named: true } },
    errors: BILLED,
    idempotent: true,
    body: { zod: responsesBodySchema },
    dropsFields: true,
  },
  'POST /v1/responses/compact': {
    summary:
      'Compacts a Responses conversation for Codex CLI: a Responses channel compacts it itself, any other is asked for a summary (docs/agents.md, "Compaction"); never streamed',
    success: { 200: { json: 'ResponseCompaction' } },
    errors: BILLED,
    idempotent: true,
    body: { zod: responsesBodySchema },
    dropsFields: true,
  },
  'GET /v1/responses/{id}': {
    summary: 'A stored response of this key (not with `store: false`)',
    success: { 200: { json: 'ResponseObject' } },
    errors: BASE,
  },
  'POST /v1/messages': {
    summary:
      'Anthropic Messages API on the chat core; `stream: true` answers Anthropic’s named events, errors read in Anthropic’s shape (docs/anthropic-messages.md)',
    success: { 200: { json: 'AnthropicMessage', stream: 'AnthropicStreamEvent', named: true } },
    errors: BILLED,
    idempotent: true,
    body: { zod: messagesBodySchema },
    dropsFields: true,
    anthropicErrors: true,
  },
  'POST /v1/messages/count_tokens': {
    summary: 'An estimate of the input tokens of a Messages body; nothing billed or recorded',
    success: { 200: { json: 'AnthropicTokenCount' } },
    errors: [...BODY, 403],
    body: { zod: countTokensBodySchema },
    anthropicErrors: true,
  },
  'POST /v1/embeddings': {
    summary: 'Embeddings (OpenAI-compatible)',
    success: { 200: { json: 'EmbeddingList' } },
    errors: BILLED,
    idempotent: true,
  },
  'POST /v1/rerank': {
    summary: 'Rerank',
    success: { 200: { json: 'RerankResponse' } },
    errors: BILLED,
    idempotent: true,
  },
  'GET /v1/requests/{id}': {
    summary: 'The original request record',
    success: { 200: { json: 'RequestRecord' } },
    errors: BASE,
  },
  'GET /v1/requests': {
    summary: 'One record by idempotency key, or the list of this key’s records',
    success: { 200: { json: ['RequestRecord', 'RequestList'] } },
    errors: BASE,
  },
  'POST /v1/requests/{id}/settle': {
    summary: 'Settle an awaiting_funds record (empty body)',
    success: { 200: { json: 'RequestRecord' } },
    errors: [...BODY, 402, 409],
    idempotent: true,
    body: 'empty',
  },
  'POST /v1/images/quote': {
    summary: 'Quote an image task (read-only)',
    success: { 200: { json: 'Quote' } },
    errors: [...BODY, 403, 409],
  },
  'POST /v1/images/generations': {
    summary: 'Create an image task',
    success: { 202: { json: 'Task' } },
    errors: BILLED,
    idempotent: true,
  },
  'GET /v1/images/{id}': {
    summary: 'Read an image task',
    success: { 200: { json: 'Task' } },
    errors: BASE,
  },
  'POST /v1/images/{id}/settle': {
    summary: 'Settle an image task',
    success: { 200: { json: 'Task' } },
    errors: [...BODY, 402, 409],
    idempotent: true,
  },
  'POST /v1/videos/quote': {
    summary: 'Quote a video task (read-only)',
    success: { 200: { json: 'Quote' } },
    errors: [...BODY, 403, 409],
  },
  'POST /v1/videos': {
    summary: 'Create a video task',
    success: { 202: { json: 'Task' } },
    errors: BILLED,
    idempotent: true,
  },
  'GET /v1/videos/{id}': {
    summary: 'Read a video task',
    success: { 200: { json: 'Task' } },
    errors: BASE,
  },
  'POST /v1/videos/{id}/settle': {
    summary: 'Settle a video task',
    success: { 200: { json: 'Task' } },
    errors: [...BODY, 402, 409],
    idempotent: true,
  },
  'GET /v1/videos/{id}/content': {
    summary: 'A delivered video',
    success: content,
    errors: CONTENT,
  },
  'POST /v1/h3/tasks': {
    summary: 'Quote (200) or submit (202) an H3 task',
    success: { 200: { json: 'H3Quote' }, 202: { json: 'H3Task' } },
    errors: BILLED,
    idempotent: true,
  },
  'GET /v1/h3/tasks/{id}': {
    summary: 'Read an H3 task',
    success: { 200: { json: 'H3Task' } },
    errors: [...BASE, 502, 504],
  },
  'POST /v1/h3/tasks/{id}/settle': {
    summary: 'Settle an H3 task',
    success: { 200: { json: 'H3Task' } },
    errors: [...BODY, 402, 409],
    idempotent: true,
  },
  'GET /v1/h3/tasks/{id}/content': {
    summary: 'A delivered H3 video',
    success: content,
    errors: CONTENT,
  },
  'POST /v1/shares': {
    summary: 'Ask for a share',
    success: { 202: { json: 'Share' } },
    errors: [...BODY, 403, 409],
    idempotent: true,
  },
  'GET /v1/shares': {
    summary: 'This key’s shares',
    success: { 200: { json: 'ShareList' } },
    errors: BASE,
  },
  'GET /v1/shares/{id}': {
    summary: 'Read a share',
    success: { 200: { json: 'Share' } },
    errors: BASE,
  },
  'DELETE /v1/shares/{id}': {
    summary: 'Withdraw or revoke a share',
    success: { 200: { json: 'Share' } },
    errors: [...BASE, 409],
  },
  'GET /v1/account/usage': {
    summary: 'Spend per day and model',
    success: { 200: { json: 'AccountUsage' } },
    errors: BASE,
  },
  'POST /v1/assets': {
    summary: 'Upload an asset (raw body)',
    success: { 201: { json: 'AssetUpload' } },
    errors: [...BODY, 403, 409],
    idempotent: true,
    body: 'upload',
  },
  'GET /v1/assets': {
    summary: 'The account’s assets (personal keys)',
    success: { 200: { json: 'AssetList' } },
    errors: [...BASE, 403],
  },
  'GET /v1/assets/{id}/content': { summary: 'An asset’s bytes', success: content, errors: CONTENT },
  'DELETE /v1/assets/{id}': {
    summary: 'Delete an asset',
    success: { 200: { json: 'AssetDeleted' } },
    errors: [...BASE, 403, 409],
  },
};

/** The error codes a status stands for (`errorStatus`, one table). */
export function codesOf(status: number): string[] {
  return Object.entries(errorStatus)
    .filter(([, codeStatus]) => codeStatus === status)
    .map(([code]) => code);
}
