import type { RequestRecord, ResponseObject, ResponseOutputItem } from '@tollgate/protocol';
import { ApiError, invalidInput } from '../../../errors/api-error.js';
import type { ResponseTurns } from '../../../chat/response-turns.js';
import type { ResponsesInputItem } from './responses-request.js';
import { requestIdOfResponse } from './responses-answer.js';

/** A stored turn with its request record (read with the caller's key). */
export interface StoredResponse {
  readonly requestId: string;
  readonly items: ResponsesInputItem[];
  readonly echo: unknown;
  readonly record: RequestRecord;
}

/** The same 404 for a missing response, one kept with `store: false`, and another key's. */
export const responseNotFound = (param?: string) =>
  new ApiError('NOT_FOUND', 'no such response', param);

/**
 * Reads a stored response of this key: its turn (input conversation) and its record. Anything
 * else — no such id, `store: false`, another key's, a record already purged — is one 404.
 */
export async function readStoredResponse(
  responseId: string,
  keyId: string,
  reads: {
    turns: ResponseTurns;
    record: (requestId: string) => Promise<RequestRecord>;
  },
  param?: string,
): Promise<StoredResponse> {
  const requestId = requestIdOfResponse(responseId);
  if (requestId === undefined) throw responseNotFound(param);
  const turn = await reads.turns.read(requestId, keyId);
  if (turn === undefined) throw responseNotFound(param);
  const record = await reads.record(requestId).catch((error: unknown) => {
    throw error instanceof ApiError && error.code === 'NOT_FOUND' ? responseNotFound(param) : error;
  });
  return { requestId, items: turn.items as ResponsesInputItem[], echo: turn.echo, record };
}

/**
 * The conversation a new turn continues (`previous_response_id`): the stored turn's input, then
 * its output as input items. Only a response that completed can be continued.
 */
export function continuedConversation(stored: StoredResponse): ResponsesInputItem[] {
  if (stored.record.status !== 'succeeded')
    throw invalidInput(
      'previous_response_id',
      `names a response that did not complete (its request is ${stored.record.status}); continue from one that did`,
    );
  const response = stored.record.result as ResponseObject;
  return [...stored.items, ...response.output.map(asInputItem)];
}

function asInputItem(item: ResponseOutputItem): ResponsesInputItem {
  switch (item.type) {
    case 'message':
      return { type: 'message', role: 'assistant', content: item.content };
    case 'function_call':
      return {
        type: 'function_call',
        call_id: item.call_id,
        name: item.name,
        arguments: item.arguments,
      };
    case 'reasoning':
      return {
        type: 'reasoning',
        summary: item.summary,
        content: item.content ?? null,
        encrypted_content: item.encrypted_content ?? null,
      };
    case 'compaction':
      return { type: 'compaction', id: item.id, encrypted_content: item.encrypted_content };
  }
}
