import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ResponseObject } from '@tollgate/protocol';
import { Conversations } from '../../chat/conversations.js';
import { ResponseTurns } from '../../chat/response-turns.js';
import { staleAfterMs } from '../../requests/record-ages.js';
import { runChatTurn } from '../chat-turn.js';
import type { AppDeps } from '../deps.js';
import { judgedAtClaim } from '../idempotency-judgement.js';
import { principalOf } from '../plugins/authenticate.js';
import {
  continuedConversation,
  readStoredResponse,
} from '../dialects/responses/previous-response.js';
import {
  responseEcho,
  responseObject,
  type ResponseEcho,
} from '../dialects/responses/responses-answer.js';
import { responsesDialect } from '../dialects/responses/responses-dialect.js';
import { compactionTurnDialect } from '../dialects/responses/compaction-events.js';
import {
  inputItems,
  parseResponsesBody,
  type ResponsesBody,
} from '../dialects/responses/responses-request.js';
import { renamedField, responsesToChat } from '../dialects/responses/responses-to-chat.js';
import {
  compactionCall,
  compactionDialect,
  compactionRequest,
} from '../dialects/responses/responses-compact.js';
import { invalidInput, type ApiError } from '../../errors/api-error.js';

/**
 * The OpenAI Responses API (docs/agents.md): `POST /v1/responses` is a chat turn like any other
 * (one record, one hold, one exact charge), translated to the internal chat request and answered
 * as a response object or its event stream; `GET /v1/responses/{id}` and `previous_response_id`
 * read the turns Tollgate stored, for the key that made them only.
 */
export function registerResponses(scope: FastifyInstance, deps: AppDeps): void {
  const conversations = new Conversations(deps.store.db, deps.clock, staleAfterMs(deps.config));
  const turns = new ResponseTurns(deps.store.db, deps.clock);
  scope.post(
    '/v1/responses',
    judgedAtClaim(deps.requests.records, {}, async (request, reply) => {
      const body = parseResponsesBody(request.body);
      const principal = principalOf(request);
      const { history, own, translated, compacting } = await conversationOf(request, body);
      const echo = responseEcho(body);
      try {
        return await runChatTurn(deps, conversations, request, reply, {
          // Codex's in-stream compaction: a summary turn answered as one compaction item.
          body: compacting ? compactionRequest(translated.body) : translated.body,
          dialect: compacting ? compactionTurnDialect(echo) : responsesDialect(echo),
          dropped: translated.dropped,
          opaque: translated.opaque,
          inCallerTerms: (error) =>
            renamedField(error, (field) => translated.fieldName(field)) as ApiError,
          // A compaction turn is not a response to continue from: nothing is kept for it.
          ...(body.store === false || compacting
            ? {}
            : {
                beforeUpstream: () =>
                  turns.keep(request.id, principal.keyId, { items: [...history, ...own], echo }),
              }),
        });
      } catch (error) {
        throw renamedField(error, (field) => translated.fieldName(field));
      }
    }),
  );

  /**
   * The stored turns a body continues, its own items, and both as the internal chat body; a
   * `compaction_trigger` ending the input is taken off it and says the turn is a compaction.
   */
  async function conversationOf(request: FastifyRequest, body: ResponsesBody) {
    const principal = principalOf(request);
    const history =
      body.previous_response_id === undefined || body.previous_response_id === null
        ? []
        : continuedConversation(
            await readStoredResponse(
              body.previous_response_id,
              principal.keyId,
              { turns, record: (id) => deps.requests.read(principal, id) },
              'previous_response_id',
            ),
          );
    const items = inputItems(body);
    const compacting = items.at(-1)?.type === 'compaction_trigger';
    const own = compacting ? items.slice(0, -1) : items;
    const translated = responsesToChat(body, [
      ...history.map((item) => ({ item, path: 'previous_response_id' })),
      ...own.map((item, index) => ({
        item,
        path: typeof body.input === 'string' ? 'input' : `input.${index}`,
      })),
    ]);
    return { history, own, translated, compacting };
  }

  // Codex CLI's compaction of a long session (responses-compact.ts): one billed turn, never
  // streamed, nothing stored for previous_response_id (the caller keeps the compacted items).
  scope.post(
    '/v1/responses/compact',
    judgedAtClaim(deps.requests.records, {}, async (request, reply) => {
      const body = parseResponsesBody(request.body);
      if (body.stream === true)
        throw invalidInput('stream', 'a compaction is answered whole: leave stream out');
      const { history, own, translated } = await conversationOf(request, body);
      try {
        return await runChatTurn(deps, conversations, request, reply, {
          body: compactionRequest(translated.body),
          dialect: compactionDialect,
          dropped: translated.dropped,
          opaque: translated.opaque,
          inCallerTerms: (error) =>
            renamedField(error, (field) => translated.fieldName(field)) as ApiError,
          call: compactionCall(request.id, [...history, ...own]),
        });
      } catch (error) {
        throw renamedField(error, (field) => translated.fieldName(field));
      }
    }),
  );

  scope.get<{ Params: { id: string } }>('/v1/responses/:id', async (request) => {
    const principal = principalOf(request);
    const stored = await readStoredResponse(request.params.id, principal.keyId, {
      turns,
      record: (id) => deps.requests.read(principal, id),
    });
    const { record } = stored;
    if (record.status === 'succeeded') return record.result;
    // No answer yet, or none to give: the response object says so, with the record's error.
    const names = {
      requestId: stored.requestId,
      model: record.model ?? '',
      created: Math.floor(Date.parse(record.created_at) / 1000),
    };
    return responseObject(stored.echo as ResponseEcho, names, {
      status: record.status === 'processing' ? 'in_progress' : 'failed',
      incomplete_details: null,
      error:
        record.status === 'processing'
          ? null
          : record.error !== null
            ? { code: record.error.code, message: record.error.message }
            : {
                code: 'INSUFFICIENT_FUNDS',
                message: `the answer awaits funds: read or settle it at /v1/requests/${stored.requestId}`,
              },
      output: [],
      usage: null,
    }) satisfies ResponseObject;
  });
}
